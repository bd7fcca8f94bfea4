"""Re-ranking by passages and headings: the chunk that is about the query comes first."""

from __future__ import annotations

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.ranking import rerank
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.flat()


def _candidate(doc_id: str, title: str, trail: tuple[str, ...], text: str, score: float) -> Candidate:
    return Candidate(doc_id, title, StoredChunk(0, text, 0, len(text), trail, MODEL.estimate(text)), score)


def test_the_chunk_whose_headings_name_the_query_comes_first() -> None:
    """Equal text matches: the chunk under 'function groupby' of itertools beats a what's-new mention."""
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
