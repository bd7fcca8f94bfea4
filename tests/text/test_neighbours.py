"""Query expansion by word neighbours (``text/neighbours.py``): which words expand, to what, from the shipped table."""

from __future__ import annotations

import pytest

from ctxtrio.text import neighbours, thesaurus
from ctxtrio.text.neighbours import (
    ALIKE_MORE,
    FORMS_MORE,
    MORE,
    NEIGHBOURS,
    RARE,
    Group,
    alike_words,
    counted_first,
    expand,
    expandable,
    neighbours_of,
    plain_words,
    rare_words,
    wanted,
)
from ctxtrio.text.query import QUESTION_WORDS, query_terms
from ctxtrio.text.terms import STOPWORDS


def test_the_shipped_table_gives_real_neighbours() -> None:
    """The table built from all-MiniLM-L6-v2 puts directory near folder, and keeps no forms of the word, no stopwords."""
    assert "directory" in neighbours_of("folder")
    assert "folder" in neighbours_of("directory")
    assert neighbours_of("zzzqx") == ()
    for word in ("folder", "sleep", "tally", "duplicate", "ignore", "huge", "restart"):
        near = neighbours_of(word)
        assert 0 < len(near) <= NEIGHBOURS, word
        assert all(other[:4] != word[:4] for other in near), (word, near)
        assert not set(near) & (STOPWORDS | QUESTION_WORDS), (word, near)


def test_plain_words_leave_identifiers_out() -> None:
    """Only words of letters alone are plain: not parts of dotted names, snake_case, camelCase, flags, calls or acronyms."""
    query = "Delete a folder with os.path rmtree max_size getUserName --force TOAST re.VERBOSE f() now"
    assert plain_words(query) == {"delete", "a", "folder", "with", "rmtree", "now"}


def test_a_letter_alone_is_a_plain_word() -> None:
    """'C' of "a C++ extension" and "Ctrl+C" is a word, which the thesaurus's phrases name; not '-m' or 'b' of a.b()."""
    assert plain_words("a C++ extension, or python -m pdb on a.b().c()") == {
        "a",
        "c",
        "extension",
        "or",
        "python",
        "pdb",
        "on",
    }
    assert (
        "sigint" in alike_words("what happens when the user presses Ctrl+C", ["user", "presses", "ctrl", "c"], {})["c"]
    )


@pytest.fixture
def no_thesaurus(monkeypatch: pytest.MonkeyPatch) -> None:
    """The neighbours alone: the thesaurus knows no word (it also speaks for 'folder')."""
    monkeypatch.setattr(thesaurus, "alike", lambda *args, **kwargs: {})


@pytest.mark.usefixtures("no_thesaurus")
def test_a_rare_plain_word_expands_to_more_common_neighbours() -> None:
    """folder, held by few rows, gains the neighbours the corpus holds more than MORE times as often, named before them twice."""
    terms = query_terms("delete a folder")
    rows = 10_000
    counts = {"delete": 300, "folder": 2, "directory": 500, "dir": 50, "files": 2_000, "explorer": 1, "file": 3_000}
    near = [w for w in neighbours_of("folder") if counts.get(w, 0) > MORE * counts["folder"]]
    assert near and "explorer" not in near
    assert expand("delete a folder", terms, counts, rows) == ["delete", Group(("folder",), tuple(near))]
    assert Group(("folder",), tuple(near)).last_terms() == ("folder", "folder", *near)
    assert "folder" in expandable("delete a folder", terms)
    assert rare_words(expandable("delete a folder", terms), counts, rows) == ["folder"]


@pytest.mark.usefixtures("no_thesaurus")
def test_a_common_word_an_identifier_or_an_unknown_word_stays_as_it_is() -> None:
    """A word held by more than RARE of the rows, a word of an identifier, and a word the table lacks do not expand."""
    rows = 10_000
    common = {"folder": int(RARE * rows) + 1, "directory": 5_000}
    assert expand("folder", ["folder"], common, rows) == ["folder"]
    assert expand("my_folder", ["myfolder", "my", "folder"], {"directory": 5_000}, rows) == ["myfolder", "my", "folder"]
    assert expandable("my_folder", ["myfolder", "my", "folder"]) == []
    assert expand("quokka", ["quokka"], {}, rows) == ["quokka"]


@pytest.mark.usefixtures("no_thesaurus")
def test_a_neighbour_the_query_already_holds_is_not_added_again() -> None:
    """folder and directory both asked: neither gains the other."""
    counts = {"folder": 1, "directory": 1, "dir": 100}
    words = expand("folder directory", ["folder", "directory"], counts, 10_000)
    flat = [w for word in words for w in ((word,) if isinstance(word, str) else word.last_terms())]
    assert flat.count("directory") == 1 and flat.count("folder") == 2


def test_a_plain_word_searches_for_its_forms_the_corpus_uses_more() -> None:
    """aborted (5 rows) also asks for abort (40 > FORMS_MORE x 5) but not aborts (10); a common word
    gains forms too, neighbours only when rare; a word of an identifier gains neither."""
    rows = 10_000
    counts = {"aborted": 5, "abort": 40, "aborts": 10, "numbers": 200, "number": 3_000, "transaction": 900}
    assert FORMS_MORE * counts["aborted"] < counts["abort"]
    words = expand("numbers after an aborted transaction", ["numbers", "after", "aborted", "transaction"], counts, rows)
    assert words == [Group(("numbers", "number")), "after", Group(("aborted", "abort")), "transaction"]
    assert Group(("aborted", "abort")).last_terms() == ("aborted", "abort")
    assert expand("aborted_count", ["abortedcount", "aborted", "count"], counts, rows) == [
        "abortedcount",
        "aborted",
        "count",
    ]


def test_a_word_does_not_search_for_a_common_word_it_only_shares_a_stem_with() -> None:
    """notes (the stem of note is not's) gains note, not the 40 times more common not; os.stat's stat not state."""
    counts = {"notes": 50, "note": 300, "not": 12_000, "stat": 40, "state": 900, "states": 200}
    assert expand("release notes", ["release", "notes"], counts, 50_000) == ["release", Group(("notes", "note"))]
    assert expand("stat call", ["stat", "call"], counts, 50_000) == ["stat", "call"]


def test_a_form_another_word_of_the_query_is_stays_that_word() -> None:
    """file and files both asked: files does not join file's group (nor file files')."""
    counts = {"file": 10, "files": 100}
    assert expand("file files", ["file", "files"], counts, 10_000) == ["file", "files"]


def test_wanted_names_the_forms_and_the_rare_words_neighbours_not_yet_counted() -> None:
    """The words to count: every plain word's other forms, the neighbours of the rare ones, none counted already."""
    rows = 10_000
    counts = {"ignore": 300, "folder": 2}
    words = wanted("ignore a folder", ["ignore", "folder"], counts, rows)
    assert {"ignored", "ignores", "ignoring", "folders"} <= set(words)
    assert set(neighbours_of("folder")) <= set(words)
    assert neighbours_of("ignore") and not set(neighbours_of("ignore")) & set(words)  # 3% of the rows: not rare
    assert "ignored" not in wanted("ignore a folder", ["ignore", "folder"], counts | {"ignored": 7}, rows)


def test_load_reads_the_table_once_and_says_so() -> None:
    """load() leaves the table read (loaded() true), and lookups parse a word's line alike each time."""
    neighbours.load()
    assert neighbours.loaded()
    assert neighbours.neighbours_of("folder") == neighbours.neighbours_of("folder")
    assert all(":" not in word for word in neighbours.neighbours_of("folder"))


def test_a_word_the_corpus_seldom_says_gains_the_thesaurus_words_at_every_level() -> None:
    """unchangeable (no row) gains the thesaurus's immutable and frozen, which more rows hold than its forms, at every
    level; its words no row holds are left out; each term is named once in the last level."""
    rows = 10_000
    counts = {"unchangeable": 0, "dataclass": 40, "immutable": 60, "frozen": 30}
    words = expand("an unchangeable dataclass", ["unchangeable", "dataclass"], counts, rows)
    assert words[1] == "dataclass"
    group = words[0]
    assert isinstance(group, Group) and group.everywhere
    assert group.alike == ("immutable", "frozen")
    assert group.level_terms() == ("unchangeable", "immutable", "frozen")
    assert group.last_terms() == ("unchangeable", "immutable", "frozen", *group.near)


def test_a_word_the_corpus_says_often_gains_them_at_the_last_level_only_if_more_rows_hold_them() -> None:
    """checksum in 5% of the rows: hash (more rows) joins at the last level, md5 (fewer than ALIKE_MORE x its rows) does not."""
    rows = 10_000
    counts = {"checksum": 500, "hash": 2_000, "digest": 800, "md5": 100}
    assert counts["md5"] <= ALIKE_MORE * counts["checksum"] < counts["digest"]
    [group] = expand("checksum", ["checksum"], counts, rows)
    assert isinstance(group, Group) and not group.everywhere
    assert "hash" in group.alike and "digest" in group.alike and "md5" not in group.alike
    assert group.level_terms() == ("checksum",)
    assert group.last_terms()[:1] == ("checksum",) and group.last_terms().count("checksum") == 1


def test_a_phrase_of_the_query_gains_its_words_on_its_rarest_word() -> None:
    """'leading zeros': zfill goes to zeros, the rarer; 'zeros' alone gains no zfill; words of identifiers never match."""
    counts = {"leading": 300, "zeros": 20, "zfill": 30}
    assert "zfill" in alike_words("pad with leading zeros", ["pad", "leading", "zeros"], counts)["zeros"]
    assert "zfill" not in alike_words("zeros", ["zeros"], counts).get("zeros", ())
    assert alike_words("leading_zeros", ["leadingzeros", "leading", "zeros"], counts) == {}


def test_wanted_names_the_thesaurus_words_to_count() -> None:
    """The thesaurus's words for the query's plain words are counted before expand decides (none counted twice)."""
    words = wanted("a checksum", ["checksum"], {"checksum": 500, "hash": 7}, 10_000)
    assert "digest" in words and "hash" not in words


def test_the_first_count_holds_the_forms_and_every_thesaurus_word() -> None:
    """Counted with the query's terms: the plain words' other forms and all their thesaurus words (none a term),
    so that wanted() has nothing of them left to ask."""
    first = counted_first("a checksum of files", ["checksum", "files"])
    assert {"checksums", "file", "hash", "digest"} <= set(first)
    assert "files" not in first and "checksum" not in first
    counts = dict.fromkeys(["checksum", "files", *first], 5)
    assert not set(wanted("a checksum of files", ["checksum", "files"], counts, 10_000)) & set(
        alike_words("a checksum of files", ["checksum", "files"], {})["checksum"]
    )


def test_a_hyphenated_word_whose_prefix_is_left_out_is_a_form_of_the_word_after_it() -> None:
    """'re-raising' without 're' (a long question): raising is a plain word (its forms raise, raised),
    and reraising one of its forms, not a word of its own; with 're' among the terms (a short query),
    reraising stays a word and raising is still plain."""
    counts = {"raising": 132, "raise": 900, "raised": 1200, "reraising": 1, "re": 531}
    question = "add a note to an exception before re-raising it"
    assert "raising" in plain_words(question)
    words = expand(question, ["add", "note", "exception", "before", "reraising", "raising"], counts, 7_973)
    assert words[:4] == ["add", "note", "exception", "before"]
    assert len(words) == 5 and isinstance(words[4], Group), words
    assert words[4].forms == ("raising", "raise", "raised", "reraising")
    short = expand("before re-raising", ["before", "reraising", "re", "raising"], counts, 7_973)
    assert short[:3] == ["before", "reraising", "re"]
    assert isinstance(short[3], Group) and "reraising" not in short[3].forms
