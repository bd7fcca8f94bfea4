"""Every tool call runs inside :meth:`ToolCalls.call`: timing, audit line, error result.

This is the one place where a broad ``except`` is allowed: a tool call's failure becomes
an error result the model can read, instead of tearing down the server. ``CtxError``
messages are shown as they are (they are written for the model); anything else is
logged with its traceback and reported as an internal error. ``trio.Cancelled`` is
never caught: it is a ``BaseException`` and passes through, audited as "cancelled".

The audit line is one JSON object per call on stderr: timestamp, tool, outcome,
duration_ms, and the session/doc ids involved; never the text itself.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO

import trio
from mcp.types import CallToolResult

from .._errors import CtxError
from .results import error_result, text_result

__all__ = ["CallBox", "ToolCalls"]

log = logging.getLogger("ctxtrio.tools")


@dataclass(slots=True)
class CallBox:
    """Where a tool body puts its result; replaced by an error result on failure."""

    result: CallToolResult = field(default_factory=lambda: text_result(""))
    ids: dict[str, str] = field(default_factory=dict)


class ToolCalls:
    """Runs tool bodies: audits them and turns their failures into error results."""

    def __init__(self, *, audit: bool, stream: TextIO | None = None) -> None:
        self._audit = audit
        self._stream = stream

    @contextmanager
    def call(self, tool: str, **ids: str | None) -> Iterator[CallBox]:
        box = CallBox(ids={key: value for key, value in ids.items() if value})
        started = trio.current_time()
        outcome = "ok"
        error: str | None = None
        try:
            yield box
        except CtxError as exc:
            outcome, error = "error", type(exc).__name__
            box.result = error_result(str(exc))
        except trio.Cancelled:
            outcome = "cancelled"
            raise
        except Exception as exc:  # the tool-call boundary: report, never crash the server
            outcome, error = "error", type(exc).__name__
            log.exception("tool %s failed unexpectedly", tool)
            box.result = error_result(f"internal error ({type(exc).__name__}); the server log has details")
        finally:
            if self._audit:
                self._write(tool, outcome, error, trio.current_time() - started, box.ids)

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
