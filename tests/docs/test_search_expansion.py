"""doc_search expands a plain word the documents seldom use by its neighbours (``text/neighbours.py``),
on real text: shutil's rmtree entry (Python docs) among threading.rst and multiprocessing.rst."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio.store.handle import StoreHandle
from ctxtrio.store.index import SearchIndex
from ctxtrio.text import neighbours, thesaurus
from ctxtrio.text.neighbours import neighbours_of
from ctxtrio.text.terms import terms

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxtrio.store.index import Appended, Forget

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHUTIL = Path(__file__).resolve().parents[1] / "text" / "fixtures" / "python_shutil_rmtree.rst.txt"


async def _search(tmp_path: Path, query: str, **changes: object) -> list[tuple[str, str]]:
    """The (doc_id, text) of the hits of ``query`` over the three real files."""
    async with opened(tmp_path, None, **changes) as ctx:
        for path in (FIXTURES / "python_threading.rst.txt", FIXTURES / "python_multiprocessing.rst.txt", SHUTIL):
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=path.name.split(".")[0])
        result = await ctx.documents.search(query, budget_tokens=100_000)
        return [(hit.doc_id, hit.text) for hit in result.hits]


async def test_a_word_the_documents_never_use_finds_them_by_its_neighbours(tmp_path: Path) -> None:
    """'folder' is in none of the files: it searches for its neighbours (directory, dir, ...), and shutil's entries come first."""
    hits = await _search(tmp_path, "the folder")
    assert hits and hits[0][0] == "python_shutil_rmtree", [doc for doc, _ in hits]
    assert all("folder" not in text.lower() for _, text in hits)
    assert any(word in terms(hits[0][1]) for word in neighbours_of("folder"))


async def test_the_setting_turns_it_off(tmp_path: Path) -> None:
    """With query_expansion off, 'folder' finds nothing."""
    assert await _search(tmp_path, "the folder", query_expansion=False) == []


async def test_the_counts_that_choose_the_words_wait_for_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search just after an ingest counts the words' rows once the ingest is indexed: while the
    index flush is held until a search waits for the index, 'the folder' still finds shutil by its neighbours."""
    release = threading.Event()
    real_index_batch = SearchIndex.index_batch
    real_settled = StoreHandle.index_settled

    def held_index_batch(self: SearchIndex, appended: Sequence[Appended | Forget]) -> None:
        release.wait(10)
        real_index_batch(self, appended)

    async def releasing_settled(self: StoreHandle) -> None:
        release.set()
        await real_settled(self)

    monkeypatch.setattr(SearchIndex, "index_batch", held_index_batch)
    monkeypatch.setattr(StoreHandle, "index_settled", releasing_settled)
    hits = await _search(tmp_path, "the folder")
    assert hits and hits[0][0] == "python_shutil_rmtree", [doc for doc, _ in hits]


JSON = Path(__file__).resolve().parents[1] / "text" / "fixtures" / "python_json.rst.txt"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html/_sources")


async def test_a_word_in_another_form_finds_the_page_that_says_it_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'serializes' is in none of the files; json's says serialize, serialized, serializing: by its forms
    alone (no word rare enough for neighbours) the query finds json's page first, where as written
    only 'objects' matched (multiprocessing's first)."""
    monkeypatch.setattr(neighbours, "RARE", -1.0)
    async with opened(tmp_path) as ctx:
        for path in (FIXTURES / "python_threading.rst.txt", FIXTURES / "python_multiprocessing.rst.txt", JSON):
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=path.name.split(".")[0])
        found = await ctx.documents.search("what serializes objects", budget_tokens=100_000)
    assert found.hits and found.hits[0].doc_id == "python_json", [hit.doc_id for hit in found.hits]
    assert "serializ" in found.hits[0].text.lower()


@pytest.mark.skipif(not PYTHON_DOCS.is_dir(), reason="Debian's python3.11-doc is not installed")
async def test_forms_over_the_python_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over python3.11-doc's 497 reST files: 'showing' finds getpass's 'without echoing' page by
    'show', which is not among the first 10 hits when asked only as written (forms alone: with the
    thesaurus, 'showing' also asks for print and output, and library.idle comes first)."""
    monkeypatch.setattr(thesaurus, "alike", lambda *args, **kwargs: {})
    query = "ask the user to type a password without showing it on the screen"
    async with opened(tmp_path) as ctx:
        for path in sorted(PYTHON_DOCS.rglob("*.rst.txt")):
            doc_id = str(path.relative_to(PYTHON_DOCS)).removesuffix(".rst.txt").replace("/", ".")[-64:]
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=doc_id)
        found = await ctx.documents.search(query, budget_tokens=100_000, limit=3)
    assert [hit.doc_id for hit in found.hits][:1] == ["library.getpass"], [hit.doc_id for hit in found.hits]


TEXT_FIXTURES = SHUTIL.parent
#: Eight real pages of the Python docs and Node's timers page, for the thesaurus's tests.
_MANY = (
    FIXTURES / "python_threading.rst.txt",
    FIXTURES / "python_multiprocessing.rst.txt",
    TEXT_FIXTURES / "python_functools_lru_cache.rst.txt",
    TEXT_FIXTURES / "python_math_isclose.rst.txt",
    TEXT_FIXTURES / "python_contextlib_suppress.rst.txt",
    TEXT_FIXTURES / "python_bisect_insort.rst.txt",
    SHUTIL,
    JSON,
    TEXT_FIXTURES / "node_timers.md",
)


@pytest.mark.parametrize("thesaurus_on", [True, False])
async def test_the_thesaurus_finds_the_page_in_the_documentation_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, thesaurus_on: bool
) -> None:
    """Over nine real pages: 'remember what a function returned' finds functools' lru_cache page first (the
    thesaurus: cache, memoize) and 'are two floats nearly equal' math.isclose; without the thesaurus neither
    comes first (multiprocessing's and json's pages do)."""
    if not thesaurus_on:
        monkeypatch.setattr(thesaurus, "alike", lambda *args, **kwargs: {})
    async with opened(tmp_path) as ctx:
        for path in _MANY:
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=path.name.split(".")[0])
        cache = await ctx.documents.search("remember what a function returned", budget_tokens=100_000, limit=3)
        close = await ctx.documents.search("are two floats nearly equal", budget_tokens=100_000, limit=3)
    firsts = [cache.hits[0].doc_id, close.hits[0].doc_id]
    if thesaurus_on:
        assert firsts == ["python_functools_lru_cache", "python_math_isclose"]
    else:
        assert "python_functools_lru_cache" not in firsts and "python_math_isclose" not in firsts, firsts


@pytest.mark.skipif(not PYTHON_DOCS.is_dir(), reason="Debian's python3.11-doc is not installed")
async def test_the_thesaurus_over_the_python_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over python3.11-doc's 497 reST files: 'a checksum of a file' finds hashlib first (checksum: hash, digest);
    'a trend line through my data points' finds statistics first (the third pass's 'trend line':
    linear_regression, regression, correlation); without the thesaurus, neither page comes first."""
    async with opened(tmp_path) as ctx:
        for path in sorted(PYTHON_DOCS.rglob("*.rst.txt")):
            doc_id = str(path.relative_to(PYTHON_DOCS)).removesuffix(".rst.txt").replace("/", ".")[-64:]
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=doc_id)
        found = await ctx.documents.search("a checksum of a file", budget_tokens=100_000, limit=3)
        trend = await ctx.documents.search("a trend line through my data points", budget_tokens=100_000, limit=3)
        monkeypatch.setattr(thesaurus, "alike", lambda *args, **kwargs: {})
        without = await ctx.documents.search("a checksum of a file", budget_tokens=100_000, limit=3)
        no_trend = await ctx.documents.search("a trend line through my data points", budget_tokens=100_000, limit=3)
    assert [hit.doc_id for hit in found.hits][:1] == ["library.hashlib"], [hit.doc_id for hit in found.hits]
    assert [hit.doc_id for hit in without.hits][:1] != ["library.hashlib"]
    assert [hit.doc_id for hit in trend.hits][:1] == ["library.statistics"], [hit.doc_id for hit in trend.hits]
    assert [hit.doc_id for hit in no_trend.hits][:1] != ["library.statistics"]
