"""The compact tool profile (``--tools compact``): five tools for a model with a 4k-8k window.

The full table (:mod:`.table`) costs a small model about 1.7k tokens of its window just
to list. This profile keeps what a small model needs, as rows of the same kind, and
runs the full table's handlers underneath: its own arguments are parsed once (same kinds as
the full tool's), the full tool's defaults fill in the rest, and every bound is the
full tool's service's check:

* ``context_guide`` — the compact workflow and this instance's settings;
* ``memory`` — append a note and/or recall, in one call (context_append + context_recall);
* ``context_compact`` — the full tool, and ``undo`` (the full profile's context_update restore=true on a summary);
* ``doc_ingest`` — the full tool (likewise);
* ``doc_read`` — search (with ``query``) or read in order (context of doc_search + doc_window).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from .._errors import InputError
from .._limits import BUDGET, CHUNK_INDEX, calling, check_range
from .documents import DOC_TABLE
from .guide import guide_text
from .results import ToolResult, text_result
from .sessions import SESSION_TABLE
from .spec import BUDGET_PARAM, Args, Call, Hints, Param, Tool, parsed_for

if TYPE_CHECKING:
    from .._wiring import Wiring
    from ..store.records import JSON

__all__ = ["COMPACT_TOOLS", "COMPACT_WORKFLOW"]

_FULL = {tool.name: tool for tool in (*SESSION_TABLE, *DOC_TABLE)}

COMPACT_WORKFLOW = """\
ctxtrio keeps what does not fit in your window. Nothing is automatic: call it.
1. memory with your session_id: note=... stores a fact or decision (pinned=true for goals and constraints); query=... recalls what matters, pins first. Both at once is fine.
2. context_compact when memory says to compact (undo=<summary id> brings its entries back).
3. doc_ingest large text once; then doc_read: query=... finds chunks (doc_id optional), or doc_id alone reads on from your cursor.
Never paste a whole document into a note: ingest it."""


#: What the full tools' head lines say that names a tool or argument this profile lacks, and what they
#: say here instead. Each replacement is shorter than what it replaces: doc_read's answers were fitted
#: to budget_tokens as the full tools rendered them, so they stay within it.
_OWN_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Next: doc_outline, doc_search or doc_window with doc_id=(\S+)\."), r"Next: doc_read with doc_id=\1."),
    (re.compile(r" \(call doc_window again\)\."), " (call doc_read again)."),
    (re.compile(r"\(reset=true starts over\)"), "(from=0 starts over)"),
    (re.compile(r"Start over with reset=true, or pass from=N\."), "Start over with from=0."),
    (re.compile(r" Whole: doc_window \[doc_id #from\]\."), " Whole: doc_read [doc_id #from]."),
    (re.compile(r" Undo: context_update entry_id=(\S+) restore=true\."), r" Undo: context_compact undo=\1."),
    (re.compile(r"restore=true on (\S+) (undoes|retires)"), r"context_compact undo=\1 \2"),
    (re.compile(r" Try other words, or doc_outline to see the structure\."), " Try other words."),
)


#: A recall's closing line naming a folded entry's restore (memory/packing._trailer): this profile undoes the
#: compaction instead, which brings that entry back with the rest it folds. Shorter, as _OWN_WORDS are.
_FOLDED_RESTORE: Final = re.compile(r"folded into (\S+) by a compaction: context_update entry_id=\S+ restore=true")


def _undo_named(recalled: str) -> str:
    """``recalled`` with its closing line (the one starting "(no unpinned entry matches") naming this profile's undo;
    the entries' lines, stored text, are never rewritten."""
    head, found, closing = recalled.rpartition("(no unpinned entry matches")
    if not found or head[-1:] not in ("", "\n"):
        return recalled
    return head + found + _FOLDED_RESTORE.sub(r"folded into \1 by a compaction: context_compact undo=\1", closing)


def _in_own_words(result: ToolResult) -> ToolResult:
    """``result`` with its first line (the head that says what to call next; below it is the stored text,
    never rewritten) naming this profile's tools, not the full profile's."""
    head, newline, rest = result.text.partition("\n")
    for pattern, words in _OWN_WORDS:
        head = pattern.sub(words, head)
    return replace(result, text=head + newline + rest)


async def _run(name: str, ctx: Wiring, given: dict[str, JSON], call: Call) -> ToolResult:
    """The full tool ``name``'s handler on arguments this profile already parsed (None: its default),
    its answer in this profile's words."""
    return await _as_full(name, ctx, parsed_for(_FULL[name].params, given), call)


async def _as_full(name: str, ctx: Wiring, args: Args, call: Call) -> ToolResult:
    """The full tool ``name`` with its own arguments, its answer in this profile's words."""
    return _in_own_words(await _FULL[name].handler(ctx, args, call))


async def compact_compact(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    undo = _given(args.opt_text("undo"))
    if undo is None:
        return await _as_full("context_compact", ctx, args, call)
    if args.opt_flag("dry_run"):
        # An undo has no preview: ignoring dry_run would do at once what was asked to be shown first.
        raise InputError(
            f"undo={undo} with dry_run=true: an undo has no preview (context_recall shows the summary and the "
            "entries it folds). Nothing was done."
        )
    # The full profile undoes a compaction with context_update restore=true on its summary, a tool
    # this profile lacks: without undo a small model could fold its notes and never get them back.
    with calling(entry_id="undo"):
        return await _run(
            "context_update", ctx, {"session_id": args.text("session_id"), "entry_id": undo, "restore": True}, call
        )


async def compact_ingest(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    return await _as_full("doc_ingest", ctx, args, call)


async def compact_guide(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    text = guide_text(ctx)
    settings = text[text.index("\nSettings:") :] if "\nSettings:" in text else ""
    return text_result(
        COMPACT_WORKFLOW + settings, {"data_dir": str(ctx.data.root), "budget_tokens": ctx.live.budget_tokens}
    )


def _given(value: str | None) -> str | None:
    """``value``, or None when blank: a small model fills every field, sending '' for what it does not mean."""
    return value if value is None or value.strip() else None


async def memory(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    session_id, note, query = args.text("session_id"), args.opt_text("note"), args.opt_text("query")
    if _given(query) is not None:  # a blank note beside a query is none: recall only (a blank one alone is refused)
        note = _given(note)
    parts: list[ToolResult] = []
    if note is not None:
        # The note is written before the recall that spends the budget: a bad budget
        # refuses the whole call here, so nothing is stored (with a query, the recall checks it again).
        check_range("budget_tokens", args.opt_integer("budget_tokens"), BUDGET)
        with calling(text="note"):  # "text is empty" named an argument memory does not have
            parts.append(
                await _run(
                    "context_append", ctx, {"session_id": session_id, "text": note, "pinned": args.flag("pinned")}, call
                )
            )
    if query is not None or note is None:
        recalled = await _run(
            "context_recall",
            ctx,
            {"session_id": session_id, "query": query, "budget_tokens": args.opt_integer("budget_tokens")},
            call,
        )
        parts.append(replace(recalled, text=_undo_named(recalled.text)))
    structured: dict[str, JSON] = {}
    for part, key in zip(parts, ("stored", "recalled") if note is not None else ("recalled",)):
        if part.structured is not None:
            structured[key] = part.structured
    return ToolResult("\n".join(part.text for part in parts), structured, any(part.is_error for part in parts))


async def doc_read(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    query, doc_id, budget = args.opt_text("query"), args.opt_text("doc_id"), args.opt_integer("budget_tokens")
    if doc_id is not None:  # a blank query beside a doc_id is none: read it in order
        query = _given(query)
    if query is not None:
        return await _run("doc_search", ctx, {"query": query, "doc_id": doc_id, "budget_tokens": budget}, call)
    if doc_id is None:  # doc_window's "doc_id is required" would hide that a query alone is enough
        raise InputError("give query to search every document, or doc_id to read one in order")
    return await _run(
        "doc_window",
        ctx,
        {
            "doc_id": doc_id,
            "from": args.opt_integer("from"),
            "budget_tokens": budget,
            "session_id": args.opt_text("session_id"),
        },
        call,
    )


COMPACT_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="context_guide",
        title="How to use ctxtrio",
        description="Read first: the workflow and this server's settings.",
        params=(),
        handler=compact_guide,
        hints=Hints(read_only=True, idempotent=True),
    ),
    Tool(
        name="memory",
        title="Store and recall",
        description="Your working memory. note: store it (pinned=true for goals). query: recall the best "
        "matches, pins first. Neither: recent entries.",
        params=(
            Param("session_id", "string", required=True),
            Param("note", "string"),
            Param("pinned", "boolean", default=False),
            Param("query", "string"),
            BUDGET_PARAM,
        ),
        handler=memory,
        hints=Hints(read_only=False, destructive=False, idempotent=False),
        audit=("session_id",),
    ),
    replace(
        _FULL["context_compact"],
        # The full description's "When context_status advises" and "restore it" name tools this profile lacks.
        description="When memory advises: fold old unpinned entries into a summary. undo=<summary id> undoes one.",
        params=(*_FULL["context_compact"].params, Param("undo", "string")),
        handler=compact_compact,
        output=None,  # an undo answers as context_update does, which the full tool's outputSchema would refuse
    ),
    replace(_FULL["doc_ingest"], handler=compact_ingest),
    Tool(
        name="doc_read",
        title="Search or read a document",
        description="query: matching chunks (of doc_id, or all). No query: read doc_id in order from your "
        "cursor (or from), within budget_tokens.",
        params=(
            Param("query", "string"),
            Param("doc_id", "string"),
            Param("from", "integer", bounds=CHUNK_INDEX),
            BUDGET_PARAM,
            Param("session_id", "string"),
        ),
        handler=doc_read,
        hints=Hints(read_only=False, destructive=False, idempotent=False),
        audit=("doc_id",),
    ),
)
