"""The context_* tools: rows of the tool table over :class:`~ctxtrio.memory.SessionService`.

Descriptions are prescriptive and short (the whole tools/list must stay small in an
8k window); argument checks live in the service, which raises InputError with the
fix. Results are compact text (:mod:`ctxtrio.memory.render`) plus the same facts as
structured content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from .._limits import BUDGET, COMPACT_TARGET, KEEP_RECENT, MAX_TAGS, RECALL_LIMIT
from ..memory import render
from ..memory.arguments import check_role
from ..memory.model import ROLES, Entry, SessionStatus
from ..store.records import JSON
from .results import ToolResult, text_result
from .spec import Args, Call, Hints, Param, Tool

if TYPE_CHECKING:
    from .._context import Context

__all__ = ["SESSION_TABLE", "SESSION_TOOLS"]

_SID = Param("session_id", "string", required=True)
_READ = Hints(read_only=True)
_AUDIT = ("session_id",)


def _write(*, idempotent: bool) -> Hints:
    return Hints(read_only=False, destructive=False, idempotent=idempotent)


async def context_open(ctx: Context, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.open(args.opt_text("session_id"), args.opt_text("title"))
    return text_result(render.render_opened(result), {**_status_json(result.status), "created": result.created})


async def context_append(ctx: Context, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.append(
        args.text("session_id"),
        args.text("text"),
        role=check_role(args.text("role")),
        tags=args.strings("tags"),
        pinned=args.flag("pinned"),
    )
    entry, status = result.entry, result.status
    data: dict[str, JSON] = {
        "id": entry.id,
        "duplicate": result.duplicate,
        "live_tokens": status.live_tokens,
        "budget_tokens": status.budget_tokens,
        "advice": status.advice,
    }
    return text_result(render.render_appended(result), data)


async def context_recall(ctx: Context, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.recall(
        args.text("session_id"),
        args.opt_text("query"),
        budget_tokens=args.opt_integer("budget_tokens"),
        limit=args.opt_integer("limit"),
        tags=args.strings("tags"),
    )
    data: dict[str, JSON] = {
        "ids": [entry.id for entry in result.entries],
        "pinned_shown": result.pinned_shown,
        "matched": result.matched,
        "not_fit": result.not_fit,
        "pins_not_fit": list(result.pins_not_fit),
        "used_tokens": result.used_tokens,
        "budget_tokens": result.budget_tokens,
        "mode": result.mode,
    }
    return text_result(render.render_recalled(result), data)


async def context_compact(ctx: Context, args: Args, call: Call) -> ToolResult:
    stop_at = trio.current_time() + ctx.config.llm_deadline_s
    result = await ctx.sessions.compact(
        args.text("session_id"),
        keep_recent=args.integer("keep_recent"),
        target_tokens=args.integer("target_tokens"),
        dry_run=args.flag("dry_run"),
        stop_at=stop_at,
    )
    data: dict[str, JSON] = {
        "folded": list(result.folded),
        "summary_id": result.summary.id if result.summary is not None else None,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "method": result.method,
        "dry_run": result.dry_run,
    }
    return text_result(render.render_compacted(result), data)


async def context_status(ctx: Context, args: Args, call: Call) -> ToolResult:
    status = await ctx.sessions.status(args.text("session_id"))
    return text_result(render.render_status(status), _status_json(status))


async def context_update(ctx: Context, args: Args, call: Call) -> ToolResult:
    result = await ctx.sessions.update(
        args.text("session_id"),
        args.text("entry_id"),
        pinned=args.opt_flag("pinned"),
        delete=args.opt_flag("delete"),
        restore=args.opt_flag("restore"),
    )
    data: dict[str, JSON] = {**_entry_json(result.entry), "changed": result.changed, "restored": list(result.restored)}
    return text_result(render.render_updated(result), data)


async def context_list_sessions(ctx: Context, args: Args, call: Call) -> ToolResult:
    page = await ctx.sessions.page_sessions(offset=args.opt_integer("offset") or 0)
    if not page.total:
        return text_result("No sessions yet: context_open starts one.", {"sessions": [], "total": 0})
    sessions: list[JSON] = [
        {
            "id": info.session_id,
            "title": info.title,
            "live_entries": info.live_entries,
            "last_activity": info.last_activity,
        }
        for info in page.sessions
    ]
    structured: dict[str, JSON] = {"sessions": sessions, "total": page.total, "next_offset": page.next_offset}
    return text_result(page.text.rstrip("\n"), structured)


def _status_json(status: SessionStatus) -> dict[str, JSON]:
    return {
        "session_id": status.session_id,
        "title": status.title,
        "live_entries": status.live_entries,
        "live_tokens": status.live_tokens,
        "budget_tokens": status.budget_tokens,
        "pinned": status.pinned,
        "pinned_tokens": status.pinned_tokens,
        "superseded": status.superseded,
        "deleted": status.deleted,
        "summaries": status.summaries,
        "advice": status.advice,
        "warnings": list(status.warnings),
    }


def _entry_json(entry: Entry) -> dict[str, JSON]:
    data: dict[str, JSON] = {"id": entry.id, "role": entry.role, "pinned": entry.pinned, "status": entry.status}
    if entry.tags:
        data["tags"] = list(entry.tags)
    return data


SESSION_TABLE: tuple[Tool, ...] = (
    Tool(
        name="context_open",
        title="Open session",
        description="Start or resume a task's session.",
        params=(Param("session_id", "string", description="omit: new"), Param("title", "string")),
        handler=context_open,
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
        hints=_write(idempotent=True),
        audit=_AUDIT,
    ),
    Tool(
        name="context_recall",
        title="Recall",
        description="Before acting on earlier work: pins, then best matches for query (none: latest), "
        "within budget_tokens.",
        params=(
            _SID,
            Param("query", "string"),
            Param("budget_tokens", "integer", bounds=BUDGET),
            Param("limit", "integer", bounds=RECALL_LIMIT),
            Param("tags", "array", description="any of"),
        ),
        handler=context_recall,
        hints=_READ,
        audit=_AUDIT,
    ),
    Tool(
        name="context_compact",
        title="Compact",
        description="When context_status advises: fold old unpinned entries into a summary (undo: restore it).",
        params=(
            _SID,
            Param("keep_recent", "integer", default=10, bounds=KEEP_RECENT),
            Param("target_tokens", "integer", default=400, bounds=COMPACT_TARGET),
            Param("dry_run", "boolean", default=False),
        ),
        handler=context_compact,
        hints=_write(idempotent=False),
        audit=_AUDIT,
    ),
    Tool(
        name="context_status",
        title="Status",
        description="Tokens vs budget, pins, whether to compact.",
        params=(_SID,),
        handler=context_status,
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
        hints=_write(idempotent=True),
        audit=_AUDIT,
    ),
    Tool(
        name="context_list_sessions",
        title="Sessions",
        description="Sessions, latest first.",
        params=(Param("offset", "integer"),),
        handler=context_list_sessions,
        hints=_READ,
    ),
)

#: The names of the session tools, in table order.
SESSION_TOOLS: tuple[str, ...] = tuple(tool.name for tool in SESSION_TABLE)
