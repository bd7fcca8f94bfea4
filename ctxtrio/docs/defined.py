"""Which search candidates define the name a query asks for, and those first (for :mod:`.search`).

A function or class asked for by its words should bring its definition before the chunks that use it most
(:func:`definitions_first`): the name the query's words spell whole (``json decode error``:
``class JSONDecodeError``), qualified where the query wrote a dotted name (``re.VERBOSE`` on ``library.re``);
else, in source code, a member its words spell of an owner its other words name (:func:`members_first`:
``json decoder decode``, Go's ``func (dec *Decoder) Decode``). Pure: no index, no trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from ..text.definitions import Member, Name, asked_name, defines, member_names, members_defined, names_qualifier

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from .packing import Candidate

__all__ = ["defines_name", "definitions_first", "kept_where", "member_in", "members_first"]

#: What travels with each candidate through :func:`kept_where` (its places in the rankings).
_Rank = TypeVar("_Rank")


def definitions_first(candidates: Sequence[Candidate], query_terms: list[str], query: str = "") -> list[Candidate]:
    """``candidates`` with those that define the name the query asks for first
    (:func:`~ctxtrio.text.definitions.asked_name`), those of a document named as the
    qualifier the query wrote (``library.re`` for ``re.VERBOSE``) before other definitions,
    each group in its given order (all of them as given when the query asks for none)."""
    name: Name | None = asked_name(query, query_terms)
    if name is None:
        return list(candidates)
    first = [c for c in candidates if defines(c.chunk.text, name.identifier, name.qualifier)]
    if name.qualifier is not None:  # the page of that qualifier first: re.VERBOSE's own in library.re, not the HOWTO's
        own = [c for c in first if names_qualifier(c.doc_id, name.qualifier)]
        first = own + [c for c in first if c not in own]
    elif not first:
        first = members_first(candidates, member_names(query))
    return first + [candidate for candidate in candidates if candidate not in first]


def members_first(candidates: Sequence[Candidate], members: Sequence[Member]) -> list[Candidate]:
    """When nothing defines the name a query's words spell whole, the candidates that define a member
    its last (or first) words spell of an owner its other words name (``members``, best first, as
    :func:`~ctxtrio.text.definitions.member_names` gives them): ``json decoder decode`` asks for Go's
    ``func (dec *Decoder) Decode``, ``hash map get node`` for ``getNode`` under ``public class HashMap``;
    the first member any candidate defines. Each candidate's text is read once for all the members."""
    defined = [members_defined(c.chunk.text, members, _owner_context(c)) for c in candidates]
    for member in members:
        found = [c for c, theirs in zip(candidates, defined, strict=True) if member in theirs]
        if found:
            return found
    return []


def member_in(candidate: Candidate, members: Sequence[Member]) -> bool:
    """Whether ``candidate`` defines one of ``members`` (:func:`~ctxtrio.text.definitions.member_names`)."""
    return bool(members_defined(candidate.chunk.text, members, _owner_context(candidate)))


def _owner_context(candidate: Candidate) -> str:
    """Where a candidate names the owners of what it defines, besides the definition's line: its heading
    trail and its document's title (``public class HashMap``, ``bufio.go``)."""
    return " ".join((*candidate.chunk.trail, candidate.title))


def defines_name(candidate: Candidate, name: Name) -> bool:
    """Whether ``candidate`` defines ``name`` (:func:`~ctxtrio.text.definitions.defines`)."""
    return defines(candidate.chunk.text, name.identifier, name.qualifier)


def kept_where(
    holds: Callable[[Candidate], bool],
    checked: Collection[tuple[str, int]],
    candidates: Sequence[Candidate],
    ranks: Sequence[_Rank],
) -> tuple[list[Candidate], list[_Rank]]:
    """``candidates`` without those ``checked`` (``(doc_id, chunk index)``: rows a search read only for the
    definition they may hold) that do not hold it (``holds``: :func:`defines_name`, :func:`member_in`), and
    each kept one's ``ranks`` with it: the two lists stay in step."""
    kept = [
        (c, r) for c, r in zip(candidates, ranks, strict=True) if (c.doc_id, c.chunk.index) not in checked or holds(c)
    ]
    return [c for c, _ in kept], [r for _, r in kept]
