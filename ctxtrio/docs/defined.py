"""Which search candidates define the name a query asks for, and those first (for :mod:`.search`).

A function or class asked for by its words should bring its definition before the chunks that use it most
(:func:`definitions_first`): the name the query's words spell whole (``json decode error``:
``class JSONDecodeError``), qualified where the query wrote a dotted name (``re.VERBOSE`` on ``library.re``);
else, in source code, a member its words spell of an owner its other words name (:func:`members_first`:
``json decoder decode``, Go's ``func (dec *Decoder) Decode``). Pure: no index, no trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text.definitions import Name, asked_name, defines, defines_member, member_names, names_qualifier

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .packing import Candidate

__all__ = ["definitions_first", "member_in", "members_first"]


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
        first = members_first(candidates, query)
    return first + [candidate for candidate in candidates if candidate not in first]


def members_first(candidates: Sequence[Candidate], query: str) -> list[Candidate]:
    """When nothing defines the name a query's words spell whole, the candidates that define a member
    its last (or first) words spell of an owner its other words name (:func:`~ctxtrio.text.definitions.
    member_names`): ``json decoder decode`` asks for Go's ``func (dec *Decoder) Decode``, ``hash map get
    node`` for ``getNode`` under ``public class HashMap``; the first member any candidate defines."""
    for member in member_names(query):
        found = [c for c in candidates if defines_member(c.chunk.text, member, " ".join((*c.chunk.trail, c.title)))]
        if found:
            return found
    return []


def member_in(candidate: Candidate, query: str) -> bool:
    """Whether ``candidate`` defines a member the query's words spell (:func:`~ctxtrio.text.definitions.member_names`)."""
    context = " ".join((*candidate.chunk.trail, candidate.title))
    return any(defines_member(candidate.chunk.text, member, context) for member in member_names(query))
