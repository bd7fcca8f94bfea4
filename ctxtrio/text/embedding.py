"""What an embedding model reads of a text, and how its ranking joins the keywords'. Pure.

Used by both sides of semantic recall: document chunks (``docs/embedding.py``,
``docs/hybrid.py``) and session entries (``memory/semantic.py``).

* **Parts.** An embedding model reads a few hundred tokens (all-MiniLM-L6-v2 256 word
  pieces, trained on 128), so a text is embedded in parts of at most :data:`PART_CHARS`
  characters (~120-150 tokens of prose), and never more than the model's window by a
  count of word pieces from above (:mod:`.wordpiece`: a table's rule or minified JSON is a
  token a character), cut at a line or sentence end where one lies in their second half,
  each led by the text's heading trail. A text matches by its best part.
* **Weighted reciprocal rank fusion.** A hit scores ``c / (RANK_K + keyword rank)`` plus
  ``w / (RANK_K + vector rank)``: ``c`` is the query's *keyword confidence* (the best
  coverage of the query's terms among the first keyword hits, see :func:`coverage`),
  and ``w`` grows from :data:`MEANING_BASE` (confident) to ``MEANING_BASE +
  MEANING_GAIN`` as it falls, so the vector ranking decides what a paraphrase gets
  first, BM25 what an identifier gets first. The constants were chosen on the
  retrieval benchmark (see ``docs/hybrid.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .wordpiece import PART_TOKENS, fitting_end, fitting_start, wordpiece_tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CONFIDENT_HITS",
    "FOCUS_BELOW",
    "MEANING_BASE",
    "MEANING_GAIN",
    "PART_CHARS",
    "RANK_K",
    "Part",
    "coverage",
    "fused_score",
    "text_parts",
]

#: An embedding input's text at most (~120-150 tokens of prose; text/wordpiece.py bounds the rest).
PART_CHARS: Final = 520
#: RRF's constant here: small, so the first places of a ranking count.
RANK_K: Final = 5
#: The vector ranking's weight: MEANING_BASE when a keyword hit holds every word of the
#: query, MEANING_BASE + MEANING_GAIN when none holds any.
MEANING_BASE: Final = 0.5
MEANING_GAIN: Final = 8.0
#: Keyword hits whose coverage sets the query's keyword confidence.
CONFIDENT_HITS: Final = 3
#: A query whose keyword confidence is below this (a paraphrase, mostly) keeps the fused
#: order: its keyword hits are not re-ranked by their best passage (docs/search.py). Half:
#: a question whose first keyword hit holds half its words or more is in the manual's words
#: enough for the passage re-ranking; 0.75 left such questions (natural ones, mostly) in the
#: vector ranking's order (measured with docs/hybrid.CONFIDENT_DOC_HITS, see there).
FOCUS_BELOW: Final = 0.5


@dataclass(frozen=True, slots=True)
class Part:
    """One embedding input of a text: characters ``start`` .. ``end`` of it, led by its heading trail."""

    start: int
    end: int
    text: str


def text_parts(text: str, trail: Sequence[str] = ()) -> list[Part]:
    """The parts ``text`` is embedded as: passages of at most PART_CHARS characters, and
    fewer where the model would read more than its window in them (a table, JSON, CJK:
    :mod:`.wordpiece`), cut at a line or sentence end where one lies in their second half,
    each led by ``trail``. A whitespace-only text is one part of its trail (or a space)."""
    lead = _lead(trail)
    room = PART_TOKENS - wordpiece_tokens(lead)
    parts: list[Part] = []
    at = len(text) - len(text.lstrip())
    while at < len(text):
        end = fitting_end(text, at, min(len(text), at + PART_CHARS), room)
        if end < len(text):
            half = at + (end - at) // 2
            cut = max(text.rfind("\n", half, end), text.rfind(". ", half, end) + 1)
            end = cut if cut > at else end
        piece = text[at:end].strip()
        if piece:
            start = at + (len(text[at:end]) - len(text[at:end].lstrip()))
            parts.append(Part(start, start + len(piece), lead + piece))
        at = end
        while at < len(text) and text[at].isspace():
            at += 1
    return parts or [Part(0, len(text), lead or " ")]


def _lead(trail: Sequence[str]) -> str:
    """The line a part starts with: the heading trail, cut to half the window (a part keeps room)."""
    lead = fitting_start(" › ".join(trail), PART_TOKENS // 2)
    return f"{lead}\n" if lead else ""


def coverage(text: str, query_terms: Sequence[str]) -> float:
    """The share of the distinct ``query_terms`` that ``text`` holds (as words or inside
    identifiers: ``workmem`` in ``work_mem``); 1.0 for no terms."""
    wanted = set(query_terms)
    if not wanted:
        return 1.0
    lower = text.lower()
    squashed = lower.replace("_", "").replace("-", "")
    return sum(1 for term in wanted if term in lower or term in squashed) / len(wanted)


def fused_score(keyword_rank: int | None, meaning_rank: int | None, confidence: float) -> float:
    """A hit's weighted RRF score from its places (1-based, None where absent) and the query's keyword confidence."""
    score = 0.0
    if keyword_rank is not None:
        score += confidence / (RANK_K + keyword_rank)
    if meaning_rank is not None:
        score += (MEANING_BASE + MEANING_GAIN * (1.0 - confidence)) / (RANK_K + meaning_rank)
    return score
