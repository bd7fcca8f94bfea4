"""The doc_* tools: thin wrappers over :class:`~ctxtrio.docs.DocumentService`.

Descriptions are short and prescriptive (the whole tools/list must stay small in an
8k window); parameter schemas are hand-written and compact; values are checked by the
service, whose InputError messages say how to fix the call. Results are compact text
(:mod:`ctxtrio.docs.render`) plus a few facts as structured content.

``doc_window``, ``doc_outline`` and ``doc_summarize`` take a parameter named ``from``,
a Python keyword: it is declared as ``from_`` with pydantic's ``validation_alias``, so
the SDK validates ``{"from": 3}`` and the advertised schema says ``from``.
"""

from __future__ import annotations

from typing import Annotated, Any

import trio
from mcp.server.mcpserver import Context as RequestContext
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, WithJsonSchema

from .._context import Context
from ..docs import render
from ..docs.model import DocumentInfo
from ..store.records import JSON
from .calls import ToolCalls
from .results import text_result

__all__ = ["DOC_TOOLS", "register_document_tools"]

DOC_TOOLS = ("doc_ingest", "doc_outline", "doc_search", "doc_window", "doc_summarize", "doc_list", "doc_forget")


def _schema(kind: str, **extra: Any) -> Any:
    return WithJsonSchema({"type": kind, **extra})


_Str = Annotated[str, _schema("string")]
_OptStr = Annotated[str | None, _schema("string")]
_Flag = Annotated[bool, _schema("boolean")]
_From = Annotated[int | None, Field(validation_alias="from"), _schema("integer", minimum=0)]
_To = Annotated[int | None, _schema("integer", minimum=0)]
_Budget = Annotated[int | None, _schema("integer", minimum=50, maximum=100000)]

_READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def _write(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
    )


def register_document_tools(server: MCPServer, ctx: Context, calls: ToolCalls) -> None:
    """Register doc_ingest, doc_outline, doc_search, doc_window, doc_summarize, doc_list, doc_forget."""
    docs = ctx.documents
    deadline_s = ctx.config.llm_deadline_s

    @server.tool(
        name="doc_ingest",
        title="Ingest document",
        description="Store text, or a file under an ingest root, too large to read at once; returns doc_id "
        "and size, not the text. An existing doc_id is replaced.",
        annotations=_write(destructive=True, idempotent=False),
    )
    async def doc_ingest(
        request: RequestContext,
        text: _OptStr = None,
        file_path: _OptStr = None,
        title: _OptStr = None,
        doc_id: _OptStr = None,
    ) -> CallToolResult:
        with calls.call("doc_ingest", doc_id=doc_id) as box:
            result = await docs.ingest(
                text=text, file_path=file_path, title=title, doc_id=doc_id, progress=request.report_progress
            )
            box.ids["doc_id"] = result.doc.doc_id
            box.result = text_result(render.render_ingest(result), _info(result.doc, replaced=result.replaced))
        return box.result

    @server.tool(
        name="doc_outline",
        title="Document outline",
        description="Chunks of a document: #index, [tokens], heading trail. summarize=true adds a sentence each.",
        annotations=_READ,
    )
    async def doc_outline(
        doc_id: _Str,
        summarize: _Flag = False,
        max_chunks: Annotated[int, _schema("integer", minimum=1, maximum=500)] = 200,
        from_: _From = None,
    ) -> CallToolResult:
        with calls.call("doc_outline", doc_id=doc_id) as box:
            stop_at = trio.current_time() + deadline_s
            outline = await docs.outline(
                doc_id, summarize=summarize, start=from_ or 0, max_chunks=max_chunks, stop_at=stop_at
            )
            structured: dict[str, JSON] = {"doc_id": doc_id, "chunks": outline.doc.chunks, "shown": len(outline.entries)}
            box.result = text_result(render.render_outline(outline), structured)
        return box.result

    @server.tool(
        name="doc_search",
        title="Search documents",
        description="Keyword search in one document (doc_id) or all; returns verbatim chunks, best first, "
        "within budget_tokens.",
        annotations=_READ,
    )
    async def doc_search(
        query: _Str,
        doc_id: _OptStr = None,
        budget_tokens: _Budget = None,
        limit: Annotated[int, _schema("integer", minimum=1, maximum=50)] = 10,
    ) -> CallToolResult:
        with calls.call("doc_search", doc_id=doc_id) as box:
            result = await docs.search(query, doc_id=doc_id, budget_tokens=budget_tokens, limit=limit)
            hits: list[JSON] = [[hit.doc_id, hit.index, round(hit.score, 3)] for hit in result.hits]
            structured: dict[str, JSON] = {"hits": hits, "omitted": result.omitted}
            box.result = text_result(render.render_search(result), structured)
        return box.result

    @server.tool(
        name="doc_window",
        title="Read document",
        description="Read a document in order from your cursor (or from..to) within budget_tokens; the cursor "
        "advances. Use your session_id for your own cursor; reset=true restarts.",
        annotations=_write(destructive=False, idempotent=False),
    )
    async def doc_window(
        doc_id: _Str,
        from_: _From = None,
        to: _To = None,
        budget_tokens: _Budget = None,
        reset: _Flag = False,
        session_id: _OptStr = None,
    ) -> CallToolResult:
        with calls.call("doc_window", doc_id=doc_id, session_id=session_id) as box:
            window = await docs.window(
                doc_id, start=from_, end=to, budget_tokens=budget_tokens, reset=reset, session_id=session_id
            )
            shown: list[JSON] = [chunk.index for chunk in window.chunks]
            structured: dict[str, JSON] = {"doc_id": doc_id, "chunks": shown, "next": window.next_index}
            box.result = text_result(render.render_window(window), structured)
        return box.result

    @server.tool(
        name="doc_summarize",
        title="Summarize document",
        description="Summary of a document, or of chunks from..to. The whole-document summary is cached; "
        "refresh=true redoes it.",
        annotations=_READ,
    )
    async def doc_summarize(
        doc_id: _Str,
        from_: _From = None,
        to: _To = None,
        target_tokens: Annotated[int, _schema("integer", minimum=50, maximum=8000)] = 500,
        refresh: _Flag = False,
    ) -> CallToolResult:
        with calls.call("doc_summarize", doc_id=doc_id) as box:
            stop_at = trio.current_time() + deadline_s
            summary = await docs.summarize(
                doc_id, start=from_, end=to, target_tokens=target_tokens, refresh=refresh, stop_at=stop_at
            )
            structured: dict[str, JSON] = {"doc_id": doc_id, "method": summary.method, "cached": summary.cached}
            box.result = text_result(render.render_summary(summary), structured)
        return box.result

    @server.tool(name="doc_list", title="List documents", description="Stored documents and their sizes.", annotations=_READ)
    async def doc_list() -> CallToolResult:
        with calls.call("doc_list") as box:
            infos = await docs.list_documents()
            ids: list[JSON] = [info.doc_id for info in infos]
            box.result = text_result(render.render_list(infos), {"doc_ids": ids})
        return box.result

    @server.tool(
        name="doc_forget",
        title="Delete document",
        description="Delete a document with its index and cursors. Irreversible.",
        annotations=_write(destructive=True, idempotent=True),
    )
    async def doc_forget(doc_id: _Str) -> CallToolResult:
        with calls.call("doc_forget", doc_id=doc_id) as box:
            info = await docs.forget(doc_id)
            box.result = text_result(render.render_forget(info), {"doc_id": doc_id})
        return box.result



def _info(info: DocumentInfo, *, replaced: bool) -> dict[str, JSON]:
    return {"doc_id": info.doc_id, "chunks": info.chunks, "tokens": info.tokens, "replaced": replaced}


