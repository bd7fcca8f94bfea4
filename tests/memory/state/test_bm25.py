"""The in-memory BM25 index: FTS5's formula, live statistics, OR semantics."""

from __future__ import annotations

import math

import pytest

from ctxtrio.memory.state.bm25 import K1, B, TermIndex


class Built:
    """An index over texts (ordinals 0, 1, ...), with the live flags and lengths a session keeps."""

    def __init__(self, texts: list[str]) -> None:
        self.index = TermIndex()
        self.live = bytearray()
        self.lengths: list[int] = []
        self.distinct: list[list[int]] = []
        for ordinal, text in enumerate(texts):
            distinct, length = self.index.add(ordinal, text.split())
            self.live.append(1)
            self.lengths.append(length)
            self.distinct.append(distinct)
            self.index.account(distinct, length, 1)

    def scores(self, terms: list[str]) -> dict[int, float]:
        return self.index.scores(terms, self.live, self.lengths)

    @property
    def live_docs(self) -> int:
        return self.index.live_docs

    @property
    def live_length(self) -> int:
        return self.index.live_length


def build(texts: list[str]) -> tuple[Built, list[int]]:
    return Built(texts), list(range(len(texts)))


def test_score_matches_the_fts5_formula() -> None:
    """One term: idf ln((N-df+.5)/(df+.5)) times the saturated, length-normalized tf."""
    index, docs = build(["a b", "a a c d", "c d", "d e f g h", "i"])
    scores = index.scores(["a"])
    average = (2 + 4 + 2 + 5 + 1) / 5
    idf = math.log((5 - 2 + 0.5) / (2 + 0.5))

    def expected(tf: int, length: int) -> float:
        return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))

    assert set(scores) == {docs[0], docs[1]}
    assert scores[docs[0]] == pytest.approx(expected(1, 2))
    assert scores[docs[1]] == pytest.approx(expected(2, 4))


def test_common_terms_get_the_floor_idf_and_rare_terms_win() -> None:
    """A term in most documents scores ~0 (floor 1e-6); a rarer one dominates."""
    index, docs = build(["x common", "y common", "z common"])
    scores = index.scores(["common", "z"])
    assert max(scores, key=scores.__getitem__) == docs[2]
    assert 0 < scores[docs[0]] < 1e-5


def test_query_terms_are_ored_and_counted_once() -> None:
    """Any term matches; a repeated query term does not double the score."""
    index, docs = build(["red apple", "green pear", "blue sky"])
    once = index.scores(["apple", "pear"])
    twice = index.scores(["apple", "apple", "pear"])
    assert set(once) == {docs[0], docs[1]}
    assert once == twice


def test_dead_documents_do_not_match_or_count() -> None:
    """Accounting a document out removes it from results and from N and df."""
    index, docs = build(["cookie one", "cookie two", "other"])
    index.live[docs[1]] = 0
    index.index.account(index.distinct[docs[1]], index.lengths[docs[1]], -1)
    assert set(index.scores(["cookie"])) == {docs[0]}
    assert index.live_docs == 2 and index.live_length == 3


def test_empty_index_and_unknown_terms_score_nothing() -> None:
    """No live documents or no known term: an empty result, not an error."""
    empty = TermIndex()
    assert empty.scores(["a"], b"", []) == {}
    index, _ = build(["a"])
    assert index.scores(["zzz"]) == {}
