"""Tool results: compact text for the model, the same facts as structured content.

A plain value: the SDK boundary (:mod:`ctxtrio._sdk`) turns it into the protocol's
``CallToolResult``, so tools can be run and tested without the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..store.records import JSON
from ..text.harmless import harmless

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ToolResult", "error_result", "text_result"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call answers: text for the model, optional structured content, error flag."""

    text: str
    structured: dict[str, JSON] | None = None
    is_error: bool = False


def text_result(text: str, structured: Mapping[str, JSON] | None = None) -> ToolResult:
    """A successful result: ``text`` for the model, ``structured`` for hosts that use it."""
    return ToolResult(text, dict(structured) if structured is not None else None)


def error_result(message: str) -> ToolResult:
    """A failed call the model can act on: one clear sentence of what to do instead.

    Refusals name paths (a symlink's target, a file's resolved name) and ids as found: made
    :func:`~ctxtrio.text.harmless.harmless` here, the one door every refusal leaves by.
    """
    return ToolResult(f"Error: {harmless(message)}", is_error=True)
