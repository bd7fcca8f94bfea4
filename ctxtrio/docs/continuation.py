"""An API entry cut by its chunk's end: each of its two parts brings the other.

Chunks hold several short sections or API entries; an entry that starts near a chunk's end
(Node's ``### `fs.rm(path[, options], callback)``` as the last lines of one chunk, its
options in the next) is found by its definition line, which :func:`~.defined.definitions_first`
puts first, while what it says is in the next chunk, which the words of the query alone
rank low. When the first hit defines the name the query asks for and no other definition
follows it in the chunk, the chunk after it is shown right after it: read, or moved up when it
is a hit already (:func:`with_continuation`).

The other way round, the continuation may rank above the start (:func:`entry_starts_first`):
``datetime.astimezone``'s entry starts near the end of library.datetime's chunk #35 with
"Return a datetime object with new tzinfo attribute tz, adjusting the date and time data so
the result is the same UTC time as self", and ends in #36 with its equivalent code, whose
"Convert self to UTC, and attach the new time zone object" ranked #36 3rd and #35 8th for
"How do I convert a datetime to another time zone?". The start, the lines that say what the
entry is, then comes right above its continuation, shown from its directive.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from .._errors import NotFoundError
from ..text.asked import asked_name
from ..text.definitions import definition_at, last_definition, spelling
from ..text.markup import API_ENTRY
from ..text.sections import entry_starts
from ..text.stems import light_stem
from ..text.terms import terms
from ..text.words import stemmed_terms
from .packing import Candidate

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .catalog import DocEntry
    from .chunks import StoredChunk
    from .repository import Repository

__all__ = ["cut_definition", "entry_start_of", "entry_starts_first", "with_continuation"]

#: A markdown heading that names code (Node's ``### `fs.rm(path[, options], callback)```).
_CODE_HEADING: Final = re.compile(r"#{1,6}[ \t]+[^\n]*`")

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
    :func:`~.defined.definitions_first` puts first with library.functions' breakpoint)."""
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


def entry_starts_first(candidates: Sequence[Candidate], query_terms: Sequence[str]) -> list[Candidate]:
    """``candidates`` with the start of an API entry ranked below its continuation moved right above
    it, to be shown from the entry's directive (``start``), when the continuation is a hit for that
    entry and the start says as much of the query: the continuation's lines before its first entry
    start hold more of the query's words than the rest of it (not library.tempfile's #2, whose lines
    of TemporaryFile's notes come before NamedTemporaryFile's entry, for "When is a
    NamedTemporaryFile deleted?"), and the entry's lines in its first
    chunk hold as many as the continuation does."""
    stems = frozenset(map(light_stem, query_terms))
    out = list(candidates)
    position = 0
    while position < len(out):
        hit = out[position]
        start = next(
            (
                (n, at)
                for n in range(position + 1, len(out))
                if out[n].doc_id == hit.doc_id
                and (at := entry_start_of(out[n].chunk, hit.chunk)) is not None
                and _asked_in_entry(out[n].chunk, at, hit.chunk, stems)
            ),
            None,
        )
        if start is not None:
            out.insert(position, replace(out.pop(start[0]), start=start[1]))
            position += 1
        position += 1
    return out


def entry_start_of(previous: StoredChunk, chunk: StoredChunk) -> int | None:
    """Where in ``previous`` the API entry starts that ``chunk``, the chunk after it, goes on with; None
    when it does not. The last entry ``previous`` starts (:func:`~ctxtrio.text.sections.entry_starts`)
    must be an API directive or a heading that names code, the one ``chunk``'s heading trail ends with,
    and not a line ``chunk`` holds itself (chunks overlap). A section under a plain heading is left
    alone: its start is an introduction, not a definition (moved up, PostgreSQL's lost 2 answers)."""
    if previous.index + 1 != chunk.index or not chunk.trail:
        return None
    starts = entry_starts(previous.text)
    if not starts:
        return None
    lines = previous.text.split("\n")
    number = max(starts)
    line = lines[number]
    if not (API_ENTRY.match(line) or _CODE_HEADING.match(line)):
        return None
    titled = set(terms(chunk.trail[-1]))
    if not titled or not titled <= set(terms(line)) or line.strip() in chunk.text:
        return None
    return sum(len(one) + 1 for one in lines[:number])


def _asked_in_entry(previous: StoredChunk, at: int, chunk: StoredChunk, stems: frozenset[str]) -> bool:
    """Whether ``chunk`` is a hit for the entry starting at ``at`` in ``previous`` and that part says as much
    of the query (``stems``); see :func:`entry_starts_first`."""
    starts = entry_starts(chunk.text)
    cut = len(chunk.text)
    if starts:
        cut = sum(len(one) + 1 for one in chunk.text.split("\n")[: min(starts)])
    continued = stems.intersection(stemmed_terms(chunk.text[:cut], stem=True))
    after = stems.intersection(stemmed_terms(chunk.text[cut:], stem=True))
    held = continued | after
    said = stems.intersection(stemmed_terms(previous.text[at:], stem=True))
    return len(continued) > len(after) and len(said) >= len(held)
