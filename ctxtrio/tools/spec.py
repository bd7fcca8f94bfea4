"""What a tool is: a row of the table (:class:`Tool`), its arguments, and how they are checked.

A tool is a module-level handler plus data: name, title, description, parameters,
hints, the argument names that go into the audit line, and the type of its structured
result. The SDK never sees the handler's signature: the input schema is generated here
from :class:`Param` (bounds come from :mod:`ctxtrio._limits`, the same constants the
services check), and :func:`parse_arguments` checks the JSON arguments against the same
parameters (types and bounds) before the handler runs, so an error names an argument as
the tool calls it (``from``, which the library calls ``start``).

The budget is the exception, checked once: ``budget_tokens`` has the same name in the
tools and the library, and the service that spends it checks it
(:func:`~ctxtrio._limits.check_budget`, first among its own checks), so
:data:`BUDGET_PARAM` only advertises its bounds. A call with a bad budget and another bad
argument gets the other argument's error when this module checks that one (a missing or
mistyped argument, ``limit=0``), the budget's when the service does (a query with no
words).

Arguments are taken as the client sent them. A string parameter gets the string, even
when it looks like JSON (``"null"``, ``"[1]"``, a JSON document to ingest); only a
list parameter also accepts a JSON-encoded list, and integer and boolean parameters
accept their usual spellings as strings (``"10"``, ``"true"``), which small models send.
Unknown argument names are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .._errors import InputError
from .._limits import BUDGET, Bounds, check_range
from .._progress import Progress
from .._setting import yes_no
from ..store.records import JSON
from .output import Output
from .results import ToolResult

if TYPE_CHECKING:
    from .._wiring import Wiring

__all__ = [
    "BUDGET_PARAM",
    "Args",
    "Call",
    "Handler",
    "Hints",
    "Kind",
    "Param",
    "Tool",
    "input_schema",
    "parse_arguments",
]

Kind = Literal["string", "integer", "boolean", "array"]

_INTEGER = re.compile(r"-?\d{1,18}")


@dataclass(frozen=True, slots=True)
class Param:
    """One argument: its wire name, JSON type, default, and what the schema says about it."""

    name: str
    kind: Kind
    required: bool = False
    default: JSON = None
    description: str = ""
    bounds: Bounds | None = None
    #: The service checks ``bounds`` under this same name (library callers get the same
    #: InputError), so :func:`parse_arguments` leaves them to it: one check per call.
    service_checks: bool = False

    def schema(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"type": self.kind}
        if self.kind == "array":
            out["items"] = {"type": "string"}
        if self.description:
            out["description"] = self.description
        if self.default is not None and self.default is not False:  # an omitted flag is off: no need to say so
            out["default"] = self.default
        if self.bounds is not None:
            out["minimum"] = self.bounds.low
            if self.bounds.high is not None:
                out["maximum"] = self.bounds.high
        return out


#: ``budget_tokens`` of every reading tool: the schema shows the bounds the services check
#: with :func:`~ctxtrio._limits.check_budget` (the only check of a budget).
BUDGET_PARAM = Param("budget_tokens", "integer", bounds=BUDGET, service_checks=True)


@dataclass(frozen=True, slots=True)
class Hints:
    """The MCP tool annotations (``openWorldHint`` is always false: nothing leaves the machine)."""

    read_only: bool
    destructive: bool | None = None
    idempotent: bool | None = None


@dataclass(slots=True)
class Call:
    """What a handler may use besides its arguments: progress, and ids for the audit line."""

    progress: Progress | None = None
    ids: dict[str, str] = field(default_factory=dict)


Handler = Callable[["Wiring", "Args", Call], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class Tool:
    """One row of the tool table.

    ``output`` projects the library result onto the structured content, and gives the
    ``outputSchema`` (:mod:`.output`); every tool in the table has one.
    """

    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    handler: Handler
    hints: Hints
    #: Argument names whose values are written to the audit line (ids only, never text).
    audit: tuple[str, ...] = ()
    output: Output | None = None


def input_schema(tool: Tool) -> dict[str, JSON]:
    """The JSON schema advertised for ``tool``'s arguments."""
    schema: dict[str, JSON] = {"type": "object", "properties": {p.name: p.schema() for p in tool.params}}
    required: list[JSON] = [p.name for p in tool.params if p.required]
    if required:
        schema["required"] = required
    return schema


class Args:
    """Checked arguments, read with typed getters (every value was checked by its kind)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, JSON]) -> None:
        self._values = dict(values)

    def text(self, name: str) -> str:
        value = self._values[name]
        assert isinstance(value, str)
        return value

    def opt_text(self, name: str) -> str | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, str)
        return value

    def integer(self, name: str) -> int:
        value = self._values[name]
        assert isinstance(value, int)
        return value

    def opt_integer(self, name: str) -> int | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, int)
        return value

    def flag(self, name: str) -> bool:
        value = self._values[name]
        assert isinstance(value, bool)
        return value

    def opt_flag(self, name: str) -> bool | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, bool)
        return value

    def strings(self, name: str) -> list[str] | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, list)
        return None if value is None else [str(item) for item in value]


def parse_arguments(params: tuple[Param, ...], raw: Mapping[str, object] | None) -> Args:
    """Check ``raw`` against ``params``: InputError naming the argument and the fix."""
    raw = raw or {}
    values: dict[str, JSON] = {}
    for param in params:
        value = raw.get(param.name)
        if value is None:
            if param.required:
                raise InputError(f"{param.name} is required")
            values[param.name] = param.default
        else:
            values[param.name] = checked = _coerce(param, value)
            if param.bounds is not None and not param.service_checks and isinstance(checked, int):
                check_range(param.name, checked, param.bounds)
    return Args(values)


def _integer(value: object) -> int | None:
    """An int, a whole float, or digits in a string, as an int; else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    return None


def _coerce(param: Param, value: object) -> JSON:
    if param.kind == "string" and isinstance(value, str):
        return value
    if param.kind == "integer" and (number := _integer(value)) is not None:
        return number
    if param.kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and (switch := yes_no(value)) is not None:
            return switch
    if param.kind == "array":
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return list(value)
    wanted = {"string": "a string", "integer": "an integer", "boolean": "true or false", "array": "a list of strings"}
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InputError(f"{param.name} must be {wanted[param.kind]}, got {shown}")
