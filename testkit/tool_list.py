"""The one measure of a tools/list result's size, for the tests' budgets and ``stress/tool_list_size.py``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["listed_chars"]


def listed_chars(tools: Sequence[Mapping[str, object]]) -> int:
    """Characters of the result ``{"tools": [...]}`` as compact JSON (``json.dumps`` defaults otherwise)."""
    return len(json.dumps({"tools": list(tools)}, separators=(",", ":")))
