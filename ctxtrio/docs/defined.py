"""Which search candidates define the name a query asks for, and those first (for :mod:`.search`).

A function or class asked for by its words should bring its definition before the chunks that use it most
(:func:`definitions_first`): the name the query's words spell whole (``json decode error``:
``class JSONDecodeError``), qualified where the query wrote a dotted name (``re.VERBOSE`` on ``library.re``);
else, in source code, a member its words spell of an owner its other words name (:func:`members_first`:
``json decoder decode``, Go's ``func (dec *Decoder) Decode``). Pure: no index, no trio.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Final, TypeVar

from ..text.asked import asked_keywords, asked_name, member_names
from ..text.definitions import Defined, Member, Name, defines, members_defined, names_qualifier, spelling

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from .packing import Candidate

__all__ = [
    "DefinitionOrder",
    "copies_nearest_first",
    "defines_name",
    "definitions_first",
    "file_names",
    "kept_where",
    "member_in",
    "members_first",
    "named_only",
    "source_folders",
]

#: How many of the folders a file is in may name the owner of what it defines: a Go package's (``strconv``),
#: a Python package's (``asyncio``), a crate's (``tokio-1.24.2/src/task/spawn.rs``), a package's ``lib/fetch``.
_FOLDERS = 3
#: A version that ends a folder's name (``tokio-1.24.2``, ``go-1.19``).
_VERSION: Final = re.compile(r"[-_.]?v?\d[\w.]*$")
#: How a definition is announced when it is less the member's own than a keyword's: a method no keyword announces
#: (a Java constructor is its class's name) and a Rust ``impl FromStr for Number`` (it implements ``FromStr``).
_LESSER: Final = frozenset(("", "impl"))
#: What travels with each candidate through :func:`kept_where` (its places in the rankings).
_Rank = TypeVar("_Rank")


def definitions_first(candidates: Sequence[Candidate], query_terms: list[str], query: str = "") -> list[Candidate]:
    """``candidates`` with those that define the name the query asks for first (:meth:`DefinitionOrder.first`),
    the query read afresh: for one search's several orderings, a :class:`DefinitionOrder`."""
    return DefinitionOrder(query_terms, query).first(candidates)


class DefinitionOrder:
    """What one search's query asks for by name, read once, and which candidates' texts define it, each text
    read once (by :func:`~ctxtrio.text.definitions.defines`): a search orders its candidates by it before
    re-ranking (which decides those it keeps) and again after, and asks which define it on the way
    (:func:`kept_where`, :func:`named_only`); each asked afresh read every text two or three times."""

    __slots__ = ("_defines", "_members", "_query", "name")

    def __init__(self, query_terms: list[str], query: str = "") -> None:
        self._query = query
        #: The name the query asks for (:func:`~ctxtrio.text.asked.asked_name`), if any.
        self.name: Name | None = asked_name(query, query_terms)
        self._defines: dict[str, bool] = {}  # a candidate's text -> whether it defines ``name``
        self._members: tuple[list[Member], frozenset[str] | None] | None = None

    def defines(self, candidate: Candidate) -> bool:
        """Whether ``candidate`` defines the name asked for (:func:`defines_name`; False when none is)."""
        if self.name is None:
            return False
        text = candidate.chunk.text
        held = self._defines.get(text)
        if held is None:
            held = self._defines[text] = defines_name(candidate, self.name)
        return held

    def first(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """``candidates`` with those that define the name the query asks for first, those of a document named as
        the qualifier the query wrote (``library.re`` for ``re.VERBOSE``) before other definitions, each group in
        its given order (all of them as given when the query asks for none); else those that define a member
        (:func:`members_first`), marked where their definitions start."""
        name = self.name
        if name is None:
            return list(candidates)
        first = [c for c in candidates if self.defines(c)]
        if name.qualifier is not None:
            # the page of that qualifier first: re.VERBOSE's own in library.re, not the HOWTO's
            own = [c for c in first if names_qualifier(c.doc_id, name.qualifier)]
            first = own + [c for c in first if c not in own]
        elif not first:
            if self._members is None:  # the members its words spell, and the kinds it says
                self._members = member_names(self._query), asked_keywords(self._query)
            found = members_first(candidates, *self._members)
            first = [replace(candidates[n], defines_at=at) for n, at in found.items()]
            return copies_nearest_first(first) + [candidate for n, candidate in enumerate(candidates) if n not in found]
        return copies_nearest_first(first) + [candidate for candidate in candidates if candidate not in first]


def copies_nearest_first(candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` with those whose text is another's, of a file of a shorter path, in the other's place:
    a tree that ships a copy of a file (@types/node's ``ts4.8/http.d.ts`` of ``http.d.ts``, acorn's
    ``acorn.mjs`` of ``acorn.js``) puts the copy deeper or under a longer name, and which of the two was
    ingested first, which decides their ranks, says nothing."""
    out = list(candidates)
    for n, candidate in enumerate(out):
        for m in range(n + 1, len(out)):
            other = out[m]
            if other.chunk.text == candidate.chunk.text and _nearer(other.source, candidate.source):
                out[n], out[m] = other, candidate
                candidate = other
    return out


def _nearer(source: str, than: str) -> bool:
    """Whether a file's path is shorter than another's, in folders, then in characters."""
    return (source.count("/"), len(source)) < (than.count("/"), len(than))


def members_first(
    candidates: Sequence[Candidate], members: Sequence[Member], kinds: frozenset[str] | None = None
) -> dict[int, int]:
    """When nothing defines the name a query's words spell whole, the candidates that define a member
    its last (or first) words spell of an owner its other words name (``members``, best first, as
    :func:`~ctxtrio.text.asked.member_names` gives them): ``json decoder decode`` asks for Go's
    ``func (dec *Decoder) Decode``, ``hash map get node`` for ``getNode`` under ``public class HashMap``;
    the first member any candidate defines. By their places in ``candidates``, in order, each with where its
    definition's line starts.

    Which member is first: one defined as the kind the query says (``kinds``, the keywords
    :func:`~ctxtrio.text.asked.asked_keywords` gives: ``map entry interface`` asks for ``interface Entry``
    of ``Map``, not ``class MapEntry``), where its owner is named whole near it (its trail, title or line) before
    one whose owner is named inside a name or only by a folder (a crate's name is every one of its definitions' owner: ``Display for
    serde_json Value`` asks for ``impl Display for Value``, not ``enum Value``). Among its definitions, first
    those naming an owner whole (``Optional`` before ``OptionalDouble``), then a keyword's (``class ArrayList``
    before its constructor), then a public one's (Rust's ``pub fn from_str``, not an ``impl FromStr``'s), then
    those in a file named after the member (tokio's ``spawn.rs`` for ``spawn``), each group by document in their given order, a document's by their places in it: a file defines a name's
    main form first, its overloads after (OpenJDK's ``orElseThrow()`` before ``orElseThrow(Supplier)``,
    ``Collections.sort(List)`` before ``sort(List, Comparator)``). Each candidate's text is read once for all
    the members."""
    asked = tuple(members)
    defined = [members_defined(c.chunk.text, asked, _owner_context(c), _folders(c)) for c in candidates]
    passes = [(True, True), (True, False)] if kinds is not None else []
    for of_kind, near in [*passes, (False, True), (False, False)]:
        for member in members:
            found = [
                (n, theirs[member])
                for n, theirs in enumerate(defined)
                if member in theirs
                and (theirs[member].near or not near)
                and not (of_kind and kinds is not None and theirs[member].keyword not in kinds)
            ]
            if found:
                docs = list(dict.fromkeys(candidates[n].doc_id for n, _ in found))  # in their given order
                found.sort(
                    key=lambda one: (
                        _preference(one[1], candidates[one[0]], member),
                        docs.index(candidates[one[0]].doc_id),
                        one[1].hidden,
                        candidates[one[0]].chunk.index,
                    )
                )
                return {n: definition.at for n, definition in found}
    return {}


def _preference(definition: Defined, candidate: Candidate, member: Member) -> tuple[bool, bool, bool, bool]:
    """How :func:`members_first` orders a member's definitions: the owner not named whole, a lesser keyword
    (:data:`_LESSER`), a declaration without a body (a TypeScript ``.d.ts`` file's, a line ending in ``;``: yaml's
    ``public-api.d.ts`` after ``public-api.js``, whose ``function parseDocument(`` is what runs), not in a file
    named after the member; each false first."""
    text = candidate.chunk.text
    line_end = text.find("\n", definition.at)
    line = text[definition.at : line_end if line_end >= 0 else len(text)]
    return (
        not definition.owner_whole,
        definition.keyword in _LESSER,
        candidate.title.endswith(".d.ts") or line.rstrip().endswith(";"),
        spelling(candidate.title.partition(".")[0]) != member.identifier,
    )


def member_in(candidate: Candidate, members: Sequence[Member]) -> bool:
    """Whether ``candidate`` defines one of ``members`` (:func:`~ctxtrio.text.asked.member_names`)."""
    return bool(members_defined(candidate.chunk.text, tuple(members), _owner_context(candidate), _folders(candidate)))


def _owner_context(candidate: Candidate) -> str:
    """Where a candidate names the owners of what it defines, besides the definition's line: its heading
    trail and its document's title (``public class HashMap``, ``bufio.go``)."""
    return " ".join((*candidate.chunk.trail, candidate.title))


def _folders(candidate: Candidate) -> str:
    """The folders a candidate's file is in (:func:`source_folders`: Go's package ``strconv`` of
    ``strconv/atof.go``), which name an owner of every definition in it."""
    return " ".join(source_folders(candidate.source))


def file_names(title: str, source: str) -> frozenset[str]:
    """The names that make a document's file an owner of its definitions, spelled: its name's stem (``title``:
    ``subprocess.py``, ``HashMap.java``) and its folders' names without their versions (Go's ``strconv/``, a
    crate's ``tokio-1.24.2/``). Asked once a document version, by the first member search after it was ingested
    (:class:`~.file_owners.FileOwners`, which keeps the answers)."""
    stem, dot, extension = title.rpartition(".")
    own = (stem,) if dot and extension.isalnum() else ()
    return frozenset(spelling(name) for name in (*own, *(_VERSION.sub("", f) for f in source_folders(source))))


def source_folders(source: str) -> tuple[str, ...]:
    """The names of the :data:`_FOLDERS` folders a document's file is in, nearest first (a Go package, a Python
    package, a crate's ``tokio-1.24.2``); none for a document not read from a file."""
    parts = source.split("/")
    return tuple(reversed(parts[-1 - _FOLDERS : -1])) if len(parts) > 1 else ()


def defines_name(candidate: Candidate, name: Name) -> bool:
    """Whether ``candidate`` defines ``name`` (:func:`~ctxtrio.text.definitions.defines`)."""
    return defines(candidate.chunk.text, name.identifier, name.qualifier)


def named_only(order: DefinitionOrder, query_terms: Sequence[str], candidates: Sequence[Candidate]) -> bool:
    """Whether a query spells a name whole (``order.name``), not one of its own words nor qualified, that no
    candidate defines (none holds it, or they only use it: ``module graph get module``, where ``moduleGraph`` is
    in every caller of webpack's ModuleGraph and ``getModule`` is asked for): then the members its words spell are
    looked for (:func:`members_first`)."""
    name = order.name
    if name is None or name.qualifier is not None or name.identifier in query_terms:
        return False
    return not any(order.defines(c) for c in candidates)


def kept_where(
    holds: Callable[[Candidate], bool],
    checked: Collection[tuple[str, int]] | None,
    candidates: Sequence[Candidate],
    ranks: Sequence[_Rank],
) -> tuple[list[Candidate], list[_Rank]]:
    """``candidates`` without those ``checked`` (``(doc_id, chunk index)``: rows a search read only for the
    definition they may hold; None: every one, as the rows read only for a member) that do not hold it (``holds``:
    :func:`defines_name`, :func:`member_in`), and each kept one's ``ranks`` with it: the two lists stay in step."""
    kept = [
        (c, r)
        for c, r in zip(candidates, ranks, strict=True)
        if (checked is not None and (c.doc_id, c.chunk.index) not in checked) or holds(c)
    ]
    return [c for c, _ in kept], [r for _, r in kept]
