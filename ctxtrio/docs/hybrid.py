"""Ordering a search's candidates when keyword search and semantic recall both answered. Pure.

Reciprocal rank fusion (:func:`~.search.fuse`) chooses which chunks are read; this
module orders them, leaning on each ranking as far as the query lets it:

* **How well the words match.** The *coverage* of a chunk is the share of the query's
  distinct terms it holds; the query's *keyword confidence* is the best coverage among
  the first ``CONFIDENT_HITS`` keyword hits. An identifier or a question in the
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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..text.embedding import CONFIDENT_HITS, FOCUS_BELOW, coverage, fused_score

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .packing import Candidate

__all__ = ["FOCUS_BELOW", "Ranks", "coverage", "hybrid_order", "keyword_confidence"]


@dataclass(frozen=True, slots=True)
class Ranks:
    """Where one candidate stood in each ranking (1-based), None where it was absent."""

    keyword: int | None
    meaning: int | None


def keyword_confidence(candidates: Sequence[Candidate], ranks: Sequence[Ranks], query_terms: Sequence[str]) -> float:
    """The best coverage among the first CONFIDENT_HITS keyword hits (0.0 without any)."""
    best = 0.0
    for candidate, rank in zip(candidates, ranks, strict=True):
        if rank.keyword is not None and rank.keyword <= CONFIDENT_HITS:
            best = max(best, coverage(candidate.chunk.text, query_terms))
    return best


def hybrid_order(
    candidates: Sequence[Candidate], ranks: Sequence[Ranks], query_terms: Sequence[str]
) -> list[Candidate]:
    """``candidates`` best first by weighted RRF (see the module docstring), each with
    ``focus`` kept only by those found by meaning alone. Ties keep the given order."""
    confidence = keyword_confidence(candidates, ranks, query_terms)
    scored = [(-fused_score(rank.keyword, rank.meaning, confidence), n) for n, rank in enumerate(ranks)]
    ordered: list[Candidate] = []
    for _, position in sorted(scored):
        candidate = candidates[position]
        if candidate.focus is not None and not candidate.by_meaning:
            candidate = replace(candidate, focus=None)
        ordered.append(candidate)
    return ordered
