"""Ordering a search's candidates when keyword search and semantic recall both answered. Pure.

Reciprocal rank fusion (:func:`fuse`; Cormack, Clarke & Büttcher, SIGIR 2009: each list adds
``1 / (RRF_K + rank)``) chooses which chunks are read; this module orders them, leaning on each
ranking as far as the query lets it:

* **How well the words match.** The *coverage* of a chunk is the share of the query's
  distinct terms it holds; the query's *keyword confidence* is the coverage of the first
  keyword hit (``CONFIDENT_DOC_HITS``). An identifier or a question in the
  manual's own words finds chunks holding all of them (confidence 1); a paraphrase, in
  the asker's words, finds chunks holding a few of its common words (measured on the
  retrieval benchmark's questions: exact 1.0 each, natural 0.5-1.0, paraphrases
  0.38-0.83).
* **Weighted RRF** (:func:`~ctxtrio.text.embedding.fused_score`, shared with session
  recall). Each chunk scores ``c / (RANK_K + keyword rank)`` plus
  ``w / (RANK_K + vector rank)``, where ``c`` is the confidence and ``w`` grows from
  ``MEANING_BASE`` (confident) to ``MEANING_BASE + MEANING_GAIN`` as it falls: the
  vector ranking decides what a paraphrase gets first, BM25 what an identifier gets
  first. Chosen on the retrieval benchmark (questions' 42 files, all-MiniLM-L6-v2,
  answer inside 1,000 tokens): paraphrases 10/20 with k 5, gain 8; 8-9 with k 3-10 and
  gain 5-12; a base of 1 cost one exact question, 0.5 keeps exact and natural as
  keyword search alone has them. Weighting terms by their rarity among the candidates
  lost natural questions (16 -> 15) and gained nothing.
* **What each hit shows.** A chunk found by semantic recall alone keeps ``focus`` (the
  characters of its best embedded part): packing shows the part that matched by
  meaning. A chunk keyword search found too shows its keyword window, as without
  semantic recall, whatever share of the query's words it holds. Keeping ``focus``
  for keyword hits holding less than ``FOCUS_BELOW`` of the words, as before, lost
  answers once the windows weighed words by rarity: all-MiniLM-L6-v2 over the
  benchmark's questions' files, answer inside 500 / 1,000 / 2,000 tokens, PostgreSQL
  36/44/50 -> 36/45/49 of 60, Python 19/26/36 -> 21/29/36 of 45, Node.js 14/24/29 ->
  14/26/29 of 36.
* **The vector ranking's first two, when keyword search missed them.** A chunk keyword search did
  not find at all scores ``w / (RANK_K + 1)`` at best, which a confident query's weight
  (``MEANING_BASE``) puts below the keyword hits down to the 6th-7th: the nearest in meaning
  came 8th-10th, past the four hits a 1,000-token answer shows, though it is often what
  answers (os.cpu_count's entry for "how many processors does this machine have"). It is
  placed no lower than ``MEANING_FIRST_PLACE``: second, under keyword search's best
  (see :func:`hybrid_order`). So is one keyword search ranked past ``MEANING_FIRST_BELOW``
  (ElementTree's ``fromstring``, keyword's 18th for "How do I parse XML from a string with
  ElementTree?"), which a search of 10 would not have shown either; the passage
  re-ranking of a confident query leaves it there (``placed``). The vector ranking's second is placed
  likewise no lower than third (``MEANING_PLACES``); its third and later are not. Only a hit moved up
  is ``placed``: one that fusion already put at its place or above is re-ranked with the keyword hits
  and may sink. Marking it too (all-MiniLM-L6-v2, 14 python dev sets, answers inside 500 / 1,000 /
  2,000 tokens: 410 / 507 / 565 -> 408 / 507 / 562, python9 -2 at 2,000) cost answers, as in session 20.
* **The vector ranking's first, when keyword search found it too and the words do not all match.** Fusion puts
  it at the top of a query in the asker's words, and the re-ranking by passages, which reads the query's words
  only, could sink it under hits holding more of them. It comes no lower than ``MEANING_FIRST_FLOOR``
  (third; ``meaning_first``, :func:`meaning_first_floor`): kept at its place (first) gained more and lost more.
  A hit that keeps its place (found by meaning, or ``placed``) and holds the third keeps it: the first takes
  the nearest place above.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from ..store.rows import Hit
from ..text.embedding import FOCUS_BELOW, coverage, fused_score

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..store.vectors import VectorHit
    from .packing import Candidate

__all__ = [
    "CONFIDENT_DOC_HITS", "FOCUS_BELOW", "FUSE_DEPTH", "MEANING_FIRST_BELOW", "MEANING_FIRST_FLOOR", "MEANING_FIRST_PLACE", "MEANING_PLACES", "Fused", "Ranks",
    "by_words", "coverage", "fuse", "hybrid_order", "keyword_confidence", "meaning_first_floor",
]  # fmt: skip

#: Keyword hits whose coverage sets a search's keyword confidence: the first alone (session
#: recall, memory/ranking.py, takes the best of its first CONFIDENT_HITS, 3). Over a whole
#: manual one of the next two keyword hits often holds every word of a question in passing
#: while the first, which BM25 and the re-ranking chose, does not: the best of three judged
#: such a question confident and kept the vector ranking's weight low. With FOCUS_BELOW 0.5,
#: all-MiniLM-L6-v2 over whole corpora, answer inside 500 / 1,000 / 2,000 tokens against 3 and
#: 0.75: six python dev sets 169/206/227 -> 171/208/231, python7 23/27/35 -> 24/30/35,
#: python8 29/33/38 -> 28/33/38, PostgreSQL 35/44/46 -> 36/44/47, Node 14/25/27 -> 15/25/27;
#: each alone +2 at 1,000 (dev sums 335 -> 337), both +5. Held-out git 24/36/40 -> 25/36/40,
#: pytest 22/33/41 -> 23/34/42.
CONFIDENT_DOC_HITS: Final = 1
#: Reciprocal rank fusion's constant (the paper's k = 60), and how deep each ranking is read.
RRF_K = 60
FUSE_DEPTH = 30
#: The place (1-based) the vector ranking's first hit gets at least when keyword search did not find it.
#: Chosen on the retrieval benchmark (all-MiniLM-L6-v2 over whole corpora, answers inside 500 / 1,000 /
#: 2,000 tokens, the dev sets summed: six python sets, python7, python8, PostgreSQL, Node; 274/340/378
#: without): 2nd 276/341/383, 3rd 276/340/381, 4th 274/341/380; 1st lost 4 at 500 on the python sets
#: against the 2nd (measured before the confidence of 638f500).
MEANING_FIRST_PLACE = 2
#: The places (1-based) the vector ranking's first and second get at least, each when keyword search did not
#: rank it among its first MEANING_FIRST_BELOW: its first MEANING_FIRST_PLACE, its second the place under it.
#: A confident query weighs the vector ranking at MEANING_BASE, so a chunk keyword search ranked 11th-30th
#: and the vector ranking 2nd came 6th-10th, past what 1,000 tokens show, though it often answers ("What is
#: the global interpreter lock?": glossary's GIL entry, keyword's 17th). Measured with all-MiniLM-L6-v2 over
#: the whole Python manual (caching endpoint), the eleven python dev sets (645 questions), answers inside
#: 500 / 1,000 / 2,000 tokens, right file in the top 3: the first alone 312/382/436 top 3 497; first and
#: second 310/384/440 top 3 500 (no set -2 at 1,000; python9 -1); the first three 311/381/439 top 3 500.
MEANING_PLACES: Final = (MEANING_FIRST_PLACE, MEANING_FIRST_PLACE + 1)
#: Keyword ranks past this count as not found for that rule (a search of 10 would not show them). The first
#: version held only hits keyword search did not find at all (f6b7005): dev sums 276/341/383 -> 277/342/385.
MEANING_FIRST_BELOW = 10
#: The lowest place (1-based) the passage re-ranking leaves the vector ranking's first at when keyword search
#: found it too (and it is not ``placed``) and the query's words do not all match (keyword confidence under
#: 1: a question in the asker's words, re-ranked by passages from FOCUS_BELOW on). There the vector ranking
#: weighs more than keyword search and fusion puts it first (in every such miss looked at); the re-ranking,
#: which reads the query's words only, sank it to 6th-9th under hits holding more of them, past the four a
#: 1,000-token answer shows, where it was the answer: "Why did the Python developers stop using SourceForge
#: for bug tracking?" (faq/bugs, keyword's 2nd, 6th after the re-ranking), "How do I pretty-print an XML
#: document with minidom?" (keyword's 11th, fused first so not ``placed``, 6th after the re-ranking).
#: Measured with all-MiniLM-L6-v2 through the caching endpoint over the 14 python dev sets, python14 and
#: python16 (/work/bench/hh.sh), answers inside 500 / 1,000 / 2,000 tokens, right file in the top 3:
#: 462 / 568 / 636, 714 without; floor 3: 464 / 570 / 638, 719 (+2 / -0 at 1,000); floor 2: 464 / 570 / 638
#: (+4 / -2, python7 lost "underscores in numeric literals"); kept at its fused place (floor 1): 462 / 571 /
#: 639 (+9 / -6, python7 -2); floor 3 for confident queries too: 465 / 570 / 639, 721 (+3 / -1).
#: Where a hit that keeps its place holds the floor's place (:func:`meaning_first_floor`), over the 14 sets,
#: python14, python16 and python17: pushing it to 4th, 487 / 598 / 670, top 3 761; the first above it,
#: 488 / 600 / 672, 761 (+1 / +2 / +2, -0); the first under it, 486 / 598 / 668, 757; every hit that keeps
#: its place kept there wherever the first is inserted, 488 / 599 / 672 (python6 -1 at 1,000).
MEANING_FIRST_FLOOR: Final = 3


@dataclass(frozen=True, slots=True)
class Ranks:
    """Where one candidate stood in each ranking (1-based), None where it was absent."""

    keyword: int | None
    meaning: int | None


@dataclass(frozen=True, slots=True)
class Fused:
    """One hit of a fused ranking."""

    hit: Hit
    #: Found by semantic recall and not by keyword search.
    by_meaning: bool = False
    #: Characters of the chunk's text that matched the query by meaning (its best embedded part).
    focus: tuple[int, int] | None = None
    #: Its place in each ranking (1-based), None where absent.
    ranks: Ranks = Ranks(None, None)


def fuse(keyword: Sequence[Hit], meaning: Sequence[VectorHit], limit: int, *, each: int = 0) -> list[Fused]:
    """The best ``limit`` hits of both rankings by reciprocal rank fusion, and after them
    any of the first ``each`` of either ranking not among those.

    A hit keeps its BM25 score when keyword search found it, else its cosine similarity;
    a hit the vector ranking found carries its best part's characters (``focus``), and
    each its places in both rankings. Ties keep keyword order first. Pure.
    """
    scores: dict[tuple[str, str], float] = {}
    hits: dict[tuple[str, str], Hit] = {}
    keyword_rank: dict[tuple[str, str], int] = {}
    for rank, hit in enumerate(keyword[:FUSE_DEPTH]):
        key = (hit.journal, hit.item)
        scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
        hits.setdefault(key, hit)
        keyword_rank.setdefault(key, rank + 1)
    meaning_rank: dict[tuple[str, str], int] = {}
    focus: dict[tuple[str, str], tuple[int, int]] = {}
    for rank, near in enumerate(meaning[:FUSE_DEPTH]):
        key = (near.journal, near.item)
        scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
        hits.setdefault(key, Hit(near.journal, near.item, near.score, near.line_start, near.line_end))
        meaning_rank.setdefault(key, rank + 1)
        if near.span[1] > near.span[0]:
            focus.setdefault(key, near.span)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: keyword hits were added first
    chosen = order[:limit]
    first = {(hit.journal, hit.item) for hit in keyword[:each]} | {(hit.journal, hit.item) for hit in meaning[:each]}
    chosen += [key for key in order[limit:] if key in first]
    return [
        Fused(hits[key], key not in keyword_rank, focus.get(key), Ranks(keyword_rank.get(key), meaning_rank.get(key)))
        for key in chosen
    ]


def keyword_confidence(candidates: Sequence[Candidate], ranks: Sequence[Ranks], query_terms: Sequence[str]) -> float:
    """The best coverage among the first CONFIDENT_DOC_HITS keyword hits (0.0 without any)."""
    best = 0.0
    for candidate, rank in zip(candidates, ranks, strict=True):
        if rank.keyword is not None and rank.keyword <= CONFIDENT_DOC_HITS:
            best = max(best, coverage(candidate.chunk.text, query_terms))
    return best


def by_words(candidates: Sequence[Candidate], ranks: Sequence[Ranks], query_terms: Sequence[str]) -> bool:
    """Whether the query's words match well enough (keyword confidence of at least FOCUS_BELOW)
    that its candidates are re-ranked by their best passage; else the fused order stands."""
    return keyword_confidence(candidates, ranks, query_terms) >= FOCUS_BELOW


def hybrid_order(
    candidates: Sequence[Candidate], ranks: Sequence[Ranks], query_terms: Sequence[str]
) -> list[Candidate]:
    """``candidates`` best first by weighted RRF (see the module docstring), each with
    ``focus`` kept only by those found by meaning alone, and the vector ranking's first
    ``len(MEANING_PLACES)``, each when keyword search did not find it among its first
    MEANING_FIRST_BELOW, at its place of :data:`MEANING_PLACES` or above: moved up to that place
    (``placed``) when below it, else left where fusion put it (not ``placed``: see the module's docstring).
    The vector ranking's first, when keyword search found it too and it is not ``placed``, is marked
    ``meaning_first`` when the keyword confidence is under 1 (:func:`meaning_first_floor`). Ties keep the given order."""
    confidence = keyword_confidence(candidates, ranks, query_terms)
    scored = [(-fused_score(rank.keyword, rank.meaning, confidence), n) for n, rank in enumerate(ranks)]
    order = [position for _, position in sorted(scored)]
    placed: set[int] = set()
    for meaning_rank, place in enumerate(MEANING_PLACES, 1):
        at = next((n for n, position in enumerate(order) if _missed_by_words(ranks[position], meaning_rank)), None)
        if at is not None and at >= place:
            position = order.pop(at)
            order.insert(place - 1, position)
            placed.add(position)
    ordered: list[Candidate] = []
    for position in order:
        candidate = candidates[position]
        if candidate.focus is not None and not candidate.by_meaning:
            candidate = replace(candidate, focus=None)
        if position in placed:
            candidate = replace(candidate, placed=True)
        elif confidence < 1.0 and ranks[position].meaning == 1 and ranks[position].keyword is not None:
            candidate = replace(candidate, meaning_first=True)
        ordered.append(candidate)
    return ordered


def meaning_first_floor(candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` with the one marked ``meaning_first`` (:func:`hybrid_order`) moved up to
    :data:`MEANING_FIRST_FLOOR` when it is below; the others keep their order. When a hit that keeps its
    place (found by meaning, or ``placed``: :func:`~.search.rerank_fused`) holds the floor's place, the
    first takes the nearest place above it that none holds, and only the hits the re-ranking moved make
    room for it: every hit that keeps its place stays where it is."""
    ordered = list(candidates)
    at = next((n for n, candidate in enumerate(ordered) if candidate.meaning_first), None)
    if at is None or at < MEANING_FIRST_FLOOR:
        return ordered
    if not _keeps_place(ordered[MEANING_FIRST_FLOOR - 1]):
        ordered.insert(MEANING_FIRST_FLOOR - 1, ordered.pop(at))
        return ordered
    # Inserted there, it pushed that hit down to 4th (18 queries of the 17 hybrid dev sets, once a placed
    # hit). The nearest free place under it lost answers, and so did keeping every kept hit's place also
    # where the floor's place is free (see the constant).
    free = [n for n, candidate in enumerate(ordered) if not _keeps_place(candidate)]
    target = max((n for n in free if n < MEANING_FIRST_FLOOR), default=None)
    if target is None:  # the first places are all kept: it stays where the re-ranking put it
        return ordered
    moved = [ordered[n] for n in free]
    moved.insert(free.index(target), moved.pop(free.index(at)))
    for n, candidate in zip(free, moved, strict=True):
        ordered[n] = candidate
    return ordered


def _keeps_place(candidate: Candidate) -> bool:
    """A hit the passage re-ranking leaves where fusion put it (:func:`~.search.rerank_fused`)."""
    return candidate.by_meaning or candidate.placed


def _missed_by_words(rank: Ranks, meaning_rank: int) -> bool:
    """The vector ranking's ``meaning_rank``-th, which keyword search did not rank among its first MEANING_FIRST_BELOW."""
    return rank.meaning == meaning_rank and (rank.keyword is None or rank.keyword > MEANING_FIRST_BELOW)
