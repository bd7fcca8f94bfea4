"""The context_* tools: rows of the tool table over :class:`~ctxtrio.memory.SessionService`.

Descriptions are prescriptive and short (the whole tools/list must stay small in an
8k window); argument checks live in the service, which raises InputError with the
fix. Results are compact text (:mod:`ctxtrio.memory.render`) plus the same facts as
structured content; a recall comes rendered by the service (``rendered``: the text it
counted against the budget), so it is rendered once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._limits import COMPACT_TARGET, KEEP_RECENT, MAX_TAGS, RECALL_LIMIT
from ..docs.embedding import describe_semantic
from ..memory import render
from ..memory.arguments import check_role
from ..memory.model import (
    ROLES,
    Appended,
    CompactResult,
    OpenResult,
    RecallResult,
    SessionInfo,
    SessionPage,
    SessionStatus,
    UpdateResult,
)
from ..memory.status import DEFAULT_KEEP_RECENT, DEFAULT_TARGET_TOKENS
from .deadline import llm_deadline
from .output import Output
from .results import ToolResult, text_result
from .spec import BUDGET_PARAM, Args, Call, Hints, Param, Tool

if TYPE_CHECKING:
    from .._wiring import Wiring

__all__ = ["SESSION_TABLE", "SESSION_TOOLS"]

_SID = Param("session_id", "string", required=True)
_READ = Hints(read_only=True)
_AUDIT = ("session_id",)


_OPENED = Output(OpenResult, ("session_id=status.session_id", "created", "advice=status.advice"))
_APPENDED = Output(Appended, ("id=entry.id", "duplicate", "live_tokens=status.live_tokens", "advice=status.advice"))
_RECALLED = Output(RecallResult, ("ids=entries.id", "matched", "not_fit", "used_tokens", "mode"))
_COMPACTED = Output(CompactResult, ("folded", "summary_id=summary.id", "tokens_before", "tokens_after", "method"))
_STATUS = Output(
    SessionStatus, ("session_id", "live_entries", "live_tokens", "budget_tokens", "pinned", "advice", "warnings")
)
_UPDATED = Output(UpdateResult, ("id=entry.id", "status=entry.status", "changed", "restored"))
_SESSIONS = Output(
    SessionPage,
    ("sessions", "total", "next_offset"),
    items={"sessions": Output(SessionInfo, ("id=session_id", "title", "live_entries"))},
)


def _write(*, idempotent: bool) -> Hints:
    return Hints(read_only=False, destructive=False, idempotent=idempotent)


async def context_open(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.open(args.opt_text("session_id"), args.opt_text("title"))
    return text_result(render.render_opened(result), _OPENED.dump(result))


async def context_append(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.append(
        args.text("session_id"),
        args.text("text"),
        role=check_role(args.text("role")),
        tags=args.strings("tags"),
        pinned=args.flag("pinned"),
    )
    return text_result(render.render_appended(result), _APPENDED.dump(result))


async def context_recall(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.recall(
        args.text("session_id"),
        args.opt_text("query"),
        budget_tokens=args.opt_integer("budget_tokens"),
        limit=args.opt_integer("limit"),
        tags=args.strings("tags"),
    )
    return text_result(result.rendered, _RECALLED.dump(result))


async def context_compact(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.compact(
        args.text("session_id"),
        keep_recent=args.integer("keep_recent"),
        target_tokens=args.integer("target_tokens"),
        dry_run=args.flag("dry_run"),
        wait=llm_deadline(ctx),
    )
    return text_result(render.render_compacted(result), _COMPACTED.dump(result))


async def context_status(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    status = await ctx.sessions.status(args.text("session_id"))
    text = render.render_status(status)
    if ctx.documents.semantic is not None:  # said only when on: a status is read often
        text += "\n" + describe_semantic(ctx.documents.semantic.status())
    if ctx.sessions.semantic is not None:
        text += "\n" + ctx.sessions.semantic.describe()
    return text_result(text, _STATUS.dump(status))


async def context_update(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.update(
        args.text("session_id"),
        args.text("entry_id"),
        pinned=args.opt_flag("pinned"),
        delete=args.opt_flag("delete"),
        restore=args.opt_flag("restore"),
    )
    return text_result(render.render_updated(result), _UPDATED.dump(result))


async def context_list_sessions(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    page = await ctx.sessions.page_sessions(offset=args.opt_integer("offset") or 0)
    if not page.total:
        return text_result("No sessions yet: context_open starts one.", _SESSIONS.dump(page))
    return text_result(page.text.rstrip("\n"), _SESSIONS.dump(page))


SESSION_TABLE: tuple[Tool, ...] = (
    Tool(
        name="context_open",
        title="Open session",
        description="Start or resume a task's session.",
        params=(Param("session_id", "string", description="omit: new"), Param("title", "string")),
        handler=context_open,
        output=_OPENED,
        hints=_write(idempotent=True),
        audit=_AUDIT,
    ),
    Tool(
        name="context_append",
        title="Append",
        description="Store each fact, decision or dead end as you go. Pin goals, constraints, preferences (few).",
        params=(
            _SID,
            Param("text", "string", required=True),
            Param("role", "string", default="note", description="|".join(ROLES)),
            Param("tags", "array", description=f"max {MAX_TAGS}"),
            Param("pinned", "boolean", default=False),
        ),
        handler=context_append,
        output=_APPENDED,
        hints=_write(idempotent=True),
        audit=_AUDIT,
    ),
    Tool(
        name="context_recall",
        title="Recall",
        # Tags are not searched by query (a tag is a filter, not a word of the entry): said, lest a
        # model put its tags in the query ("past work" for "earlier work": tools/list stays under 9,800).
        description="Before acting on past work: pins, then best matches within budget_tokens. "
        "query searches the text (none: latest); tags filters: any of.",
        params=(
            _SID,
            Param("query", "string"),
            BUDGET_PARAM,
            Param("limit", "integer", bounds=RECALL_LIMIT),
            Param("tags", "array"),
        ),
        handler=context_recall,
        output=_RECALLED,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="context_compact",
        title="Compact",
        description="When context_status advises: fold old unpinned entries into a summary (undo: restore it).",
        params=(
            _SID,
            Param("keep_recent", "integer", default=DEFAULT_KEEP_RECENT, bounds=KEEP_RECENT),
            Param("target_tokens", "integer", default=DEFAULT_TARGET_TOKENS, bounds=COMPACT_TARGET),
            Param("dry_run", "boolean", default=False),
        ),
        handler=context_compact,
        output=_COMPACTED,
        hints=_write(idempotent=False),
        audit=_AUDIT,
    ),
    Tool(
        name="context_status",
        title="Status",
        description="Tokens vs budget, pins, whether to compact.",
        params=(_SID,),
        handler=context_status,
        output=_STATUS,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="context_update",
        title="Update entry",
        description="Set one: pinned, delete, or restore (deleted/superseded entry; a summary: undo it).",
        params=(
            _SID,
            Param("entry_id", "string", required=True),
            Param("pinned", "boolean"),
            Param("delete", "boolean"),
            Param("restore", "boolean"),
        ),
        handler=context_update,
        output=_UPDATED,
        hints=_write(idempotent=True),
        audit=_AUDIT,
    ),
    Tool(
        name="context_list_sessions",
        title="Sessions",
        description="Sessions, latest first.",
        params=(Param("offset", "integer"),),
        handler=context_list_sessions,
        output=_SESSIONS,
        hints=_READ,
    ),
)

#: The names of the session tools, in table order.
SESSION_TOOLS: tuple[str, ...] = tuple(tool.name for tool in SESSION_TABLE)
