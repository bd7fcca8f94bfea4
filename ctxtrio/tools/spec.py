"""What a tool is: a row of the table (:class:`Tool`), its arguments, and how they are checked.

A tool is a module-level handler plus data: name, title, description, parameters,
hints, the argument names that go into the audit line, and the type of its structured
result. The SDK never sees the handler's signature: the input schema is generated here
from :class:`Param`, and :func:`parse_arguments` checks that each required argument is
there and each is of its type before the handler runs.

Bounds are checked once, by the service (:func:`~ctxtrio._limits.check_range`, library
callers get the same InputError): a :class:`Param`'s ``bounds`` come from
:mod:`ctxtrio._limits`, the constants the service checks, and only go into the schema
(``minimum``/``maximum``). Where the tool calls an argument otherwise than the library
(``from``, which the library calls ``start``), the handler calls the service inside
:func:`~ctxtrio._limits.calling`, so the error names the argument as the tool does. A
call with two bad arguments gets a missing or mistyped one's error first (checked here),
then the first the service checks (each service checks the budget first; doc_outline
``from`` before ``max_chunks``). A tool that uses a bounded argument itself, with no
service to check it (``doc_list``'s ``from``), checks it in its handler.

Arguments are taken as the client sent them. A string parameter gets the string, even
when it looks like JSON (``"null"``, ``"[1]"``, a JSON document to ingest); only a
list parameter also accepts a JSON-encoded list or one string as a list of one (``tags="auth"``), and integer and boolean parameters
accept their usual spellings as strings (``"10"``, ``"true"``), which small models send.
Unknown argument names are ignored, but for one close to a parameter the call does not give
(``budget`` beside ``budget_tokens``, ``sessionId``), or another tool's name for it (``top_k`` for
``limit``, ``q`` for ``query``): that call is refused, naming the parameter (a count on a tool with no
``limit``, naming ``budget_tokens``, which bounds its answer), since a misspelt
``budget`` ignored gave an 8k-window model a 4,000-token answer it did not ask for. So is
another tool's action (``undo`` on the full profile's ``context_compact``, which folded instead),
naming the call that does it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, TypeVar

from .._errors import InputError
from .._limits import BUDGET, Bounds
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
_V = TypeVar("_V")


@dataclass(frozen=True, slots=True)
class Param:
    """One argument: its wire name, JSON type, default, and what the schema says about it."""

    name: str
    kind: Kind
    required: bool = False
    default: JSON = None
    description: str = ""
    #: Advertised in the schema; checked by the service (or the handler that uses the value).
    bounds: Bounds | None = None

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
#: with :func:`~ctxtrio._limits.check_budget`.
BUDGET_PARAM = Param("budget_tokens", "integer", bounds=BUDGET)


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
    """Check ``raw`` against ``params`` (presence and types; bounds are the service's): InputError naming the argument."""
    _misspelt(params, raw or {})
    return _arguments(params, raw or {}, _coerce)


#: Names other tools give what these call otherwise, each with the parameters it may mean, first choice
#: first: a model's habit from elsewhere, too far from ours for a misspelling, and ignored it answered
#: at the defaults (``top_k=3`` took up to 10 hits; ``q=...`` said only "query is required").
_COUNTS: Final = ("top_k", "topk", "k", "n", "max_results", "num_results", "count")
_HABITS: Final[Mapping[str, tuple[str, ...]]] = {
    **dict.fromkeys(_COUNTS, ("limit",)),
    **dict.fromkeys(("q", "search", "search_query", "question", "keywords"), ("query",)),
    **dict.fromkeys(("content", "message", "body"), ("text", "note")),
    "text": ("note",),  # context_append's name, sent to the compact profile's memory
    **dict.fromkeys(("document_id", "document", "doc"), ("doc_id",)),
    "session": ("session_id",),
    # The two list tools page by different names (doc_list from=, context_list_sessions offset=, as the
    # pages' own "next" lines say): either name sent to the other was ignored and answered the first page
    # again, which a model paging on loops over.
    "offset": ("from",),
    "from": ("offset",),
    "start": ("from", "offset"),
    "restore": ("undo",),  # the full profile's way to undo a compaction, sent to the compact profile's
}
#: Another tool's action asked of a tool that would do its own with the argument ignored: the full profile's
#: context_compact given undo=e9 (the compact profile's name, or a guess) folded entries instead (6 of 16 in
#: one call). Argument -> (a parameter that marks the tool, what to call instead); the compact profile's
#: context_compact takes undo itself (and restore is a habit for it).
_ELSEWHERE: Final[Mapping[str, tuple[str, str]]] = dict.fromkeys(
    ("undo", "restore"),
    ("keep_recent", "this tool only folds; context_update entry_id=<summary id> restore=true undoes a compaction"),
)


def _misspelt(params: tuple[Param, ...], raw: Mapping[str, object]) -> None:
    """InputError for an unknown argument name close to a parameter ``raw`` does not give, or another
    tool's name for one (:data:`_HABITS`; see the module doc)."""
    own = {param.name for param in params}
    names = {name.replace("_", ""): name for name in own} | {name: name for name in own}  # sessionid, budgettokens
    for key in [key for key in raw if key not in own]:  # in the order sent: the first is named
        folded = key.casefold()
        near = names.get(folded.replace("_", "").replace("-", "")) or next(
            (name for name in _HABITS.get(folded, ()) if name in own), None
        )
        if near is None:
            near = names.get(next(iter(difflib.get_close_matches(folded, names, 1, 0.6)), ""))
        if near is not None and near not in raw:
            raise InputError(f"unknown argument {key[:40]!r}: did you mean {near}? Nothing was done.")
        marker, instead = _ELSEWHERE.get(folded, ("", ""))
        if near is None and marker in own:
            raise InputError(f"unknown argument {key[:40]!r}: {instead}. Nothing was done.")
        if near is None and folded in _COUNTS and "budget_tokens" in own:
            # A tool without limit (memory, doc_window, doc_read) answered top_k=3 with what fits the budget,
            # unsaid; the count asked cannot be kept, so say what bounds the answer, budget_tokens given or not.
            # doc_window's to does too: n=3 there means three chunks, which to says and budget_tokens does not.
            bound = "to (the last chunk) and budget_tokens bound" if "to" in own else "budget_tokens bounds"
            raise InputError(
                f"unknown argument {key[:40]!r}: this tool takes no count of results; {bound} its answer. "
                "Nothing was done."
            )


def parsed_for(params: tuple[Param, ...], given: Mapping[str, JSON]) -> Args:
    """Values another row's parameters of the same kinds parsed already, as ``params``' arguments, not parsed again.

    Defaults fill what is not given (None); a required one missing is the same InputError.
    For the compact profile, which runs the full tools' handlers.
    """
    return _arguments(params, given, lambda _, value: value)


def _arguments(params: tuple[Param, ...], given: Mapping[str, _V], take: Callable[[Param, _V], JSON]) -> Args:
    values: dict[str, JSON] = {}
    for param in params:
        value = given.get(param.name)
        if _blank_unset(param, value):
            value = None
        if value is None:
            if param.required:
                raise InputError(f"{param.name} is required")
            values[param.name] = param.default
        else:
            values[param.name] = take(param, value)
    return Args(values)


def _blank_unset(param: Param, value: object) -> bool:
    """An optional number, flag, list, id or string with a default (role) sent as a blank string is not given:
    a small model fills every field of the schema, and refusing '' (limit, pinned, tags, doc_id, session_id,
    role) refused each call it made. Other text ('' as a query, a note or a title) stays given: its tool says
    what an empty one means."""
    blank = isinstance(value, str) and not value.strip()
    unset_by_blank = param.kind != "string" or param.name.endswith("_id") or param.default is not None
    return blank and not param.required and unset_by_blank


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
        elif isinstance(value, str):  # tags="auth" means ["auth"]; refusing it made a model retry to no end
            return [value]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return list(value)
    wanted = {"string": "a string", "integer": "an integer", "boolean": "true or false", "array": "a list of strings"}
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise InputError(f"{param.name} must be {wanted[param.kind]}, got {shown}")
