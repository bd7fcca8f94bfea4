"""doc_search hands the thesaurus's words of a word the documents seldom say to the re-ranking and
to the windows (a share of the word each stands for: tests/text/test_passages_alike.py), on real text:
shutil's rmtree entry (Python docs) among threading.rst and multiprocessing.rst."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxtrio.docs import searching
from ctxtrio.docs.packing import pack_hits
from ctxtrio.docs.search import rerank_fused

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pytest

    from ctxtrio.docs.packing import Candidate
    from ctxtrio.text.words import Alike

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHUTIL = Path(__file__).resolve().parents[1] / "text" / "fixtures" / "python_shutil_rmtree.rst.txt"


async def _alike_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str, **changes: object) -> list[Alike]:
    """The ``alike`` words the search of ``query`` handed the re-ranking and the packing, in that order."""
    seen: list[Alike] = []

    def reranking(
        candidates: Sequence[Candidate], query_terms: Sequence[str], alike: Alike = (), query: str = ""
    ) -> list[Candidate]:
        seen.append(alike)
        return rerank_fused(candidates, query_terms, alike, query)

    def packing(*args: object, **kwargs: object) -> object:
        seen.append(args[5] if len(args) > 5 else kwargs.get("alike", ()))  # type: ignore[arg-type]
        return pack_hits(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(searching, "rerank_fused", reranking)
    monkeypatch.setattr(searching, "pack_hits", packing)
    async with opened(tmp_path, None, **changes) as ctx:
        for path in (FIXTURES / "python_threading.rst.txt", FIXTURES / "python_multiprocessing.rst.txt", SHUTIL):
            await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), doc_id=path.name.split(".")[0])
        await ctx.documents.search(query, budget_tokens=300)
    return seen


async def test_the_thesaurus_words_of_a_word_the_documents_never_say_reach_the_passages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'folder' is in none of the files; the thesaurus's 'delete folder' gives rmtree, rmdir, remove, which
    the re-ranking and every packing of the answer receive as the words standing for 'folder'."""
    seen = await _alike_passed(tmp_path, monkeypatch, "delete a folder")
    assert len(seen) >= 2  # the re-ranking, then one packing or more
    for alike in seen:
        assert dict(alike).keys() == {"folder"}
        assert "rmtree" in dict(alike)["folder"]


async def test_without_query_expansion_there_are_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = await _alike_passed(tmp_path, monkeypatch, "delete a folder", query_expansion=False)
    assert seen and all(alike == () for alike in seen)
