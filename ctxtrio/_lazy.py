"""Names of a package imported on first use (PEP 562), for the packages whose imports cost
(``ctxtrio`` itself, ``ctxtrio.docs``, ``ctxtrio.llm``: a server with ``--no-llm`` never
imports httpx). Each package keeps its type-checking imports and calls :func:`load_name`
from its ``__getattr__``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, MutableMapping

__all__ = ["load_name"]


def load_name(package: str, namespace: MutableMapping[str, object], homes: Mapping[str, str], name: str) -> object:
    """``name`` from its module in ``homes`` (relative to ``package``), kept in ``namespace`` so
    it is looked up once; AttributeError for a name the package does not export."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, package), name)
    namespace[name] = value
    return value
