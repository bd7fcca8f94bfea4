"""A search asks for rows holding all its words first, then fewer (``store.rows.fts_levels``)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio.store.index import SearchIndex
from ctxtrio.store.index_queries import search_levels
from ctxtrio.store.records import StoredRecord
from ctxtrio.store.rows import MAX_LEVEL_WORDS, IndexRow, Level, fts_levels
from ctxtrio.text.neighbours import Group

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def index(tmp_path: Path) -> Iterator[SearchIndex]:
    opened = SearchIndex(tmp_path / "index.sqlite3")
    opened.open()
    yield opened
    opened.close()


def _fill(index: SearchIndex, journal: str, texts: list[str]) -> None:
    """Index ``texts`` as rows 0.. of ``journal`` (one record per row, fake byte ranges),
    then 30 rows of other words, so no query word is in half the rows (FTS5 floors the
    IDF of such words at 1e-6, which would hide every difference)."""
    texts = texts + [f"unrelated{n} padding" for n in range(30)]
    records = [StoredRecord(10 * n, 10 * n + 10, {"seq": n}) for n in range(len(texts))]
    rows = {10 * n: [IndexRow("chunks", str(n), text)] for n, text in enumerate(texts)}
    index.index_batch([(journal, Path("/nonexistent") / journal, records, 10 * len(texts), rows)])


def _plain_bm25(tmp_path: Path, words: list[str]) -> dict[str, float]:
    """BM25 of every row under a plain OR of ``words``, as FTS5 computes it (higher is better)."""
    expression = " OR ".join(f'"{word}"' for word in words)
    with sqlite3.connect(tmp_path / "index.sqlite3") as conn:
        found = conn.execute("SELECT item, bm25(chunks) FROM chunks WHERE chunks MATCH ?", (expression,)).fetchall()
    return {str(item): -float(score) for item, score in found}


def test_levels_go_from_every_word_down_to_any_word() -> None:
    levels = fts_levels(["alpha", "beta", "gamma", "beta"])
    assert [level.words for level in levels] == [3, 2, 1]
    assert levels[0].expression == '("alpha" AND "beta" AND "gamma")'
    assert levels[1].expression == '("alpha" AND "beta") OR ("alpha" AND "gamma") OR ("beta" AND "gamma")'
    assert levels[2].expression == '"alpha" OR "beta" OR "gamma"'
    assert [level.expression for level in fts_levels(['say"hi'])] == ['"say""hi"']
    assert fts_levels([]) == fts_levels([""]) == []


def test_long_queries_ask_for_all_their_words_then_any() -> None:
    """No level is skipped between two asked: past MAX_LEVEL_WORDS only all and any (scores stay BM25)."""
    assert [level.words for level in fts_levels([f"w{n}" for n in range(MAX_LEVEL_WORDS)])] == [5, 4, 3, 2, 1]
    assert [level.words for level in fts_levels([f"w{n}" for n in range(6)])] == [6, 1]
    levels = fts_levels([f"w{n}" for n in range(40)])
    assert [level.words for level in levels] == [40, 1]
    assert levels[0].expression.count(" AND ") == 39 and levels[1].expression.count(" OR ") == 39


def test_rows_with_every_word_come_first(index: SearchIndex, tmp_path: Path) -> None:
    """A row that repeats one word outranks the row with both words under a plain OR, but not here."""
    texts = ["quokka " * 30 + "filler", "quokka wombat and more filler text", "wombat alone here", "nothing"]
    _fill(index, "docs/a.jsonl", texts)
    plain = _plain_bm25(tmp_path, ["quokka", "wombat"])
    assert plain["0"] > plain["1"]  # what a plain OR would rank first
    hits = index.search("chunks", ["quokka", "wombat"], journals=None, limit=3)
    assert [hit.item for hit in hits] == ["1", "0", "2"]


def test_scores_stay_bm25_at_every_level(index: SearchIndex, tmp_path: Path) -> None:
    texts = ["red green blue", "red green", "green blue yellow", "red", "blue blue blue"]
    _fill(index, "docs/a.jsonl", texts)
    plain = _plain_bm25(tmp_path, ["red", "green", "blue"])
    hits = index.search("chunks", ["red", "green", "blue"], journals=None, limit=10)
    assert [hit.item for hit in hits][:1] == ["0"]  # the only row with all three
    assert sorted(hit.item for hit in hits) == sorted(plain)
    for hit in hits:
        assert hit.score == pytest.approx(plain[hit.item], rel=1e-9)


def test_levels_fill_up_to_the_limit_without_repeats(index: SearchIndex) -> None:
    texts = ["apple pear", "apple", "pear", "apple pear plum", "plum"]
    _fill(index, "docs/a.jsonl", texts)
    hits = index.search("chunks", ["apple", "pear", "plum"], journals=None, limit=4)
    items = [hit.item for hit in hits]
    assert len(items) == len(set(items)) == 4
    assert items[:2] == ["3", "0"]  # all three words, then two
    assert set(items[2:]) <= {"1", "2", "4"}


def test_journal_filter_holds_at_every_level(index: SearchIndex) -> None:
    _fill(index, "docs/a.jsonl", ["kiwi mango", "kiwi"])
    _fill(index, "docs/b.jsonl", ["kiwi mango", "mango"])
    hits = index.search("chunks", ["kiwi", "mango"], journals=["docs/b.jsonl"], limit=5)
    assert [(hit.journal, hit.item) for hit in hits] == [("docs/b.jsonl", "0"), ("docs/b.jsonl", "1")]
    assert index.search("chunks", ["kiwi"], journals=[], limit=5) == []


def test_a_group_of_terms_is_its_first_term_above_the_last_level() -> None:
    """A word given with its neighbours asks for its own term in every level but the last, which ORs all of them."""
    levels = fts_levels(["delete", Group(("folder",), ("directory",))])
    assert [level.expression for level in levels] == [
        '("delete" AND "folder")',
        '"delete" OR "folder" OR "folder" OR "directory"',
    ]
    assert [level.expression for level in fts_levels([Group(("folder",), ("dir",))])] == [
        '"folder" OR "folder" OR "dir"'
    ]


def test_rows_with_the_query_own_words_come_before_rows_with_neighbours(index: SearchIndex, tmp_path: Path) -> None:
    """Rows holding the words as asked come first; a row holding only a neighbour is found at the
    last level, and there the asked term, named twice, weighs twice the neighbour in BM25."""
    texts = ["remove the folder now", "remove the directory tree", "folder icons", "directory listing", "nothing"]
    _fill(index, "docs/a.jsonl", texts)
    hits = index.search("chunks", ["remove", Group(("folder",), ("directory",))], journals=None, limit=5)
    assert [hit.item for hit in hits][:1] == ["0"]
    assert {hit.item for hit in hits} == {"0", "1", "2", "3"}
    plain = _plain_bm25(tmp_path, ["remove", "folder", "folder", "directory"])
    assert plain["2"] > plain["3"]  # the same length and rarity; "folder" weighs twice
    assert [hit.item for hit in hits].index("2") < [hit.item for hit in hits].index("3")


def test_a_word_of_several_forms_is_any_of_them_at_every_level() -> None:
    """A group's forms are ORed wherever the word is asked, its neighbours only in the last level."""
    levels = fts_levels(["transaction", Group(("aborted", "abort"), ("cancelled",))])
    assert [level.expression for level in levels] == [
        '("transaction" AND ("aborted" OR "abort"))',
        '"transaction" OR "aborted" OR "abort" OR "aborted" OR "abort" OR "cancelled"',
    ]


def test_the_thesaurus_words_of_a_rare_word_are_any_of_its_forms_at_every_level() -> None:
    """A group's thesaurus words join its forms at every level when it says so (everywhere), else only the last,
    where every term of a group with thesaurus words is named once."""
    everywhere = fts_levels(["dataclass", Group(("unchangeable",), (), ("immutable", "frozen"), everywhere=True)])
    assert [level.expression for level in everywhere] == [
        '("dataclass" AND ("unchangeable" OR "immutable" OR "frozen"))',
        '"dataclass" OR "unchangeable" OR "immutable" OR "frozen"',
    ]
    last = fts_levels(["file", Group(("checksum",), ("sum",), ("hash",))])
    assert [level.expression for level in last] == [
        '("file" AND "checksum")',
        '"file" OR "checksum" OR "hash" OR "sum"',
    ]


def test_a_row_holding_a_thesaurus_word_is_found_with_the_rows_holding_every_word(index: SearchIndex) -> None:
    """'unchangeable dataclass' with immutable as a word of the thesaurus found everywhere: the row saying
    'immutable dataclass' holds every word, so it comes before a row holding dataclass more often."""
    texts = ["dataclass dataclass dataclass fields", "an immutable dataclass instance", "immutable immutable tuple"]
    _fill(index, "docs/a.jsonl", texts)
    grouped = Group(("unchangeable",), (), ("immutable",), everywhere=True)
    assert [hit.item for hit in index.search("chunks", ["dataclass", grouped], journals=None, limit=3)][:1] == ["1"]
    plain = index.search("chunks", ["dataclass", "unchangeable"], journals=None, limit=3)
    assert [hit.item for hit in plain][:1] != ["1"]


def test_a_row_holding_another_form_is_found_with_the_rows_holding_every_word(index: SearchIndex) -> None:
    """'aborted transaction' with abort as a form: the row saying 'abort ... transaction' holds every word,
    so it comes before rows holding one of them more often; asked as written, it does not."""
    texts = ["transaction transaction transaction log", "abort the transaction", "aborted aborted aborted"]
    _fill(index, "docs/a.jsonl", texts)
    grouped = index.search("chunks", ["transaction", Group(("aborted", "abort"))], journals=None, limit=3)
    assert [hit.item for hit in grouped][:1] == ["1"]
    plain = index.search("chunks", ["transaction", "aborted"], journals=None, limit=3)
    assert [hit.item for hit in plain][:1] != ["1"]


def test_a_word_half_the_rows_hold_is_left_out_of_the_last_level_only() -> None:
    """Common words (at least half of the rows hold them) stay in every level but the last, which names the
    others, then every word again, asked only if nothing was found; a query of common words alone keeps them all."""
    levels = fts_levels(["test", "parser", Group(("valid",), ("correct",))], common={"test", "valid"})
    assert [level.expression for level in levels] == [
        '("test" AND "parser" AND "valid")',
        '("test" AND "parser") OR ("test" AND "valid") OR ("parser" AND "valid")',
        '"parser"',
        '"test" OR "parser" OR "valid" OR "valid" OR "correct"',
    ]
    assert levels[-1].only_if_none and not any(level.only_if_none for level in levels[:-1])
    assert fts_levels(["test", "case"], common={"test", "case"})[-1] == Level(1, '"test" OR "case"')


def test_leaving_a_common_word_out_keeps_the_scores_and_drops_rows_that_score_nothing(
    index: SearchIndex, tmp_path: Path
) -> None:
    """A word most rows hold has FTS5's floor IDF (1e-6): rows holding only it score ~0. Searched with it
    common, the last level returns the rows holding the other words, in the same order, with the same
    scores to 1e-5, and none of the rows holding only the common word."""
    texts = [f"test case {n}" for n in range(60)] + ["test frobnicate", "frobnicate widget", "widget"]
    records = [StoredRecord(10 * n, 10 * n + 10, {"seq": n}) for n in range(len(texts))]
    rows = {10 * n: [IndexRow("chunks", str(n), text)] for n, text in enumerate(texts)}
    index.index_batch([("docs/a.jsonl", Path("/nonexistent/a"), records, 10 * len(texts), rows)])
    words = ["test", "frobnicate", "widget"]
    every = index.search("chunks", words, journals=None, limit=20)
    rare = index.search("chunks", words, journals=None, limit=20, common={"test"})
    assert [hit.item for hit in rare] == ["61", "60", "62"]
    assert [hit.item for hit in every][:3] == ["61", "60", "62"] and len(every) == 20  # then rows of "test" alone
    for before, after in zip(every, rare, strict=False):
        assert after.score == pytest.approx(before.score, abs=1e-5)
    misspelt = index.search("chunks", ["test", "frobnicat"], journals=None, limit=5, common={"test"})
    assert len(misspelt) == 5 and all("test" in texts[int(hit.item)] for hit in misspelt)  # the common word still finds


def test_a_search_within_more_journals_than_a_statement_takes_parameters(index: SearchIndex, tmp_path: Path) -> None:
    """A connection whose SQLite allows 100 parameters a statement (32,766 by default; this build's 250,000) searches
    within 150 journals (twice one of them), then within 1 and 150 again on the same connection: the rows of
    the journals asked each time, as within few (before: sqlite3.OperationalError, too many SQL variables)."""
    _fill(index, "docs/a.jsonl", ["kiwi mango", "kiwi"])
    _fill(index, "docs/b.jsonl", ["kiwi mango", "mango"])
    many = [f"docs/other{n}.jsonl" for n in range(148)] + ["docs/b.jsonl", "docs/b.jsonl"]
    levels = fts_levels(["kiwi", "mango"])
    with contextlib.closing(sqlite3.connect(tmp_path / "index.sqlite3", isolation_level=None)) as conn:
        few = search_levels(conn, "chunks", levels, journals=["docs/b.jsonl"], limit=5)
        assert [(hit.journal, hit.item) for hit in few] == [("docs/b.jsonl", "0"), ("docs/b.jsonl", "1")]
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)
        assert search_levels(conn, "chunks", levels, journals=many, limit=5) == few
        assert search_levels(conn, "chunks", levels, journals=["docs/a.jsonl"], limit=5)[0].journal == "docs/a.jsonl"
        assert {hit.journal for hit in search_levels(conn, "chunks", levels, journals=many, limit=5)} == {
            "docs/b.jsonl"
        }
