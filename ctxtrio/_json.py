"""The one JSON alias: a value ``json.loads`` can return, recursively typed."""

from __future__ import annotations

from typing import TypeAlias, Union

__all__ = ["JSON"]

JSON: TypeAlias = Union[None, bool, int, float, str, list["JSON"], dict[str, "JSON"]]
