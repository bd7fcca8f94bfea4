"""How the hits of one doc_search answer share its token budget. Pure.

Which hit gets how much of the room, and which would get too little to be worth showing:
:class:`Shares`. What each hit then shows in its share is :mod:`ctxtrio.docs.packing`'s
(:func:`~ctxtrio.docs.packing.pack_hits`). Kept apart so the room's division reads at once,
and a change to it (its shares, the lead of a first hit) is measured as one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

from ..text.headings import only_headed
from .render import hit_header

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.tokens import TokenModel
    from .chunks import StoredChunk

__all__ = ["GAP_TOKENS", "MEANING_SHARE", "MIN_SHARE", "Contender", "Shares", "shown_trail"]

#: Separator lines between blocks of a result.
GAP_TOKENS: Final = 1
#: Tokens a hit gets at least (header included); a hit after the first that would get less is not shown.
MIN_SHARE: Final = 100
#: Tokens of text a hit gets at least besides its header, when that header is long (see :meth:`Shares.need`):
#: a 41-character document id and an 80-character title estimate at ~100 tokens, and a hit given
#: MIN_SHARE would show ten tokens of text under them. 40 keeps every share as it was for headers
#: up to 59 tokens (the manuals' file ids, trails and marks: keyword answers of the dev sets identical).
_MIN_HIT_TEXT: Final = 40
#: Share of what is left of the budget each hit may take (the last one shown takes the rest).
_SHARE: Final = 0.5
#: The same for a query whose words match poorly (keyword confidence under FOCUS_BELOW, docs/hybrid.py: its
#: candidates keep the order fusion gave them, led by semantic recall). A hit found by meaning shows a window
#: around its part, smaller than its share, and a keyword hit's window of such a query is seldom the answer,
#: but a hit after them shown cut lost the answer's last line ("...will be less than [...]" for "chance that a
#: value from a bell-shaped spread ... comes out at or below some number") or was not shown. Measured with
#: all-MiniLM-L6-v2 over the whole Python manual (/work/bench/mm.sh, python17-19 tuned, python20 checked;
#: answers inside 500 / 1,000 / 2,000 tokens, 17-19 then 20): 0.5 82 / 96 / 108, 31 / 38 / 42; 0.4 -4 / -2 / +1
#: (20: -1 / -1 / +1); 0.55 +3 / +1 / 0 (20: -1 / 0 / 0); 0.6 +1 / +2 / +1 (20: +1 / 0 / 0); 0.65 +2 / +2 / 0
#: (20: +2 / -1 / 0); 0.7 -1 / +4 / 0 (20: +2 / -2 / 0). Keyword search alone never has such a query.
MEANING_SHARE: Final = 0.6
#: The first hit's share instead when its BM25 score leads the second's (:func:`_leads`): an answer found
#: inside 1,000 tokens of the keyword dev sets then lies in it 104 times of 112 (180 of 246 within a tenth).
_LEAD_SHARE: Final = 0.55
_LEAD_RATIO: Final = 0.8


class Contender(Protocol):
    """What the division reads of a candidate (:class:`~ctxtrio.docs.packing.Candidate`, which
    imports this module: a protocol here keeps the two without an import loop)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def chunk(self) -> StoredChunk: ...
    @property
    def score(self) -> float: ...
    @property
    def by_meaning(self) -> bool: ...
    @property
    def placed(self) -> bool: ...


def shown_trail(chunk: StoredChunk, query_terms: Sequence[str]) -> tuple[str, ...]:
    """The trail a hit's header shows: ``chunk``'s, when its headings hold a query word its text lacks, else none."""
    return chunk.trail if only_headed(query_terms, chunk.trail, chunk.text) else ()


def _leads(candidates: Sequence[Contender]) -> bool:
    """Whether the second candidate's BM25 score is below :data:`_LEAD_RATIO` of the first's: the answer is
    then mostly in the first. Not when either was found or placed by meaning (a similarity, or a place
    that BM25 did not give)."""
    if len(candidates) < 2 or any(c.by_meaning or c.placed for c in candidates[:2]):
        return False
    first, second = candidates[0].score, candidates[1].score
    return first > 0 and second < _LEAD_RATIO * first


class Shares:
    """Per candidate of one pack, worked out when first asked (a pack reaches only the first few):
    the heading trail its header shows (:func:`shown_trail`) and the tokens it needs to be worth
    showing: :data:`MIN_SHARE`, or its widest header (every line number as wide as the chunk's
    count) and :data:`_MIN_HIT_TEXT` tokens of text when that is more (a long document id and
    title can take a hundred tokens)."""

    __slots__ = ("_candidates", "_model", "_needs", "_query_terms", "_unders", "_worded")

    def __init__(
        self, candidates: Sequence[Contender], model: TokenModel, query_terms: Sequence[str], *, worded: bool = True
    ) -> None:
        """``worded``: the query's words match well enough that its candidates were re-ranked by their
        passages (always, by keyword search alone); else each hit may take :data:`MEANING_SHARE`."""
        self._candidates, self._model, self._query_terms = candidates, model, query_terms
        self._worded = worded
        self._unders: dict[int, tuple[str, ...]] = {}
        self._needs: dict[int, int] = {}

    def under(self, position: int) -> tuple[str, ...]:
        if position not in self._unders:
            self._unders[position] = shown_trail(self._candidates[position].chunk, self._query_terms)
        return self._unders[position]

    def need(self, position: int) -> int:
        if position not in self._needs:
            candidate = self._candidates[position]
            chunk = candidate.chunk
            widest = chunk.text.count("\n") + 1
            header = hit_header(
                candidate.doc_id, candidate.title, chunk.index, (widest, widest, widest),
                by_meaning=candidate.by_meaning, under=self.under(position),
            )  # fmt: skip
            self._needs[position] = max(MIN_SHARE, self._model.estimate(header) + GAP_TOKENS + _MIN_HIT_TEXT)
        return self._needs[position]

    def any_shown(self, start: int, tokens: int) -> bool:
        """Whether a candidate from ``start`` on could be shown in ``tokens``."""
        return tokens >= MIN_SHARE and any(
            self.need(position) <= tokens for position in range(start, len(self._candidates))
        )

    def share(self, position: int, remaining: int) -> int:
        """The tokens the candidate at ``position`` may take of the ``remaining``: :data:`_SHARE` of
        them (:data:`MEANING_SHARE` for a query not ``worded``), the first of a ``worded`` query
        :data:`_LEAD_SHARE` when it leads (:func:`_leads`) unless that leaves no hit after it room (a
        small budget), at least what it :meth:`need`s, and all of them when no hit after it could be
        shown in what it would leave."""
        fraction = _SHARE if self._worded else MEANING_SHARE
        share = min(remaining, max(int(remaining * fraction), self.need(position)))
        if position == 0 and self._worded and _leads(self._candidates):
            lead = min(remaining, max(int(remaining * _LEAD_SHARE), self.need(position)))
            if self.any_shown(1, remaining - lead) or not self.any_shown(1, remaining - share):
                share = lead  # not at the cost of every hit after it (a small budget)
        if not self.any_shown(position + 1, remaining - share):
            share = remaining  # no hit after it could be shown: it takes what is left
        return share
