"""Structured results: which fields of a library result a tool returns, and their schema.

A tool's structured content is a projection of the frozen dataclass the library returns
(``SearchResult``, ``Appended``, ...). One :class:`Output` declares the projection, and
both the ``outputSchema`` advertised in ``tools/list`` and the ``structuredContent`` of
each call are derived from it, the schema from the dataclass's annotations and the
content from the result object, so the two cannot drift apart.

A field is a path of attribute names, optionally renamed: ``"advice=status.advice"``
reads ``result.status.advice`` into the key ``advice``; ``"ids=entries.id"`` maps over
the sequence ``entries`` and gives the list of their ids. A sequence of dataclasses is
projected by a nested :class:`Output` given in ``items`` (``hits`` of a search become
objects with named fields, never bare arrays). Floats are rounded to three places.

Schemas are kept small (an 8k-token model may be shown ``tools/list`` whole): types
only, no titles, no descriptions; every listed key is always present (``required``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

if typing.TYPE_CHECKING:
    from ..store.records import JSON

__all__ = ["Output"]

_SCALARS: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


@dataclass(frozen=True, slots=True)
class Output:
    """The projection of a result type ``source`` onto ``fields`` (see the module docstring)."""

    source: type
    fields: tuple[str, ...]
    items: Mapping[str, Output] = field(default_factory=dict)
    #: ``fields`` as (key, path) pairs, parsed once here: :meth:`dump` runs on every tool call, and
    #: parsing them there again was about 0.3% of an HTTP call's CPU (http22's profile).
    _paths: tuple[tuple[str, tuple[str, ...]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_paths", tuple(_parsed(self.fields)))  # frozen: set once, at construction

    def schema(self) -> dict[str, JSON]:
        """The JSON schema of :meth:`dump`'s result (the tool's ``outputSchema``)."""
        return _object({key: self._field_schema(key, path) for key, path in self._paths})

    def dump(self, value: object) -> dict[str, JSON]:
        """The structured content for ``value``, an instance of ``source``."""
        assert isinstance(value, self.source), (type(value), self.source)
        return {key: self._field_value(key, _walk(value, path)) for key, path in self._paths}

    def _field_schema(self, key: str, path: tuple[str, ...]) -> JSON:
        hint, nullable, many = _resolve(self.source, path)
        nested = self.items.get(key)
        item: JSON
        if nested is None:
            item = _type_schema(hint)
        elif _sequence_item(hint) is not None:
            item = {"type": "array", "items": nested.schema()}
        else:
            item = nested.schema()
        if many:
            item = {"type": "array", "items": item}
        if nullable:
            assert isinstance(item, dict) and isinstance(item.get("type"), str), f"{key}: nullable must be a plain type"
            item = {**item, "type": [item["type"], "null"]}
        return item

    def _field_value(self, key: str, value: object) -> JSON:
        nested = self.items.get(key)
        if nested is None or value is None:
            return _plain(value)
        if isinstance(value, (tuple, list)):
            return [nested.dump(item) for item in value]
        return nested.dump(value)


def _object(properties: dict[str, JSON]) -> dict[str, JSON]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _parsed(fields: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    out = []
    for spec in fields:
        key, _, path = spec.partition("=") if "=" in spec else (spec.rsplit(".", 1)[-1], "", spec)
        out.append((key, tuple(path.split("."))))
    return out


def _walk(value: object, path: tuple[str, ...]) -> object:
    """Follow ``path`` from ``value``; a sequence on the way is mapped over, None stops the walk."""
    for index, name in enumerate(path):
        if value is None:
            return None
        if isinstance(value, (tuple, list)) and index > 0:
            rest = path[index:]
            return [_walk(item, rest) for item in value]
        value = getattr(value, name)
    return value


def _resolve(source: type, path: tuple[str, ...]) -> tuple[Any, bool, bool]:
    """The annotation at the end of ``path`` from ``source``: (type, nullable on the way, mapped over a sequence)."""
    hint: Any = source
    nullable = many = False
    for name in path:
        hint, optional = _strip_none(hint)
        nullable = nullable or optional
        if _sequence_item(hint) is not None and dataclasses.is_dataclass(_sequence_item(hint)):
            hint, many = _sequence_item(hint), True
        hint = _attribute_hint(hint, name)
    hint, optional = _strip_none(hint)
    return hint, nullable or optional, many


def _attribute_hint(owner: Any, name: str) -> Any:
    attribute = getattr(owner, name, None)
    if isinstance(attribute, property) and attribute.fget is not None:
        return typing.get_type_hints(attribute.fget)["return"]
    return typing.get_type_hints(owner)[name]


def _strip_none(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (Union, types.UnionType):
        rest = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0], len(rest) != len(typing.get_args(hint))
    return hint, False


def _sequence_item(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (tuple, list, Sequence):
        return typing.get_args(hint)[0]
    return None


def _type_schema(hint: Any) -> JSON:
    supertype = getattr(hint, "__supertype__", None)  # a NewType
    if supertype is not None:
        return _type_schema(supertype)
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if typing.get_origin(hint) is Literal:
        kinds = {type(arg) for arg in typing.get_args(hint)}
        assert len(kinds) == 1, hint
        return {"type": _SCALARS[kinds.pop()]}
    item = _sequence_item(hint)
    if item is not None:
        return {"type": "array", "items": _type_schema(item)}
    raise TypeError(f"no JSON schema for {hint!r}: project it onto scalar fields")


def _plain(value: object) -> JSON:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not a plain value: project it onto its fields")
