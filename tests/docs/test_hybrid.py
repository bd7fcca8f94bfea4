"""Ordering candidates of both rankings: by how well the query's words match, and what each hit shows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ctxtrio.docs.hybrid import (
    MEANING_FIRST_FLOOR,
    Ranks,
    by_words,
    coverage,
    hybrid_order,
    keyword_confidence,
    meaning_first_floor,
)
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.search import rerank_fused, search_words
from ctxtrio.text.chunking import Chunk
from ctxtrio.text.tokens import TokenModel

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _candidate(name: str, text: str, *, by_meaning: bool = False, focus: tuple[int, int] | None = None) -> Candidate:
    return Candidate(name, name, Chunk(0, text, 0, len(text), (), 50), 1.0, by_meaning, focus)


def test_coverage_counts_distinct_terms_also_inside_identifiers() -> None:
    """work_mem holds workmem; half of the terms held is 0.5; no terms is full coverage."""
    assert coverage("Sets work_mem for sorts.", ["workmem", "work", "mem", "sorts"]) == 1.0
    assert coverage("Copy the files.", ["copy", "tree"]) == 0.5
    assert coverage("anything", []) == 1.0


def test_a_query_in_the_manuals_words_keeps_the_keyword_order_and_windows() -> None:
    """Confident (a keyword hit holds every word): keyword order first, a meaning-only hit after
    them (the vector ranking's second: its first is placed apart, see below), and keyword hits
    drop their focus so their keyword window is shown."""
    first = _candidate("a", "deadlock_timeout sets the wait before a deadlock check", focus=(0, 10))
    second = _candidate("b", "deadlock_timeout appears here too, with timeout", focus=(0, 10))
    near = _candidate("c", "transactions waiting for each other", by_meaning=True, focus=(0, 20))
    ranks = [Ranks(1, 3), Ranks(2, None), Ranks(None, 2)]
    terms = ["deadlocktimeout", "deadlock", "timeout"]
    assert keyword_confidence([first, second, near], ranks, terms) == 1.0
    ordered = hybrid_order([first, second, near], ranks, terms)
    assert [c.doc_id for c in ordered] == ["a", "b", "c"]
    assert ordered[0].focus is None and ordered[2].focus == (0, 20)


def test_the_nearest_in_meaning_that_keyword_search_missed_is_shown() -> None:
    """Over multiprocessing's real page, "how many processors does this machine have": keyword
    search finds the introduction ("leverage multiple processors on a given machine") and other
    chunks, not cpu_count's entry, which the vector ranking has first. Confident, the fused score
    put it 7th, past the four hits a 1,000-token answer shows; it is placed second, under keyword
    search's best, and its part is shown (MEANING_FIRST_PLACE)."""
    candidates, terms = _processors()
    ranks = [Ranks(n, None) for n in range(1, 7)] + [Ranks(None, 1)]
    assert keyword_confidence(candidates, ranks, terms) == 1.0
    assert all("number of CPUs" not in one.chunk.text for one in candidates[:-1])
    ordered = hybrid_order(candidates, ranks, terms)
    assert [c.chunk.index for c in ordered] == [0, 16, 2, 4, 6, 8, 10]
    hits, _, _ = pack_hits(ordered, 1000, TokenModel.cold(), terms)
    assert any("Return the number of CPUs in the system." in hit.text for hit in hits)


def _processors() -> tuple[list[Candidate], list[str]]:
    """Six chunks of multiprocessing's page keyword search finds for "how many processors does this
    machine have" (lines 1-60, 121-180, ...; the first holds both words), then cpu_count's entry
    found by meaning, its lead the part; and the query's terms."""
    lines = (FIXTURES / "python_multiprocessing.rst.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    model = TokenModel.cold()

    def chunk(index: int, first: int, last: int) -> Chunk:  # lines first..last, 1-based
        text = "".join(lines[first - 1 : last])
        return Chunk(index, text, 0, len(text), ("multiprocessing",), model.estimate(text))

    keyword = [chunk(n, 1 + 60 * n, 60 * (n + 1)) for n in (0, 2, 4, 6, 8, 10)]
    entry = chunk(16, 979, 1038)
    start = entry.text.index(".. function:: cpu_count()")
    lead = (start, entry.text.index("in the system.", start) + len("in the system."))
    candidates = [Candidate("multiprocessing", "multiprocessing.rst.txt", one, 1.0) for one in keyword]
    candidates.append(Candidate("multiprocessing", "multiprocessing.rst.txt", entry, 0.6, True, lead))
    terms, _ = search_words("how many processors does this machine have")
    return candidates, terms


def test_the_nearest_in_meaning_keyword_search_ranked_past_its_first_10_stays_second() -> None:
    """The same, with keyword search ranking cpu_count's entry 12th (past what a search of 10
    shows): placed second, and the re-ranking of a confident query by passages, which would move it
    under the keyword hits that hold the query's words, leaves it there."""
    candidates, terms = _processors()
    entry = replace(candidates[-1], by_meaning=False, focus=None)
    candidates[-1] = entry
    ranks = [Ranks(n, None) for n in range(1, 7)] + [Ranks(12, 1)]
    ordered = hybrid_order(candidates, ranks, terms)
    assert [c.chunk.index for c in ordered][:2] == [0, 16] and ordered[1].placed
    reranked = rerank_fused(ordered, terms)
    assert [c.chunk.index for c in reranked][:2] == [0, 16]
    hits, _, _ = pack_hits(reranked, 1000, TokenModel.cold(), terms)
    assert any("Return the number of CPUs in the system." in hit.text for hit in hits)


def test_a_paraphrase_is_ordered_by_meaning_and_shows_the_part_that_matched() -> None:
    """Low confidence (the keyword hits hold few of the words): the vector ranking's first
    comes first; only the hit found by meaning alone keeps its focus, keyword hits show their window."""
    noise = _candidate("noise", "new scores of the table", focus=(0, 5))
    answer = _candidate("bisect", "insort keeps a list sorted", by_meaning=True, focus=(0, 26))
    weak = _candidate("weak", "a leaderboard", focus=(2, 13))
    ranks = [Ranks(1, 9), Ranks(None, 1), Ranks(2, 3)]
    terms = ["keep", "leaderboard", "ordered", "new", "scores", "arrive"]
    assert keyword_confidence([noise, answer, weak], ranks, terms) < 0.5
    ordered = hybrid_order([noise, answer, weak], ranks, terms)
    assert [c.doc_id for c in ordered] == ["bisect", "weak", "noise"]
    assert [c.focus for c in ordered] == [(0, 26), None, None]


def test_confidence_is_the_first_keyword_hits_not_the_best_of_the_next() -> None:
    """The second keyword hit holds every word in passing, the first (the one BM25 and the
    re-ranking chose) two of four: the query is half confident, not fully, so the vector
    ranking keeps its weight; and half is enough for the passage re-ranking."""
    terms = ["rotate", "log", "files", "big"]
    first = _candidate("handlers", "Rotate the log when it reaches maxBytes.")
    second = _candidate("cookbook", "log files grow big; rotate them.")
    ranks = [Ranks(1, 4), Ranks(2, None)]
    assert keyword_confidence([first, second], ranks, terms) == 0.5
    assert by_words([first, second], ranks, terms)


def test_a_first_keyword_hit_holding_a_third_of_the_words_leaves_the_fused_order() -> None:
    """Below half (a paraphrase in the asker's words): no passage re-ranking."""
    terms = ["scratch", "folder", "deletes", "itself", "done", "everything"]
    first = _candidate("os", "Delete the folder and everything in it.")
    ranks = [Ranks(1, 7)]
    assert keyword_confidence([first], ranks, terms) == 2 / 6
    assert not by_words([first], ranks, terms)


def test_the_vector_rankings_second_that_keyword_search_ranked_past_its_first_10_comes_third() -> None:
    """ "What is the global interpreter lock?" over Python's manual: keyword search ranks the glossary's
    entry 17th, the vector ranking 2nd. Confident, the fused score put it under the keyword hits it
    outscored by meaning only a little (5th here: past what 1,000 tokens showed); it is placed third,
    under the vector ranking's first (placed second), and the passage re-ranking leaves both there."""
    terms = ["global", "interpreter", "lock"]
    keyword = [_candidate(f"k{n}", f"the global interpreter lock, page {n}") for n in range(1, 7)]
    nearest = _candidate("nearest", "one thread at a time", by_meaning=True, focus=(0, 20))
    glossary = _candidate("glossary", "only one thread executes Python bytecode at a time", focus=(0, 40))
    candidates = [*keyword, nearest, glossary]
    ranks = [Ranks(n, None) for n in range(1, 7)] + [Ranks(None, 1), Ranks(17, 2)]
    assert keyword_confidence(candidates, ranks, terms) == 1.0
    ordered = hybrid_order(candidates, ranks, terms)
    assert [c.doc_id for c in ordered][:4] == ["k1", "nearest", "glossary", "k2"]
    assert ordered[1].placed and ordered[2].placed and ordered[2].focus is None
    assert [c.doc_id for c in rerank_fused(ordered, terms)][1:3] == ["nearest", "glossary"]


def _logs(first_words: str) -> tuple[list[Candidate], list[Ranks], list[str]]:
    """Five keyword hits about rotating logs, the first holding ``first_words``, then the vector ranking's
    first, keyword search's 3rd, which holds one of the query's words."""
    terms = ["rotate", "log", "files", "big"]
    keyword = [_candidate("k1", first_words)] + [
        _candidate(f"k{n}", f"rotate the log files when they grow big, page {n}") for n in range(2, 6)
    ]
    nearest = _candidate("handlers", "RotatingFileHandler rolls over at maxBytes; the log goes on in a new file.")
    ranks = [Ranks(1, None), Ranks(2, None), Ranks(4, None), Ranks(5, None), Ranks(6, None), Ranks(3, 1)]
    return [*keyword, nearest], ranks, terms


def test_the_nearest_in_meaning_of_a_question_in_the_askers_words_stays_in_the_first_three() -> None:
    """The first keyword hit holds three of the four words (confidence 0.75): fusion puts the vector
    ranking's first, which keyword search ranked 3rd, first; the re-ranking by passages would sink it
    under the five hits holding more of the words, to 6th, past what 1,000 tokens show. It stays third."""
    candidates, ranks, terms = _logs("rotate the log when the files reach maxBytes")
    assert keyword_confidence(candidates, ranks, terms) == 0.75
    ordered = hybrid_order(candidates, ranks, terms)
    assert ordered[0].doc_id == "handlers" and ordered[0].meaning_first and not ordered[0].placed
    reranked = rerank_fused(ordered, terms)
    assert [c.doc_id for c in reranked].index("handlers") == MEANING_FIRST_FLOOR - 1 == 2


def test_the_nearest_in_meaning_of_a_query_in_the_manuals_words_is_re_ranked_with_the_others() -> None:
    """The first keyword hit holds every word (confidence 1): the re-ranking by passages orders it
    with the keyword hits, as before."""
    candidates, ranks, terms = _logs("rotate the log files that grow big")
    assert keyword_confidence(candidates, ranks, terms) == 1.0
    ordered = hybrid_order(candidates, ranks, terms)
    assert not any(c.meaning_first for c in ordered)
    assert [c.doc_id for c in rerank_fused(ordered, terms)][-1] == "handlers"


def test_the_nearest_in_meaning_moved_up_leaves_a_hit_keeping_the_floors_place_there() -> None:
    """The floor inserted the vector ranking's first at the third place, pushing a hit found by meaning alone
    (or placed there) that held it down to 4th. That hit keeps its place, and the first takes the nearest place
    above that no such hit holds (2nd, then 1st), the hits the re-ranking moved making room for it."""
    first = replace(_candidate("first", "the nearest in meaning"), meaning_first=True)
    kept = _candidate("kept", "found by meaning alone", by_meaning=True)
    placed = replace(_candidate("placed", "the vector ranking's second"), placed=True)
    k = [_candidate(f"k{n}", f"keyword hit {n}") for n in range(1, 5)]
    ordered = meaning_first_floor([k[0], k[1], kept, k[2], placed, first])
    assert [c.doc_id for c in ordered] == ["k1", "first", "kept", "k2", "placed", "k3"]
    ordered = meaning_first_floor([k[0], kept, placed, k[1], k[2], first])
    assert [c.doc_id for c in ordered] == ["first", "kept", "placed", "k1", "k2", "k3"]
    ordered = meaning_first_floor([k[0], k[1], k[2], placed, k[3], first])  # the floor's place is free: as before
    assert [c.doc_id for c in ordered] == ["k1", "k2", "first", "k3", "placed", "k4"]
    assert meaning_first_floor([kept, kept, kept, first]) == [kept, kept, kept, first]
