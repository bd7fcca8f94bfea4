"""Re-ranking search candidates by their best passage, not their whole chunk. Pure.

BM25 scores a chunk as a bag of words: a chunk that names a function ten times in
passing outranks the one that defines it, and a chunk holding the query's words far
apart ranks like one holding them side by side. :func:`rerank` scores each candidate
also by its best window of about :data:`PASSAGE_TOKENS` tokens
(:func:`~ctxtrio.text.passages.passage_score`: distinct query terms, proximity, phrases,
a definition line) and orders by the sum of both, each relative to its best among
the candidates, plus the share of the query its headings hold. Within the page ranked
first, a chunk that defines an identifier the query writes (its entry, an option's or
parameter's term: ``* `highWaterMark` {number}``) gains :data:`INTRO_WEIGHT`: BM25 and
passages favour the chunks that repeat a name (examples, other entries' notes) over the
one that says what it is. Release notes (:func:`release_record`) lose :data:`RELEASE_WEIGHT`, but for those of a release the query
names by its number ("added in Python 3.10").
Chunks stay the unit of reading; only the order changes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ..text.headings import heading_share
from ..text.literal import indent_of
from ..text.naming import defines_one_of, written_identifiers
from ..text.passages import passage_score
from .packing import headings, tokens_per_char

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.words import Alike
    from .packing import Candidate

__all__ = [
    "HEADING_WEIGHT",
    "INNER_TITLE_WEIGHT",
    "INTRO_WEIGHT",
    "PASSAGE_TOKENS",
    "PASSAGE_WEIGHT",
    "RELEASE_WEIGHT",
    "definition_terms",
    "inner_titles",
    "release_record",
    "rerank",
]

#: The retrieval unit: the size of the window a candidate is scored by.
PASSAGE_TOKENS: Final = 120
#: Weight of the passage score against BM25 (each relative to the best candidate's).
PASSAGE_WEIGHT: Final = 1.0
#: Weight of the share of the query's words a candidate's headings hold (0.0 to 1.0).
HEADING_WEIGHT: Final = 1.0
#: Added to a chunk of the first-ranked page that defines an identifier the query writes.
#: 1.0 is more than a chunk's heading share: such a chunk comes first unless another of that page
#: beats it by more (0.5: one answer fewer at 500 tokens on postgresql, one at 1,000 on Node 18's
#: docs; 2.0: python3.11-doc one fewer at 500 and at 2,000).
INTRO_WEIGHT: Final = 1.0
#: What a title underlined inside a chunk (:func:`inner_titles`) adds of the heading share it would add
#: as a heading of the trail. A chunk that begins in Python's ``pass`` section holds "The del statement"
#: section whole, and its title says what the chunk answers; counted fully (as e900d30 meant to, and
#: branch room11-title measured in session 11), FAQ question titles and pages' own titles drew stray
#: chunks first: dev sum 321 / 391 / 417 at 500 / 1,000 / 2,000 against 317 / 393 / 423 (0.33:
#: 318 / 393 / 422, 0.75: 322 / 393 / 419, 0.5: 322 / 394 / 422, right file in the top 3 514 against 512).
#: The term of a definition list inside a chunk (:func:`definition_terms`) adds as much.
INNER_TITLE_WEIGHT: Final = 0.5
#: Taken off a chunk of release notes (:func:`release_record`): half a heading share. 1.0 answered
#: alike on the bench's sets, 0.25 ranked python3.11-doc's right file in the top 3 once fewer.
RELEASE_WEIGHT: Final = 0.5


def rerank(
    candidates: Sequence[Candidate],
    query_terms: Sequence[str],
    *,
    passage_tokens: int = PASSAGE_TOKENS,
    weight: float = PASSAGE_WEIGHT,
    heading_weight: float = HEADING_WEIGHT,
    alike: Alike = (),
    query: str = "",
) -> list[Candidate]:
    """``candidates`` best first by BM25 plus ``weight`` times their best passage's score
    plus ``heading_weight`` times the share of the query's words their headings hold
    (:func:`~.packing.headings`: trail and document name), less :data:`RELEASE_WEIGHT` for a
    chunk of release notes, unless of a release ``query`` names (:func:`named_versions`); plus :data:`INTRO_WEIGHT` for a chunk of the page that sum ranks
    first that defines an identifier the query writes (:func:`~ctxtrio.text.naming.defines_one_of`;
    only there: ``highWaterMark`` is an option of a dozen pages, and the one the query is about
    is the one ranked first); ties keep the given order; each keeps its BM25 ``score``. ``alike``: the
    documentation's words the search also looked for (the thesaurus's), which the passage score counts
    at a share of the word each stands for (:data:`~ctxtrio.text.runs.ALIKE_SHARE`). A ranking fused with
    semantic recall (a candidate ``by_meaning``: its score is a similarity, not BM25)
    is returned as it is."""
    if len(candidates) < 2 or weight <= 0 or any(c.by_meaning for c in candidates):
        return list(candidates)  # a fused ranking (scores of two kinds) keeps its order
    passages = [
        passage_score(c.chunk.text, query_terms, passage_tokens, tokens_per_char(c.chunk), alike) for c in candidates
    ]
    top_bm25 = max(c.score for c in candidates) or 1.0
    top_passage = max(passages) or 1.0
    versions = named_versions(query)
    about = [heading_weight * _heading_share(c, query_terms) - _release_weight(c, versions) for c in candidates]
    sums = [
        candidates[n].score / top_bm25 + weight * passages[n] / top_passage + about[n] for n in range(len(candidates))
    ]
    identifiers = written_identifiers(query_terms)
    if identifiers and INTRO_WEIGHT > 0:
        first = candidates[min(range(len(sums)), key=lambda n: (-sums[n], n))].doc_id
        for n, candidate in enumerate(candidates):
            if candidate.doc_id == first and defines_one_of(candidate.chunk.text, identifiers):
                sums[n] += INTRO_WEIGHT
    keyed = sorted(range(len(candidates)), key=lambda n: (-sums[n], n))
    return [candidates[n] for n in keyed]


#: A heading that starts inside a chunk: a markdown ATX heading or a reST/Sphinx API description
#: (``.. function:: groupby(iterable, key=None)``; not ``.. note::`` or ``.. index::``).
#: A title underlined inside the chunk counts less (:data:`_INNER_TITLE`).
_INNER_HEADING: Final = re.compile(
    r"^(?:#{1,6}[ \t]+(?P<atx>\S.*)"
    r"|[ \t]*\.\.[ \t]+(?:[\w-]+:)?(?:function|class|method|classmethod|staticmethod|attribute|property|exception|data"
    r"|decorator|module|option|cmdoption|envvar|describe|object|type|member|macro|var|command|variable)::[ \t]+(?P<entry>\S.*))",
    re.MULTILINE,
)


def _heading_share(candidate: Candidate, query_terms: Sequence[str]) -> float:
    """The share of the query's words a candidate's headings hold: its trail and document
    name, with at most one of the headings that start inside its chunk (a chunk that begins
    under ``function filterfalse`` and holds the entry ``function groupby`` is about either); a
    title underlined inside it, or the term of a definition list inside it, adds :data:`INNER_TITLE_WEIGHT` of what
    it would add."""
    about = headings(candidate)
    best = heading_share(about, query_terms)
    text = candidate.chunk.text
    if best >= 1.0:
        return best
    if "\n#" in text or ".. " in text:
        for match in _INNER_HEADING.finditer(text):
            inner = match.group("atx") or match.group("entry")
            best = max(best, heading_share((*about, inner), query_terms))
    titled = best
    for title in (*inner_titles(text), *definition_terms(text)):
        gain = heading_share((*about, title), query_terms) - best
        titled = max(titled, best + INNER_TITLE_WEIGHT * gain)
    return titled


#: A title underlined inside a chunk (reST, with or without an overline; markdown's setext):
#: its text, then a line of one punctuation character repeated, at least 3 and as long as it.
_INNER_TITLE: Final = re.compile(
    r"^(?P<title>[^\s=\-~^\"'`#*+:.][^\n]*?)[ \t]*\n(?P<line>([=\-~^\"'`#*+:_])\3{2,})[ \t]*$", re.MULTILINE
)


def inner_titles(text: str) -> list[str]:
    """The titles underlined inside ``text`` (``The del statement`` above ``====``...): reST's and
    markdown's setext headings, whose adornment is at least as long as the title."""
    return [m.group("title") for m in _INNER_TITLE.finditer(text) if len(m.group("line")) >= len(m.group("title"))]


#: The term of a reST definition list (a glossary's ``.. glossary::`` entries too): a short line of words
#: (no code: no brackets, ``=``, ``:`` or full stop at its end), its definition indented more under it.
_DEFINITION_TERM: Final = re.compile(r"[ \t]*([A-Za-z`][\w `'*-]{0,60}?[\w`*])[ \t]*")
_DEFINITION: Final = re.compile(r"[ \t]+[A-Za-z`]")


def definition_terms(text: str) -> list[str]:
    """The terms of the definition lists inside ``text``: ``duck-typing`` above its indented
    definition in Python's glossary. A chunk of a glossary or of a list of options holds many
    entries, and its trail ("Glossary") names none of them; each term says what its entry
    answers, as a title underlined inside a chunk does (:func:`inner_titles`), and counts as much.
    Line by line, a line matched only above an indented one: one multiline regex over the text took
    35 against 26 us a 2,000-character chunk of python3.11-doc's library pages."""
    lines = text.split("\n")
    found: list[str] = []
    for line, under in zip(lines, lines[1:], strict=False):
        if under[:1] not in (" ", "\t") or (term := _DEFINITION_TERM.fullmatch(line)) is None:
            continue
        if _DEFINITION.match(under) and indent_of(under) > indent_of(line):
            found.append(term.group(1))
    return found


#: The name or title of release notes: What's New In Python 3.8 (``whatsnew.3.8``), a Changelog,
#: Release Notes, PostgreSQL's ``E.18. Release 15.1``, pytest's ``announce/release-7.0.0``; not
#: RELEASE SAVEPOINT (``sql-release-savepoint``: no version follows).
_RELEASE_NOTES: Final = re.compile(
    r"what'?s[ _.-]?new|change[ _.-]?log|release[ _.-]?notes|relnotes|\brelease[ _.-]v?\d", re.IGNORECASE
)


#: A version number a query writes: ``3.10`` of "added in Python 3.10", ``15.1``; not part of a longer
#: number or name (``1.2.3``'s ``2.3``, ``utf-8.0``, ``-3.2``).
_VERSION: Final = re.compile(r"(?<![\w.-])\d+\.\d+(?![\w]|\.\d)")


def named_versions(query: str) -> frozenset[str]:
    """The version numbers ``query`` writes (``3.10``, ``15.1``)."""
    return frozenset(_VERSION.findall(query))


def _release_weight(candidate: Candidate, versions: frozenset[str]) -> float:
    """What a candidate loses for being of release notes: :data:`RELEASE_WEIGHT`, but none for the
    notes of a release the query names (their document's id or first heading holds its number:
    ``whatsnew.3.10`` for "What is the EncodingWarning added in Python 3.10?"), which say what the
    question asks: what that release changed."""
    if not release_record(candidate) or any(_names(version, candidate) for version in versions):
        return 0.0
    return RELEASE_WEIGHT


def _names(version: str, candidate: Candidate) -> bool:
    """Whether ``candidate``'s document id or first heading holds ``version`` as a number of its own,
    its parts joined by a dot, dash or underscore (``whatsnew.3.10``, PostgreSQL's ``release-15-1``;
    not ``3.10`` of ``13.10`` or ``3.10.1``'s ``10.1``, nor ``15.1`` of ``release-15-10``)."""
    top = candidate.chunk.trail[0] if candidate.chunk.trail else ""
    pattern = r"(?<!\d)(?<!\d[._-])" + r"[._-]".join(version.split(".")) + r"(?!\d|[._-]\d)"
    return bool(re.search(pattern, candidate.doc_id) or re.search(pattern, top))


def release_record(candidate: Candidate) -> bool:
    """Whether ``candidate`` is of release notes, by its document's id or its first heading.

    Release notes name each changed function, option and flag once or twice in passing, and a
    manual has many of them: on an identifier they rank beside the entry that explains it (their
    heading and passage scores are as good) and take the room of the page's next chunks, yet they
    say what changed, not what a thing does. Python 3.11's docs have 22 such pages (``whatsnew/``),
    PostgreSQL 15's manual 20 (``release-*``)."""
    top = candidate.chunk.trail[0] if candidate.chunk.trail else ""
    return bool(_RELEASE_NOTES.search(candidate.doc_id) or _RELEASE_NOTES.search(top))
