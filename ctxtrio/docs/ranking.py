"""Re-ranking search candidates by their best passage, not their whole chunk. Pure.

BM25 scores a chunk as a bag of words: a chunk that names a function ten times in
passing outranks the one that defines it, and a chunk holding the query's words far
apart ranks like one holding them side by side. :func:`rerank` scores each candidate
also by its best window of about :data:`PASSAGE_TOKENS` tokens
(:func:`~ctxtrio.text.passages.passage_score`: distinct query terms, proximity, phrases,
a definition line) and orders by the sum of both, each relative to its best among
the candidates. Chunks stay the unit of reading; only the order changes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ..text.headings import heading_share
from ..text.passages import passage_score
from .packing import headings, tokens_per_char

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .packing import Candidate

__all__ = ["HEADING_WEIGHT", "PASSAGE_TOKENS", "PASSAGE_WEIGHT", "rerank"]

#: The retrieval unit: the size of the window a candidate is scored by.
PASSAGE_TOKENS: Final = 120
#: Weight of the passage score against BM25 (each relative to the best candidate's).
PASSAGE_WEIGHT: Final = 1.0
#: Weight of the share of the query's words a candidate's headings hold (0.0 to 1.0).
HEADING_WEIGHT: Final = 1.0


def rerank(
    candidates: Sequence[Candidate],
    query_terms: Sequence[str],
    *,
    passage_tokens: int = PASSAGE_TOKENS,
    weight: float = PASSAGE_WEIGHT,
    heading_weight: float = HEADING_WEIGHT,
) -> list[Candidate]:
    """``candidates`` best first by BM25 plus ``weight`` times their best passage's score
    plus ``heading_weight`` times the share of the query's words their headings hold
    (:func:`~.packing.headings`: trail and document name; ties keep the given order); each keeps its BM25 ``score``. A ranking fused with
    semantic recall (a candidate ``by_meaning``: its score is a similarity, not BM25)
    is returned as it is."""
    if len(candidates) < 2 or weight <= 0 or any(c.by_meaning for c in candidates):
        return list(candidates)  # a fused ranking (scores of two kinds) keeps its order
    passages = [passage_score(c.chunk.text, query_terms, passage_tokens, tokens_per_char(c.chunk)) for c in candidates]
    top_bm25 = max(c.score for c in candidates) or 1.0
    top_passage = max(passages) or 1.0
    about = [heading_weight * _heading_share(c, query_terms) for c in candidates]
    keyed = sorted(
        range(len(candidates)),
        key=lambda n: (-(candidates[n].score / top_bm25 + weight * passages[n] / top_passage + about[n]), n),
    )
    return [candidates[n] for n in keyed]


#: A heading that starts inside a chunk: a markdown ATX heading, a reST/Sphinx API description
#: (``.. function:: groupby(iterable, key=None)``; not ``.. note::`` or ``.. index::``), or a title
#: underlined by a reST adornment at least as long (not a code fence).
_INNER_HEADING: Final = re.compile(
    r"^(?:#{1,6}[ \t]+(?P<atx>\S.*)"
    r"|[ \t]*\.\.[ \t]+(?:[\w-]+:)?(?:function|class|method|classmethod|staticmethod|attribute|property|exception|data"
    r"|decorator|module|option|cmdoption|envvar|describe|object|type|member|macro|var|command|variable)::[ \t]+(?P<entry>\S.*)"
    r"|(?P<title>\w.*)\n(?P<rule>([=\-~^\"'#*+])\3{2,})[ \t]*$)",
    re.MULTILINE,
)


def _heading_share(candidate: Candidate, query_terms: Sequence[str]) -> float:
    """The share of the query's words a candidate's headings hold: its trail and document
    name, with at most one of the headings that start inside its chunk (a chunk that begins
    under ``function filterfalse`` and holds the entry ``function groupby`` is about either)."""
    about = headings(candidate)
    best = heading_share(about, query_terms)
    text = candidate.chunk.text
    if best >= 1.0 or ("\n#" not in text and ".. " not in text and "\n--" not in text and "\n==" not in text):
        return best
    for match in _INNER_HEADING.finditer(text):
        inner = match.group("atx") or match.group("entry") or ""
        title = match.group("title")
        if title and len(match.group("rule")) >= len(title.rstrip()):  # docutils: an underline as long as its title
            inner = title
        if inner:
            best = max(best, heading_share((*about, inner), query_terms))
    return best
