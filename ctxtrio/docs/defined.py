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
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, TypeVar

from ..text.asked import asked_keywords, asked_name
from ..text.definitions import Defined, Member, Name, defines, members_defined, names_qualifier, spelling
from ..text.kinds import of_source
from ..text.member_names import member_names, written_names
from ..text.query import QUESTION_WORDS
from ..text.terms import STOPWORDS, terms

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

    from .packing import Candidate

__all__ = [
    "DefinitionOrder",
    "copies_nearest_first",
    "defines_name",
    "definitions_first",
    "file_names",
    "in_tests",
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
#: A query's words as written (:func:`_left_over`).
_QUERY_WORDS: Final = re.compile(r"[\w$]+")
_NOTHING: Final[Mapping[Member, Defined]] = MappingProxyType({})
#: The folders that hold tests (:func:`in_tests`).
_TEST_FOLDERS: Final = frozenset(("test", "tests", "testing", "testdata", "__tests__"))
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
        self._members: list[Member] | None = None

    def defines(self, candidate: Candidate) -> bool:
        """Whether ``candidate`` defines the name asked for (:func:`defines_name`; False when none is)."""
        if self.name is None:
            return False
        text = candidate.chunk.text
        held = self._defines.get(text)
        if held is None:
            held = self._defines[text] = defines_name(candidate, self.name)
        return held

    @property
    def members(self) -> list[Member]:
        """The members the query's words spell (:func:`~ctxtrio.text.member_names.member_names`), read once."""
        if self._members is None:
            self._members = member_names(self._query)
        return self._members

    def first(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """``candidates`` with those that define the name the query asks for first, those of a document named as
        the qualifier the query wrote (``library.re`` for ``re.VERBOSE``) before other definitions, then those of
        source code that define it as a member of the qualifier (:func:`_qualified_members`), each group in its
        given order; else those that define a member (:func:`members_first`), marked where their definitions
        start: also for a question that writes names as code (``how does WaitGroup Wait block ...``), which asks
        for no name whole."""
        name, query = self.name, self._query
        first = [c for c in candidates if self.defines(c)]
        if name is None or (not first and name.qualifier is None):
            members = self.members
            found = members_first(candidates, members, asked_keywords(query), written_names(query), query)
            first = [replace(candidates[n], defines_at=at) for n, at in found.items()]
            return copies_nearest_first(first) + [candidate for n, candidate in enumerate(candidates) if n not in found]
        if name.qualifier is not None:
            # the page of that qualifier first: re.VERBOSE's own in library.re, not the HOWTO's
            own = [c for c in first if names_qualifier(c.doc_id, name.qualifier)]
            rest = [c for c in first if c not in own]
            owned = _qualified_members(rest, name, query)
            taken = {id(rest[n]) for n in owned}
            first = own + [replace(rest[n], defines_at=at) for n, at in owned.items()]
            first += [c for c in rest if id(c) not in taken]
            done = {id(c) for c in own} | {id(c) for c in rest}
            return copies_nearest_first(first) + [c for c in candidates if id(c) not in done]
        return copies_nearest_first(first) + [candidate for candidate in candidates if candidate not in first]


def _qualified_members(candidates: Sequence[Candidate], name: Name, query: str) -> dict[int, int]:
    """Of ``candidates`` that define a dotted name's last part, those of source code that define it as a member of
    its qualifier (:func:`members_first`: named in its trail, its line, its file's name or folders), in that order,
    each with where its definition starts: ``Path.read_text`` asks for pathlib's ``class Path`` > ``def
    read_text``, not importlib.metadata's; ``errors.Is`` for Go's ``errors/wrap.go``'s ``func Is``."""
    assert name.qualifier is not None
    member = Member(name.identifier, (name.qualifier,))
    return members_first(candidates, [member], asked_keywords(query), written_names(query), query)


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
    candidates: Sequence[Candidate],
    members: Sequence[Member],
    kinds: frozenset[str] | None = None,
    written: frozenset[str] = frozenset(),
    query: str = "",
) -> dict[int, int]:
    """When nothing defines the name a query's words spell whole, the candidates that define a member
    its last (or first) words spell of an owner its other words name (``members``, best first, as
    :func:`~ctxtrio.text.definitions.member_names` gives them): ``json decoder decode`` asks for Go's
    ``func (dec *Decoder) Decode``, ``hash map get node`` for ``getNode`` under ``public class HashMap``;
    the first member any candidate defines. By their places in ``candidates``, in order, each with where its
    definition's line starts.

    Which member is first: one defined as the kind the query says (``kinds``, the keywords
    :func:`~ctxtrio.text.definitions.asked_keywords` gives: ``map entry interface`` asks for ``interface Entry``
    of ``Map``, not ``class MapEntry``), where its owner is named whole near it (its trail, title or line) before
    one whose owner is named inside a name or only by a folder (a crate's name is every one of its definitions' owner: ``Display for
    serde_json Value`` asks for ``impl Display for Value``, not ``enum Value``). Among its definitions, first
    those naming an owner whole (``Optional`` before ``OptionalDouble``), then a keyword's (``class ArrayList``
    before its constructor), then a public one's (Rust's ``pub fn from_str``, not an ``impl FromStr``'s), then
    those in a file named after the member (tokio's ``spawn.rs`` for ``spawn``), each group by document in their given order, a document's by their places in it: a file defines a name's
    main form first, its overloads after (OpenJDK's ``orElseThrow()`` before ``orElseThrow(Supplier)``,
    ``Collections.sort(List)`` before ``sort(List, Comparator)``). Each candidate's text is read once for all
    the members."""
    if not members:
        return {}
    asked = tuple(members)
    defined = [_members_defined(c, asked, kinds) for c in candidates]
    passes = [(True, True), (True, False)] if kinds is not None else []
    for of_kind, near in [*passes, (False, True), (False, False)]:
        for member in members:
            found = [
                (n, theirs[member])
                for n, theirs in enumerate(defined)
                if member in theirs
                and (not near or _near(theirs[member], candidates[n], written))
                and not (of_kind and kinds is not None and theirs[member].keyword not in kinds)
            ]
            if found:
                docs = list(dict.fromkeys(candidates[n].doc_id for n, _ in found))  # in their given order
                said = _left_over(query, member)
                found.sort(
                    key=lambda one: (
                        one[1].written not in written,
                        _preference(one[1], candidates[one[0]], member),
                        docs.index(candidates[one[0]].doc_id),
                        _negated(_said_in_parameters(one[1], candidates[one[0]].chunk.text, said)),
                        one[1].hidden,
                        candidates[one[0]].chunk.index,
                    )
                )
                return {n: definition.at for n, definition in found}
    return {}


def _negated(pair: tuple[int, int]) -> tuple[int, int]:
    return (-pair[0], -pair[1])


def _left_over(query: str, member: Member) -> frozenset[str]:
    """The words of ``query`` (spelled) but the first of each of ``member``'s owners, the words that spell its name,
    stopwords and question words: what it says of the member's parameters (``string from index`` is left of
    ``string indexOf string from index``; ``take uri`` of ``how does HttpRequest.newBuilder take a URI``)."""
    words = [spelling(word) for word in _QUERY_WORDS.findall(query)]
    for owner in member.owners:
        if owner in words:
            words.remove(owner)
    for start in range(len(words)):
        end, joined = start, ""
        while end < len(words) and len(joined) < len(member.identifier):
            joined += words[end]
            end += 1
        if joined == member.identifier:
            del words[start:end]
            break
    return frozenset(words) - STOPWORDS - QUESTION_WORDS


def _said_in_parameters(definition: Defined, text: str, said: Collection[str]) -> tuple[int, int]:
    """How many of the words a query says beside a member's name (``said``, :func:`_left_over`) the parameters of
    a definition of it hold, on its line: of a file's overloads, the one the query describes (``string indexOf
    string from index``: ``indexOf(String str, int fromIndex)``, not ``indexOf(int ch, int fromIndex)``), and of
    those that hold as many, the one of fewer parameters (both: the more, the better; ``binarySearch(int[] a, int key)``, not
    ``binarySearch(long[] a, int fromIndex, int toIndex, long key)``, for ``arrays binary search int array``)."""
    if not said:
        return (0, 0)
    line_end = text.find("\n", definition.at)
    line = text[definition.at : line_end if line_end >= 0 else len(text)]
    name_at = line.find(definition.written)
    opened = line.find("(", name_at + len(definition.written)) if definition.written and name_at >= 0 else -1
    if opened < 0:
        return (0, 0)
    parameters = line[opened:]
    return (len(frozenset(terms(parameters)).intersection(said)), -parameters.count(","))


def _near(definition: Defined, candidate: Candidate, written: frozenset[str]) -> bool:
    """Whether a definition is a member's own, as :func:`members_first`'s first passes ask: its owner named near it
    (:class:`~ctxtrio.text.definitions.Defined`) or its name written as the query writes it, case and all, and not
    in a test's file (:func:`in_tests`)."""
    return (definition.near or definition.written in written) and not in_tests(candidate.source)


def in_tests(source: str) -> bool:
    """Whether a document's file is a test's, by the conventions of the languages whose definitions are found: in a
    folder of tests (``tests/``, ``test/``, ``testdata/``, ``__tests__/``) or named as one (Go's ``wrap_test.go``,
    Python's ``test_x.py`` and ``x_test.py``, Java's ``XTest.java``, JavaScript's ``x.test.js`` and ``x.spec.ts``).
    Its definitions are helpers (Go's ``errorT``'s ``Is`` in ``errors/wrap_test.go``), not the API asked for."""
    *folders, name = source.split("/")
    stem = name.partition(".")[0]
    return (
        not _TEST_FOLDERS.isdisjoint(folders)
        or stem.endswith(("_test", "Test", "Tests"))
        or stem.startswith("test_")
        or ".test." in name
        or ".spec." in name
    )


def _preference(definition: Defined, candidate: Candidate, member: Member) -> tuple[bool, bool, bool, bool, bool, bool]:
    """How :func:`members_first` orders a member's definitions: in a test's file (:func:`in_tests`), nested (an
    indented line) in what does not name the owner (``logging.getLogger``: the module's ``def getLogger``, not
    ``class Manager``'s, where only the folder names ``logging``), the owner not named whole, a lesser keyword
    (:data:`_LESSER`), a declaration without a body (a TypeScript ``.d.ts`` file's, a line ending in ``;``: yaml's
    ``public-api.d.ts`` after ``public-api.js``, whose ``function parseDocument(`` is what runs), not in a file
    named after the member; each false first."""
    text = candidate.chunk.text
    line_end = text.find("\n", definition.at)
    line = text[definition.at : line_end if line_end >= 0 else len(text)]
    return (
        in_tests(candidate.source),
        line[:1].isspace() and not definition.near,  # a member of what it is nested in, which is not the owner
        not definition.owner_whole,
        definition.keyword in _LESSER,
        candidate.title.endswith(".d.ts") or line.rstrip().endswith(";"),
        spelling(candidate.title.partition(".")[0]) != member.identifier,
    )


def member_in(candidate: Candidate, members: Sequence[Member], kinds: frozenset[str] | None = None) -> bool:
    """Whether ``candidate`` defines one of ``members`` (:func:`~ctxtrio.text.definitions.member_names`)."""
    return bool(_members_defined(candidate, tuple(members), kinds))


def _members_defined(
    candidate: Candidate, members: tuple[Member, ...], kinds: frozenset[str] | None = None
) -> Mapping[Member, Defined]:
    """Which of ``members`` a candidate defines (:func:`~ctxtrio.text.definitions.members_defined`), if it is of a
    source file (by its title's extension, :func:`~ctxtrio.text.kinds.kind_for`): a manual's example (a ``def`` in
    a reST code block) defines nothing its reader asks for, and the manuals' questions ("How can I run a coroutine
    with a timeout in asyncio?") are not to be answered by their examples' names."""
    if not of_source(candidate.title):
        return _NOTHING
    return members_defined(candidate.chunk.text, members, _owner_context(candidate), _folders(candidate), kinds)


def _owner_context(candidate: Candidate) -> str:
    """Where a candidate names the owners of what it defines, besides the definition's line: its heading
    trail and its document's title without its extension (``public class HashMap``, ``bufio``: the ``go`` of
    ``parser.go`` names no owner, yet it took Go's ``type parser struct`` for a member of ``go``'s in ``where is
    ParseFile defined in go/parser``)."""
    stem, dot, extension = candidate.title.rpartition(".")
    title = stem if dot and extension.isalnum() else candidate.title
    return " ".join((*candidate.chunk.trail, title))


def _folders(candidate: Candidate) -> str:
    """The folders a candidate's file is in (:func:`source_folders`: Go's package ``strconv`` of
    ``strconv/atof.go``), which name an owner of every definition in it."""
    return " ".join(source_folders(candidate.source))


def file_names(title: str, source: str) -> frozenset[str]:
    """The names that make a document's file an owner of its definitions, spelled: its name's stem (``title``:
    ``subprocess.py``, ``HashMap.java``; kebab-case joined: eslint's ``source-code.js``) and its folders' names
    without their versions (Go's ``strconv/``, a crate's ``tokio-1.24.2/``). Asked once a document version, by the
    first member search after it was ingested (:class:`~.file_owners.FileOwners`, which keeps the answers)."""
    stem, dot, extension = title.rpartition(".")
    own = (stem,) if dot and extension.isalnum() else ()
    names = (*own, *(_VERSION.sub("", f) for f in source_folders(source)))
    return frozenset(spelling(name).replace("-", "") for name in names)  # eslint's ``source-code.js``: sourcecode


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
