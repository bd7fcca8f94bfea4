"""The context_* tools: thin wrappers over :class:`~ctxtrio.memory.SessionService`.

Descriptions are prescriptive and short (the whole tools/list must stay small in an
8k window); argument checks live in the service, which raises InputError with the
fix. Results are compact lines for the model plus the same facts as structured content.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

import trio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import WithJsonSchema

from .._context import Context
from ..memory import Appended, CompactResult, Entry, OpenResult, RecallResult, SessionInfo, SessionStatus, UpdateResult
from ..store.records import JSON
from .calls import ToolCalls
from .results import text_result

__all__ = ["SESSION_TOOLS", "register_session_tools"]


def _arg(kind: str, description: str = "") -> Any:
    """A compact JSON schema for one parameter (the service validates values)."""
    schema: dict[str, Any] = {"type": kind}
    if kind == "array":
        schema["items"] = {"type": "string"}
    if description:
        schema["description"] = description
    return WithJsonSchema(schema)


_SID = Annotated[str, _arg("string")]
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
SESSION_TOOLS = (
    "context_open",
    "context_append",
    "context_recall",
    "context_compact",
    "context_status",
    "context_update",
    "context_list_sessions",
)


def _write(*, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=idempotent, open_world_hint=False
    )


def register_session_tools(server: MCPServer, ctx: Context, calls: ToolCalls) -> None:
    """Register context_open, _append, _recall, _compact, _status, _update, _list_sessions."""
    sessions = ctx.sessions

    @server.tool(
        name="context_open",
        title="Open session",
        description="Start or resume a task's session.",
        annotations=_write(idempotent=True),
    )
    async def context_open(
        session_id: Annotated[str | None, _arg("string", "omit: new")] = None,
        title: Annotated[str | None, _arg("string")] = None,
    ) -> CallToolResult:
        with calls.call("context_open", session_id=session_id) as box:
            box.result = _opened(await sessions.open(session_id, title))
        return box.result

    @server.tool(
        name="context_append",
        title="Append",
        description=(
            "Store each fact, decision or dead end as you go. Pin goals, constraints, preferences (few)."
        ),
        annotations=_write(idempotent=True),
    )
    async def context_append(
        session_id: _SID,
        text: Annotated[str, _arg("string")],
        role: Annotated[str, _arg("string", "note|user|assistant|system|decision|summary")] = "note",
        tags: Annotated[list[str] | None, _arg("array", "max 10")] = None,
        pinned: Annotated[bool, _arg("boolean")] = False,
    ) -> CallToolResult:
        with calls.call("context_append", session_id=session_id) as box:
            box.result = _appended(await sessions.append(session_id, text, role=role, tags=tags, pinned=pinned))
        return box.result

    @server.tool(
        name="context_recall",
        title="Recall",
        description=(
            "Before acting on earlier work: pins, then best matches for query (none: latest), within budget_tokens."
        ),
        annotations=_READ,
    )
    async def context_recall(
        session_id: _SID,
        query: Annotated[str | None, _arg("string")] = None,
        budget_tokens: Annotated[int | None, _arg("integer", "50-100000")] = None,
        limit: Annotated[int | None, _arg("integer", "1-200")] = None,
        tags: Annotated[list[str] | None, _arg("array", "any of")] = None,
    ) -> CallToolResult:
        with calls.call("context_recall", session_id=session_id) as box:
            box.result = _recalled(
                await sessions.recall(session_id, query, budget_tokens=budget_tokens, limit=limit, tags=tags)
            )
        return box.result

    @server.tool(
        name="context_compact",
        title="Compact",
        description=(
            "When context_status advises: fold old unpinned entries into a summary (undo: restore it)."
        ),
        annotations=_write(idempotent=False),
    )
    async def context_compact(
        session_id: _SID,
        keep_recent: Annotated[int, _arg("integer", "0-500")] = 10,
        target_tokens: Annotated[int, _arg("integer", "50-20000")] = 400,
        dry_run: Annotated[bool, _arg("boolean")] = False,
    ) -> CallToolResult:
        with calls.call("context_compact", session_id=session_id) as box:
            stop_at = trio.current_time() + ctx.config.llm_deadline_s
            result = await sessions.compact(
                session_id, keep_recent=keep_recent, target_tokens=target_tokens, dry_run=dry_run, stop_at=stop_at
            )
            box.result = _compacted(result)
        return box.result

    @server.tool(
        name="context_status",
        title="Session status",
        description="Tokens used vs budget, pins, and whether to compact.",
        annotations=_READ,
    )
    async def context_status(session_id: _SID) -> CallToolResult:
        with calls.call("context_status", session_id=session_id) as box:
            status = await sessions.status(session_id)
            box.result = text_result(_status_text(status), _status_json(status))
        return box.result

    @server.tool(
        name="context_update",
        title="Update entry",
        description="Set one: pinned, delete, or restore (deleted/superseded entry; on a summary: undo it).",
        annotations=_write(idempotent=True),
    )
    async def context_update(
        session_id: _SID,
        entry_id: Annotated[str, _arg("string")],
        pinned: Annotated[bool | None, _arg("boolean")] = None,
        delete: Annotated[bool | None, _arg("boolean")] = None,
        restore: Annotated[bool | None, _arg("boolean")] = None,
    ) -> CallToolResult:
        with calls.call("context_update", session_id=session_id) as box:
            result = await sessions.update(session_id, entry_id, pinned=pinned, delete=delete, restore=restore)
            box.result = _updated(result)
        return box.result

    @server.tool(
        name="context_list_sessions",
        title="List sessions",
        description="Sessions, latest first.",
        annotations=_READ,
    )
    async def context_list_sessions() -> CallToolResult:
        with calls.call("context_list_sessions") as box:
            box.result = _listed(await sessions.list_sessions())
        return box.result



# -- formatting -------------------------------------------------------------------------


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%MZ", time.gmtime(ts))


def _usage(status: SessionStatus) -> str:
    return f"{status.live_tokens}/{status.budget_tokens} tokens ({status.percent}%)"


def _advice(status: SessionStatus) -> str:
    """What to do next, as one sentence per concern (empty when all is well)."""
    lines: list[str] = []
    if status.advice == "compact now":
        lines.append("Over budget: call context_compact now.")
    elif status.advice == "compact soon":
        lines.append("Above 80% of the budget: call context_compact soon.")
    lines.extend(f"Warning: {warning}." for warning in status.warnings)
    return "\n".join(lines)


def _with_advice(text: str, status: SessionStatus) -> str:
    advice = _advice(status)
    return f"{text}\n{advice}" if advice else text


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


def _status_text(status: SessionStatus) -> str:
    lines = [
        f"{status.session_id} \"{status.title}\": {_usage(status)}, advice: {status.advice}",
        f"{status.live_entries} live ({status.pinned} pinned, {status.pinned_tokens} tokens; "
        f"{status.summaries} summaries), {status.superseded} superseded, {status.deleted} deleted",
        f"budget: {status.budget_source}; token counts: {status.token_source}",
    ]
    return _with_advice("\n".join(lines), status)


def _entry_json(entry: Entry) -> dict[str, JSON]:
    data: dict[str, JSON] = {"id": entry.id, "role": entry.role, "pinned": entry.pinned, "status": entry.status}
    if entry.tags:
        data["tags"] = list(entry.tags)
    return data


def _opened(result: OpenResult) -> CallToolResult:
    status = result.status
    if result.created:
        text = (
            f"Opened new session {status.session_id} (\"{status.title}\"). "
            "Use this session_id in every context_* call."
        )
    else:
        text = (
            f"Resumed {status.session_id} \"{status.title}\": {status.live_entries} live entries "
            f"({status.pinned} pinned), {_usage(status)}. context_recall before acting on earlier work."
        )
    return text_result(_with_advice(text, status), {**_status_json(status), "created": result.created})


def _appended(result: Appended) -> CallToolResult:
    entry, status = result.entry, result.status
    if result.duplicate:
        text = f"Already stored as {entry.id} (same text); nothing added" + (", pinned." if entry.pinned else ".")
    else:
        text = f"Stored {entry.id} ({status.live_entries} live, {_usage(status)})."
    data: dict[str, JSON] = {
        "id": entry.id,
        "duplicate": result.duplicate,
        "live_tokens": status.live_tokens,
        "budget_tokens": status.budget_tokens,
        "advice": status.advice,
    }
    return text_result(_with_advice(text, status), data)


def _recalled(result: RecallResult) -> CallToolResult:
    text = result.text or f"Session {result.session_id} has no live entries."
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
    return text_result(text, data)


def _span(ids: tuple[str, ...]) -> str:
    return ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]}"


def _compacted(result: CompactResult) -> CallToolResult:
    data: dict[str, JSON] = {
        "folded": list(result.folded),
        "summary_id": result.summary.id if result.summary is not None else None,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "method": result.method,
        "dry_run": result.dry_run,
    }
    if not result.folded:
        text = f"Nothing folded: {result.note}."
    elif result.dry_run:
        text = (
            f"Would fold {len(result.folded)} entries ({_span(result.folded)}, {result.tokens_before} tokens) "
            "into one summary. Call again without dry_run to do it."
        )
    else:
        assert result.summary is not None
        summary_id = result.summary.id
        text = (
            f"Folded {len(result.folded)} entries ({_span(result.folded)}) into {summary_id}: "
            f"{result.tokens_before} -> {result.tokens_after} tokens, {result.method}. "
            f"Now {_usage(result.status)}. Undo: context_update entry_id={summary_id} restore=true."
        )
        if result.note:
            text += f"\nNote: {result.note}."
    return text_result(_with_advice(text, result.status), data)


def _updated(result: UpdateResult) -> CallToolResult:
    entry = result.entry
    if not result.changed:
        text = f"{entry.id} unchanged ({entry.status}{', pinned' if entry.pinned else ''})."
    elif result.restored and entry.folds:
        text = f"Undid compaction {entry.id}: {len(result.restored)} entries ({_span(result.restored)}) are live again."
    elif entry.status == "deleted":
        text = f"{entry.id} deleted; restore=true brings it back."
    elif result.restored:
        text = f"{entry.id} restored."
    else:
        text = f"{entry.id} {'pinned' if entry.pinned else 'unpinned'}."
    data: dict[str, JSON] = {**_entry_json(entry), "changed": result.changed, "restored": list(result.restored)}
    return text_result(_with_advice(f"{text} Now {_usage(result.status)}.", result.status), data)


def _listed(infos: list[SessionInfo]) -> CallToolResult:
    if not infos:
        return text_result("No sessions yet: context_open starts one.", {"sessions": []})
    lines = [
        f"{info.session_id} \"{info.title}\": {info.live_entries} live, {_when(info.last_activity)}" for info in infos
    ]
    sessions: list[JSON] = [
        {
            "id": info.session_id,
            "title": info.title,
            "live_entries": info.live_entries,
            "last_activity": info.last_activity,
        }
        for info in infos
    ]
    return text_result("\n".join(lines), {"sessions": sessions})
