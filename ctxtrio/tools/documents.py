"""The doc_* tools: rows of the tool table over :class:`~ctxtrio.docs.DocumentService`.

Descriptions are short and prescriptive (the whole tools/list must stay small in an
8k window); values are checked by the service, whose InputError messages say how to fix
the call. Results are compact text (:mod:`ctxtrio.docs.render`) plus a few facts as
structured content; a search, a window and an outline come rendered by the service
(``rendered``: the text it counted against the budget), so they are rendered once.

``doc_window``, ``doc_outline`` and ``doc_summarize`` take a parameter named ``from``
(a Python keyword, which is why the handlers read it by name from :class:`Args`), and
``to``: the library's ``start`` and ``end``. The service checks them, inside
:func:`~ctxtrio._limits.calling`, so its errors say ``from``/``to``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._limits import CHUNK_INDEX, OUTLINE_CHUNKS, SEARCH_LIMIT, SUMMARY_TARGET, calling, check_range
from ..docs import render
from ..docs.model import DocSummary, DocumentInfo, IngestResult, Outline, SearchHit, SearchResult, Window
from .deadline import llm_deadline
from .output import Output
from .results import ToolResult, text_result
from .spec import BUDGET_PARAM, Args, Call, Hints, Param, Tool

if TYPE_CHECKING:
    from .._wiring import Wiring

__all__ = ["DOC_TABLE", "DOC_TOOLS"]

_DOC = Param("doc_id", "string", required=True)
_FROM = Param("from", "integer", bounds=CHUNK_INDEX)
_TO = Param("to", "integer", bounds=CHUNK_INDEX)
_READ = Hints(read_only=True, idempotent=True)
_AUDIT = ("doc_id",)


@dataclass(frozen=True, slots=True)
class DocPage:
    """One page of doc_list: the documents shown, how many there are, where the next page starts."""

    docs: tuple[DocumentInfo, ...]
    total: int
    next_offset: int | None


_INGESTED = Output(IngestResult, ("doc_id=doc.doc_id", "chunks=doc.chunks", "tokens=doc.tokens", "replaced"))
_OUTLINE = Output(Outline, ("doc_id=doc.doc_id", "chunks=doc.chunks", "start", "remaining"))
_FOUND = Output(
    SearchResult,
    ("hits", "omitted", "more", "used_tokens"),
    items={"hits": Output(SearchHit, ("doc_id", "index", "score", "cut"))},
)
_WINDOW = Output(Window, ("doc_id=doc.doc_id", "chunks=chunks.index", "next=next_from", "at_end"))
_SUMMARY = Output(DocSummary, ("doc_id=doc.doc_id", "start", "end", "method", "cached"))
_DOCS = Output(DocPage, ("doc_ids=docs.doc_id", "total", "next_offset"))
_FORGOTTEN = Output(DocumentInfo, ("doc_id",))


def _write(*, destructive: bool, idempotent: bool) -> Hints:
    return Hints(read_only=False, destructive=destructive, idempotent=idempotent)


async def doc_ingest(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    text, file_path, title = args.opt_text("text"), args.opt_text("file_path"), args.opt_text("title")
    # Every field filled, the unused ones blank (text='' beside a file_path): the one given is meant, where
    # "pass exactly one of text or file_path" refused a call that gave one. A blank one alone is still refused.
    if file_path is not None and file_path.strip() and text is not None and not text.strip():
        text = None
    elif text is not None and text.strip() and file_path is not None and not file_path.strip():
        file_path = None
    result = await ctx.documents.ingest(
        text=text,
        file_path=file_path,
        title=title if title is None or title.strip() else None,  # a blank title: the file's name, as none
        doc_id=args.opt_text("doc_id"),
        progress=call.progress,
    )
    call.ids["doc_id"] = result.doc.doc_id
    return text_result(render.render_ingest(result), _INGESTED.dump(result))


async def doc_outline(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    doc_id = args.text("doc_id")
    with calling(start="from"):
        outline = await ctx.documents.outline(
            doc_id,
            summarize=args.flag("summarize"),
            start=args.opt_integer("from") or 0,
            max_chunks=args.integer("max_chunks"),
            wait=llm_deadline(ctx),
        )
    return text_result(outline.rendered, _OUTLINE.dump(outline))


async def doc_search(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.documents.search(
        args.text("query"),
        doc_id=args.opt_text("doc_id"),
        budget_tokens=args.opt_integer("budget_tokens"),
        limit=args.integer("limit"),
    )
    return text_result(result.rendered, _FOUND.dump(result))


async def doc_window(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    doc_id = args.text("doc_id")
    with calling(start="from", end="to"):
        window = await ctx.documents.window(
            doc_id,
            start=args.opt_integer("from"),
            end=args.opt_integer("to"),
            budget_tokens=args.opt_integer("budget_tokens"),
            reset=args.flag("reset"),
            session_id=args.opt_text("session_id"),
        )
    return text_result(window.rendered, _WINDOW.dump(window))


async def doc_summarize(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    doc_id = args.text("doc_id")
    with calling(start="from", end="to"):
        summary = await ctx.documents.summarize(
            doc_id,
            start=args.opt_integer("from"),
            end=args.opt_integer("to"),
            target_tokens=args.integer("target_tokens"),
            refresh=args.flag("refresh"),
            progress=call.progress,
            wait=llm_deadline(ctx),
        )
    return text_result(render.render_summary(summary), _SUMMARY.dump(summary))


async def doc_list(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    start = args.opt_integer("from") or 0
    check_range("from", start, CHUNK_INDEX)  # an offset into the list: this tool's own, no service checks it
    infos = await ctx.documents.list_documents()
    text, shown, next_offset = render.render_list_page(
        infos, offset=start, budget_tokens=ctx.live.budget_tokens, model=ctx.live.tokens.current
    )
    page = DocPage(tuple(infos[start : start + shown]), len(infos), next_offset)
    return text_result(text, _DOCS.dump(page))


async def doc_forget(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    doc_id = args.text("doc_id")
    info = await ctx.documents.forget(doc_id)
    return text_result(render.render_forget(info), _FORGOTTEN.dump(info))


DOC_TABLE: tuple[Tool, ...] = (
    Tool(
        name="doc_ingest",
        title="Ingest document",
        description="Store text, or a file under an ingest root, too large to read at once; returns doc_id "
        "and size, not the text. An existing doc_id is replaced.",
        params=(
            Param("text", "string"),
            Param("file_path", "string"),
            Param("title", "string"),
            Param("doc_id", "string"),
        ),
        handler=doc_ingest,
        output=_INGESTED,
        hints=_write(destructive=True, idempotent=False),
        audit=_AUDIT,
    ),
    Tool(
        name="doc_outline",
        title="Document outline",
        description="Chunks of a document: #index, [tokens], heading trail. summarize=true adds a sentence each.",
        params=(
            _DOC,
            Param("summarize", "boolean", default=False),
            Param("max_chunks", "integer", default=200, bounds=OUTLINE_CHUNKS),
            _FROM,
        ),
        handler=doc_outline,
        output=_OUTLINE,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="doc_search",
        title="Search documents",
        description="Keyword search in one document (doc_id) or all; returns passages, best first, "
        "within budget_tokens.",
        params=(
            Param("query", "string", required=True),
            Param("doc_id", "string"),
            BUDGET_PARAM,
            Param("limit", "integer", default=10, bounds=SEARCH_LIMIT),
        ),
        handler=doc_search,
        output=_FOUND,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="doc_window",
        title="Read document",
        description="Read a document in order from your cursor (or from..to) within budget_tokens; the cursor "
        "advances. Pass your open session's session_id for your own cursor; reset=true restarts.",
        params=(
            _DOC,
            _FROM,
            _TO,
            BUDGET_PARAM,
            Param("reset", "boolean", default=False),
            Param("session_id", "string"),
        ),
        handler=doc_window,
        output=_WINDOW,
        hints=_write(destructive=False, idempotent=False),
        audit=("doc_id", "session_id"),
    ),
    Tool(
        name="doc_summarize",
        title="Summarize document",
        description="Summary of a document, or of chunks from..to. The whole-document summary is cached; "
        "refresh=true redoes it.",
        params=(
            _DOC,
            _FROM,
            _TO,
            Param("target_tokens", "integer", default=500, bounds=SUMMARY_TARGET),
            Param("refresh", "boolean", default=False),
        ),
        handler=doc_summarize,
        output=_SUMMARY,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="doc_list",
        title="Documents",
        description="Stored documents.",
        params=(_FROM,),
        handler=doc_list,
        output=_DOCS,
        hints=_READ,
    ),
    Tool(
        name="doc_forget",
        title="Delete document",
        description="Delete a document with its index and cursors. Irreversible.",
        params=(_DOC,),
        handler=doc_forget,
        output=_FORGOTTEN,
        hints=_write(destructive=True, idempotent=True),
        audit=_AUDIT,
    ),
)

#: The names of the document tools, in table order.
DOC_TOOLS: tuple[str, ...] = tuple(tool.name for tool in DOC_TABLE)
