"""Every tool call runs through :meth:`ToolRunner.run`: argument checks, timing, audit line, error result.

This is the one place where a broad ``except`` is allowed: a tool call's failure becomes
an error result the model can read, instead of tearing down the server. ``CtxError``
messages are shown with the advice their hint asks for (:mod:`.advice`); anything else is
logged with its traceback and reported as an internal error. ``trio.Cancelled`` is
never caught: it is a ``BaseException`` and passes through, audited as "cancelled", also
when it comes wrapped in an exception group by a nursery inside the handler (a call
cancelled at shutdown was audited "ok" that way, issue 27 finding 10).

The audit line is one JSON object per call on stderr: timestamp, tool, outcome,
duration_ms, and the session/doc ids involved (the tool's ``audit`` arguments, plus any
id the handler learned, like the doc_id an ingest chose); never the text itself.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import TYPE_CHECKING, TextIO

import trio

from .._errors import CtxError
from .advice import advised
from .results import ToolResult, error_result
from .spec import Call, Tool, parse_arguments
from .stopping import CutOff, Stopping

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._progress import Progress
    from .._wiring import Wiring

__all__ = ["ToolRunner"]

log = logging.getLogger("ctxtrio.tools")


class ToolRunner:
    """Runs the table's handlers against one :class:`~ctxtrio._wiring.Wiring`; audits and contains their failures."""

    def __init__(
        self,
        ctx: Wiring,
        tools: Sequence[Tool],
        *,
        audit: bool | None = None,
        stream: TextIO | None = None,
        stopping: Stopping | None = None,
    ) -> None:
        self._ctx = ctx
        self._tools = {tool.name: tool for tool in tools}
        #: Set by the transport's stop: a call past the shutdown grace is answered, not dropped.
        self.stopping = stopping if stopping is not None else Stopping()
        self._audit = ctx.config.audit if audit is None else audit
        self._stream = stream

    async def call(
        self, name: str, arguments: Mapping[str, object] | None, progress: Progress | None = None
    ) -> ToolResult:
        """Run the tool called ``name`` (an error result when there is none)."""
        tool = self._tools.get(name)
        if tool is None:
            return error_result(f"there is no tool {name!r}: tools/list names them, context_guide explains them")
        return await self.run(tool, arguments, progress)

    async def run(
        self, tool: Tool, arguments: Mapping[str, object] | None, progress: Progress | None = None
    ) -> ToolResult:
        """Check ``arguments``, run ``tool``'s handler, and return its result or an error result."""
        raw = arguments or {}
        call = Call(progress=progress)
        for name in tool.audit:
            if isinstance(value := raw.get(name), str) and value:
                call.ids[name] = value
        started = trio.current_time()
        outcome = "ok"
        error: str | None = None
        try:
            handled = tool.handler(self._ctx, parse_arguments(tool.params, raw), call)
            result = await self.stopping.finish(tool.name, handled)
            if result is CutOff.CUT_OFF:  # the stop deadline's cancellation; any other cancel passes through
                outcome = "cancelled"
                return error_result(self._stopped(tool))
            return result
        except CtxError as exc:
            outcome, error = "error", type(exc).__name__
            return error_result(advised(exc, tool.name, self._tools))
        except Exception as exc:
            outcome, error = "error", type(exc).__name__
            log.exception("tool %s failed unexpectedly", tool.name)
            return error_result(f"internal error ({type(exc).__name__}); the server log has details")
        except BaseException as exc:  # passes through: only the audit line needs to know what it was
            outcome = "cancelled" if _cancellation(exc) else "error"
            error = None if outcome == "cancelled" else type(exc).__name__
            raise
        finally:
            if self._audit:
                self._write(tool.name, outcome, error, trio.current_time() - started, call.ids)

    def _stopped(self, tool: Tool) -> str:
        """What a call cut off by the shutdown grace answers. A write may have landed before the cut (an
        ingest's commit is shielded, then the cancel comes out of the call): "not done, call again" made a
        model ingest an inline text twice, so a write that is not idempotent says to look first."""
        if tool.hints.read_only or tool.hints.idempotent:
            return self.stopping.not_done("this call", f"call {tool.name} again")
        return self.stopping.not_finished("what it stores", f"look before you call {tool.name} again")

    def _write(self, tool: str, outcome: str, error: str | None, duration_s: float, ids: dict[str, str]) -> None:
        line: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z",
            "event": "tool_call",
            "tool": tool,
            "outcome": outcome,
            "duration_ms": round(duration_s * 1000, 2),
        }
        if error is not None:
            line["error"] = error
        line.update(ids)
        stream = self._stream if self._stream is not None else sys.stderr
        try:
            stream.write(json.dumps(line, ensure_ascii=False) + "\n")
            stream.flush()
        except (OSError, ValueError):  # stderr closed by the host: auditing must not fail the call
            pass


def _cancellation(exc: BaseException) -> bool:
    """True for ``trio.Cancelled``, and for an exception group holding nothing else."""
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(trio.Cancelled)
        return rest is None
    return isinstance(exc, trio.Cancelled)
