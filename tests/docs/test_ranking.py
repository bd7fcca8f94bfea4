"""Re-ranking by passages and headings: the chunk that is about the query comes first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxtrio.docs import ranking
from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.ranking import named_versions, release_record, rerank
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    import pytest

MODEL = TokenModel.flat()
#: Node.js 18's stream.md, stream.getDefaultHighWaterMark to new stream.Writable (fixtures/NOTICE.txt).
STREAM = Path(__file__).parent / "fixtures" / "node_stream_highwatermark.md"


def _candidate(doc_id: str, title: str, trail: tuple[str, ...], text: str, score: float) -> Candidate:
    return Candidate(doc_id, title, StoredChunk(0, text, 0, len(text), trail, MODEL.estimate(text)), score)


def test_the_chunk_whose_headings_name_the_query_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal text matches: the chunk under 'function groupby' of itertools beats a what's-new mention
    (by its headings alone: release notes' own handicap off)."""
    monkeypatch.setattr(ranking, "RELEASE_WEIGHT", 0.0)
    text = "Call itertools.groupby on sorted data; groupby returns keys and groups.\n"
    news = _candidate("whatsnew", "whatsnew.rst", ("What's New", "Improved Modules"), text, 10.0)
    entry = _candidate("library.itertools", "itertools.rst", ("Itertool functions", "function groupby"), text, 9.0)
    terms = query_terms("itertools.groupby")
    assert [c.doc_id for c in rerank([news, entry], terms)] == ["library.itertools", "whatsnew"]
    assert [c.doc_id for c in rerank([news, entry], terms, heading_weight=0.0)] == ["whatsnew", "library.itertools"]


def test_a_passage_looks_for_what_its_headings_do_not_say() -> None:
    """Under 'function makedirs' of the os document, 'os.makedirs exist_ok' shows the exist_ok sentence."""
    filler = [f"Line {n} is about something else entirely, at some length." for n in range(40)]
    lines = [
        ".. function:: makedirs(name, mode=0o777, exist_ok=False)",
        "",
        "   Recursive directory creation.",
        *filler,
    ]
    lines[4] = "   If *exist_ok* is ``False`` (the default), a FileExistsError is raised."
    lines[36] = "   .. audit-event:: os.mkdir path,mode,dir_fd os.makedirs"  # all three words, but says nothing
    text = "\n".join(lines)
    hit = _candidate("library.os", "os.rst.txt", ("Files and Directories", "function makedirs"), text, 5.0)
    hits, _, _ = pack_hits([hit], 120, MODEL, query_terms("os.makedirs exist_ok"))
    assert "If *exist_ok* is ``False``" in hits[0].text and "audit-event" not in hits[0].text


def test_an_entry_that_starts_inside_a_chunk_counts_as_its_heading() -> None:
    """A chunk that begins under 'function filterfalse' and holds '.. function:: groupby' ranks as
    being about groupby: above a howto chunk that mentions itertools.groupby as often."""
    body = "Make an iterator that returns consecutive keys and groups from the *iterable*.\n"
    reference = (
        ".. function:: filterfalse(predicate, iterable)\n\n   Drops elements.\n\n"
        f".. function:: groupby(iterable, key=None)\n\n   {body}   See itertools.groupby.\n"
    )
    howto = f"Use itertools.groupby: itertools.groupby makes groups.\n{body}"
    news = _candidate("howto.functional", "functional.rst.txt", ("The itertools module",), howto, 10.0)
    entry = _candidate("library.itertools", "itertools.rst.txt", ("function filterfalse",), reference, 8.0)
    markdown = _candidate(
        "util", "util.md", ("Util", "`util.parseEnv(content)`"), "## `util.promisify(original)`\n", 1.0
    )
    terms = query_terms("itertools.groupby")
    assert [c.doc_id for c in rerank([news, entry], terms)] == ["library.itertools", "howto.functional"]
    assert [c.doc_id for c in rerank([news, markdown], query_terms("util.promisify"))][0] == "util"


def test_the_chunk_that_defines_an_identifier_the_query_writes_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """'What is the default highWaterMark of a writable stream?' over Node's stream.md: the chunk of
    stream.getDefaultHighWaterMark names highWaterMark in its heading and four times (BM25 35.7 over
    Node 18's docs) and came first; the one that defines it (the options of new stream.Writable:
    '* `highWaterMark` {number} Buffer level when ...', BM25 22.3) comes first now. A chunk of
    another page that defines it too gains nothing: the query is about the page ranked first."""
    lines = STREAM.read_text(encoding="utf-8").split("\n")
    getter = _candidate(
        "stream",
        "stream.md",
        ("Stream", "API for stream consumers", "`stream.getDefaultHighWaterMark(objectMode)`"),
        "\n".join(lines[:59]),
        35.72,
    )
    options = "\n".join(lines[134:163])
    writable = _candidate(
        "stream",
        "stream.md",
        ("Stream", "API for stream implementers", "Implementing a writable stream", "`new stream.Writable([options])`"),
        options,
        22.33,
    )
    elsewhere = _candidate("net", "net.md", ("Net", "`new net.Socket([options])`"), options, 30.0)
    terms = query_terms("What is the default highWaterMark of a writable stream?")
    ranked = rerank([getter, elsewhere, writable], terms)
    assert [(c.doc_id, c.score) for c in ranked] == [("stream", 22.33), ("stream", 35.72), ("net", 30.0)]
    monkeypatch.setattr(ranking, "INTRO_WEIGHT", 0.0)
    assert rerank([getter, elsewhere, writable], terms)[0] is getter


def test_release_notes_are_known_by_their_name_or_first_heading() -> None:
    """What's New, a Changelog, PostgreSQL's 'E.18. Release 15.1', pytest's announce/release-7.0.0;
    not RELEASE SAVEPOINT, nor a page that merely names a release."""

    def record(doc_id: str, top: str) -> bool:
        return release_record(_candidate(doc_id, doc_id, (top, "Improved Modules"), "text", 1.0))

    assert record("whatsnew.3.8", "What's New In Python 3.8")
    assert record("whatsnew.changelog", "Changelog")
    assert record("appendix-e", "E.18. Release 15.1")
    assert record("announce.release-7.0.0", "pytest-7.0.0")
    assert not record("sql-release-savepoint", "RELEASE SAVEPOINT")
    assert not record("library.os", "Miscellaneous operating system interfaces")
    assert not record("howto.pyporting", "How to port Python 2 Code to Python 3")


def test_release_notes_come_after_the_entry_that_scores_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """A what's-new item on groupby as good as the library's own chunk by every score but its page."""
    text = "itertools.groupby now groups consecutive keys of the iterable.\n"
    news = _candidate("whatsnew.2.4", "2.4.rst.txt", ("What's New in Python 2.4", "itertools"), text, 10.0)
    entry = _candidate("library.itertools", "itertools.rst.txt", ("Itertool functions",), text, 9.0)
    terms = query_terms("How does itertools.groupby group keys?")
    assert [c.doc_id for c in rerank([news, entry], terms)] == ["library.itertools", "whatsnew.2.4"]
    monkeypatch.setattr(ranking, "RELEASE_WEIGHT", 0.0)
    assert [c.doc_id for c in rerank([news, entry], terms)] == ["whatsnew.2.4", "library.itertools"]


def test_the_notes_of_a_release_the_query_names_keep_their_place() -> None:
    """Equal text: What's New In Python 3.10 gives way to the reference for a question naming no
    release or another one, not for one naming 3.10 (without the rule it gave way there too)."""
    text = "EncodingWarning is emitted when the encoding argument is omitted.\n"
    news = _candidate("whatsnew.3.10", "3.10.rst", ("What's New In Python 3.10", "New Features"), text, 10.0)
    io = _candidate("library.io", "io.rst", ("Text Encoding", "Opt-in EncodingWarning"), text, 9.5)

    def first(query: str) -> str:
        return rerank([news, io], query_terms(query), heading_weight=0.0, query=query)[0].doc_id

    assert first("What is the EncodingWarning added in Python 3.10?") == "whatsnew.3.10"
    assert first("What is the EncodingWarning?") == "library.io"
    assert first("What is the EncodingWarning added in Python 3.11?") == "library.io"
    assert first("EncodingWarning in 13.10 or 3.10.1") == "library.io"


def test_a_version_is_named_as_a_number_of_its_own() -> None:
    """3.10 and 15.1 are versions; 1.2.3's parts, utf-8.0 and -3.2 are not; PostgreSQL's release-15-1
    names 15.1, release-15-10 does not."""
    assert named_versions("added in Python 3.10, or 15.1?") == {"3.10", "15.1"}
    assert named_versions("version 1.2.3 of utf-8.0 rounds -3.2 down") == frozenset()
    pg = [_candidate(f"release-15-{n}", f"release-15-{n}.md", ("E.1. Release",), "text", 1.0) for n in (1, 10)]
    assert [c.doc_id for c in rerank(pg, ["release"], heading_weight=0.0, query="Release 15.1")] == [
        "release-15-1",
        "release-15-10",
    ]
    pg.reverse()
    assert [c.doc_id for c in rerank(pg, ["release"], heading_weight=0.0, query="Release 15.1")] == [
        "release-15-1",
        "release-15-10",
    ]


def test_a_title_underlined_inside_a_chunk_counts_as_a_heading_at_a_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """'What does del do to a variable name?' over Python's reference: the chunk that begins in the
    pass section holds the whole 'The del statement' section, underlined inside it; it ranks above a
    chunk with the same sentence and more BM25 whose headings say nothing of del. Without the title
    counted (INNER_TITLE_WEIGHT 0), the other comes first."""
    body = "Deletion of a name removes the binding of that name from the local or global namespace.\n"
    passing = (
        "``pass`` is a null operation --- when it is executed, nothing happens.\n\n"
        f'The del statement\n=================\n\n   del_stmt: "del" target_list\n\n{body}'
    )
    owner = _candidate("reference.simple_stmts", "simple_stmts.rst.txt", ("The pass statement",), passing, 9.5)
    other = _candidate(
        "reference.executionmodel",
        "executionmodel.rst.txt",
        ("Execution model", "Structure of a program"),
        f"Statements such as del and import bind or unbind a name.\n{body}",
        10.0,
    )
    terms = query_terms("What does del do to a variable name?")
    assert [c.doc_id for c in rerank([other, owner], terms)][0] == "reference.simple_stmts"
    monkeypatch.setattr(ranking, "INNER_TITLE_WEIGHT", 0.0)
    assert [c.doc_id for c in rerank([other, owner], terms)][0] == "reference.executionmodel"


def test_inner_titles_are_underlined_lines_as_long_as_their_adornment() -> None:
    """reST titles (with or without an overline) and markdown's setext headings; not a line over a
    shorter rule, an indented line, a table's border or a rule alone."""
    text = (
        "Intro text.\n\nThe del statement\n=================\n\n"
        "=====\nOver\n=====\n\nSetext heading\n--------------\n\n"
        "Short rule over a long line\n---\n\n    indented line\n    -------------\n\n"
        "=====  =====\nA      B\n=====  =====\n\n-----\n"
    )
    assert ranking.inner_titles(text) == ["The del statement", "Over", "Setext heading"]


def test_the_term_of_a_definition_list_inside_a_chunk_counts_as_a_heading_at_a_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'What is duck typing?' over Python's glossary: the chunk holding the ``duck-typing`` entry is
    under the trail 'Glossary' alone, which names no entry; the term above its indented definition
    says what it answers, and it ranks above a chunk with the same sentence and much more BM25 whose
    headings say nothing of duck typing. Without the term counted (weight 0), the other comes first."""
    body = "A programming style which does not look at an object's type; duck-typing avoids type tests.\n"
    glossary = _candidate(
        "glossary",
        "glossary.rst.txt",
        ("Glossary",),
        f".. glossary::\n\n   docstring\n      A string literal.\n\n   duck-typing\n      {body}",
        7.0,
    )
    other = _candidate(
        "library.abc", "abc.rst.txt", ("abc --- Abstract Base Classes",), f"ABCs and duck-typing.\n{body}", 10.0
    )
    terms = query_terms("What is duck typing?")
    assert [c.doc_id for c in rerank([other, glossary], terms)][0] == "glossary"
    monkeypatch.setattr(ranking, "INNER_TITLE_WEIGHT", 0.0)
    assert [c.doc_id for c in rerank([other, glossary], terms)][0] == "library.abc"


def test_definition_terms_are_short_lines_of_words_above_an_indented_definition() -> None:
    """Glossary and definition-list terms; not a line of code, a line ending in a colon or full stop,
    a bullet, a line under which nothing is indented, or an indented line under a less indented one."""
    text = (
        ".. glossary::\n\n   global interpreter lock\n      The mechanism used by CPython.\n\n"
        "``-b`` option\n   Issue a warning.\n\n"
        "Example::\n\n   x = 1\n\n"
        "Ends with a full stop.\n   continued\n\n"
        "- a bullet\n  continued\n\n"
        "for item in items\n\n"
        "    x = compute(y)\n        z\n\n"
        "plain line\nnot indented\n\n"
        "      deeper\n   shallower\n"
    )
    assert ranking.definition_terms(text) == ["global interpreter lock", "``-b`` option"]
