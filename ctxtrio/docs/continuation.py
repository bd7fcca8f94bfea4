"""A definition cut by its chunk's end is followed by the next chunk, which holds the rest of it.

Chunks hold several short sections or API entries; an entry that starts near a chunk's end
(Node's ``### `fs.rm(path[, options], callback)``` as the last lines of one chunk, its
options in the next) is found by its definition line, which :func:`~.search.definitions_first`
puts first, while what it says is in the next chunk, which the words of the query alone
rank low. When the first hit defines the name the query asks for and no other definition
follows it in the chunk, the chunk after it is shown right after it: read, or moved up when it
is a hit already.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .._errors import NotFoundError
from ..text.definitions import asked_name, definition_at, last_definition, spelling
from .packing import Candidate

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .catalog import DocEntry
    from .repository import Repository

__all__ = ["cut_definition", "with_continuation"]

#: An identifier as written (definitions spell it without ``_`` and ``$``, lowercased).
_WORD: Final = re.compile(r"[A-Za-z_$][\w$]*")


def cut_definition(candidate: Candidate, query_terms: Sequence[str], query: str) -> bool:
    """Whether ``candidate`` defines the name the query asks for, spelled as the query writes it (case
    too), and no other definition follows it in its text: the entry runs to the chunk's end (and on
    into the next chunk, if there is one)."""
    name = asked_name(query, query_terms)
    if name is None:
        return False
    text = candidate.chunk.text
    at = definition_at(text, name.identifier, name.qualifier)
    if at is None or not last_definition(text, at):
        return False
    end = text.find("\n", at)
    line = text[at:] if end < 0 else text[at:end]
    return bool(_written(line, name.identifier) & _written(query, name.identifier))


def _written(text: str, identifier: str) -> set[str]:
    """The words of ``text`` that spell ``identifier`` with case: definitions match names case aside
    (:func:`~ctxtrio.text.definitions.defines`), but the room of the chunk after is given only to the
    entry the query writes as it is written (not bdb's class Breakpoint for 'breakpoint()', which
    :func:`~.search.definitions_first` puts first with library.functions' breakpoint)."""
    return {word for word in _WORD.findall(text) if spelling(word) == identifier}


async def with_continuation(
    repo: Repository,
    candidates: Sequence[Candidate],
    query_terms: Sequence[str],
    query: str,
    limit: int,
    searched: Mapping[str, DocEntry],
) -> list[Candidate]:
    """``candidates`` (at most ``limit``), the chunk after the first put second when the first
    ends with the start of the definition the query asks for (:func:`cut_definition`).

    ``searched``: journal → entry, the generations the candidates were read from. The next chunk
    is taken only from the first's own generation: a document ingested again since the search
    began gives none (its chunk after would continue another text)."""
    kept = list(candidates[:limit])
    if not kept or not cut_definition(kept[0], query_terms, query):
        return kept
    first = kept[0]
    following = first.chunk.index + 1
    ranked = [c for c in kept[1:] if c.doc_id == first.doc_id and c.chunk.index == following]
    if ranked:  # a hit already, maybe one that would not fit: it follows its start
        return [first, ranked[0], *(c for c in kept[1:] if c is not ranked[0])]
    entry = next((one for one in searched.values() if one.doc_id == first.doc_id), None)
    if entry is None or following >= entry.info.chunks or not _current(repo, entry):
        return kept
    chunks = await repo.chunk_range(entry, following, following)
    if not chunks or chunks[0].index != following or not _current(repo, entry):
        return kept  # replaced meanwhile: chunk_range may have read the newer generation
    return [first, Candidate(first.doc_id, first.title, chunks[0], first.score), *kept[1:]][:limit]


def _current(repo: Repository, entry: DocEntry) -> bool:
    """Whether ``entry``'s generation is still its document's current one."""
    try:
        return repo.entry(entry.doc_id).gen == entry.gen
    except NotFoundError:
        return False
