"""The files a query's owner words name, looked up by name and kept in step with the catalog (docs/file_owners.py).

Over Go 1.19's ``strconv/atof.go`` (``tests/docs/fixtures/go_strconv_parsefloat.go.txt``, see NOTICE.txt) and
callers of it, as tests/docs/test_search_owners.py's package test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.docs import file_owners
from ctxtrio.docs.defined import file_names
from ctxtrio.docs.service import repository_of

from .conftest import opened
from .test_search_owners import FIXTURES

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    import pytest

    from ctxtrio._wiring import Wiring
    from ctxtrio.docs.catalog import DocEntry

CALLER = 'package main\n\nimport "strconv"\n\nfunc read(s string) (float64, error) {\n\treturn strconv.ParseFloat(s, 64)\n}\n'
DEFINED = "func ParseFloat(s string, bitSize int) (float64, error) {"
QUERY = "strconv parse float"


def _tree(root: Path, callers: int) -> Path:
    """``callers`` programs ``cmdN/main.go`` that call strconv.ParseFloat, and Go's ``strconv/atof.go``."""
    for n in range(callers):
        program = root / f"cmd{n}" / "main.go"
        program.parent.mkdir(parents=True)
        program.write_text(CALLER, encoding="utf-8")
    package = root / "strconv"
    package.mkdir()
    (package / "atof.go").write_text((FIXTURES / "go_strconv_parsefloat.go.txt").read_text(encoding="utf-8"))
    return package / "atof.go"


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The (title, source) of every document file_owners asks :func:`file_names` of (the real function answers)."""
    asked: list[tuple[str, str]] = []

    def counting(title: str, source: str) -> frozenset[str]:
        asked.append((title, source))
        return file_names(title, source)

    monkeypatch.setattr(file_owners, "file_names", counting)
    return asked


async def _first_defines(ctx: Wiring) -> bool:
    result = await ctx.documents.search(QUERY, budget_tokens=1000)
    return bool(result.hits) and DEFINED in result.hits[0].text


async def test_a_member_search_asks_only_the_documents_changed_since_for_their_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first member search reads every document's file names once; after an ingest, a forget and a
    re-ingest, each search reads those of the documents that changed (1, 0, 1), not all 21 again, and finds
    what the catalog holds then: ``func ParseFloat`` first, not once its file is forgotten, again once it is back.
    (Before, every search of a member asked every document, per owned member: 209 ms at 20,000 documents.)"""
    asked = _counted(monkeypatch)
    atof = _tree(tmp_path / "root", 20)
    async with opened(tmp_path, tmp_path / "root") as ctx:
        for n in range(20):
            await ctx.documents.ingest(file_path=str(tmp_path / "root" / f"cmd{n}" / "main.go"))
        await ctx.documents.ingest(file_path=str(atof), doc_id="atof")
        assert await _first_defines(ctx)
        assert len(asked) == 21
        asked.clear()
        assert await _first_defines(ctx)
        assert asked == []
        other = tmp_path / "root" / "cmd20" / "main.go"
        other.parent.mkdir()
        other.write_text(CALLER, encoding="utf-8")
        await ctx.documents.ingest(file_path=str(other))
        assert await _first_defines(ctx)
        assert [title for title, _ in asked] == ["main.go"]
        asked.clear()
        await ctx.documents.forget("atof")
        assert not await _first_defines(ctx)
        assert asked == []
        await ctx.documents.ingest(file_path=str(atof), doc_id="atof")
        assert await _first_defines(ctx)
        assert [title for title, _ in asked] == ["atof.go"]


def _asked_each(by_journal: Mapping[str, DocEntry], names: frozenset[str]) -> dict[str, DocEntry]:
    """What asking every document of ``by_journal`` for its file names gives (as the search did before)."""
    return {j: e for j, e in by_journal.items() if not file_names(e.info.title, e.info.source).isdisjoint(names)}


async def test_the_lookup_answers_as_asking_each_document_would(tmp_path: Path) -> None:
    """For the current documents, and again after a replace and a forget, the journals looked up by name are
    those asking each document gives; for the documents as they were before those (a search that began then),
    those of them still current: the replaced and the forgotten one's hits would be dropped."""
    atof = _tree(tmp_path / "root", 3)
    names = frozenset(("strconv", "cmd", "main"))
    async with opened(tmp_path, tmp_path / "root") as ctx:
        repo = repository_of(ctx.documents)
        for n in range(3):
            await ctx.documents.ingest(file_path=str(tmp_path / "root" / f"cmd{n}" / "main.go"), doc_id=f"cmd{n}")
        await ctx.documents.ingest(file_path=str(atof), doc_id="atof")
        before = repo.current_journals()
        assert await repo.files_named(names, before) == _asked_each(before, names)
        assert [e.doc_id for e in (await repo.files_named(frozenset(("strconv",)), before)).values()] == ["atof"]
        await ctx.documents.ingest(file_path=str(tmp_path / "root" / "cmd0" / "main.go"), doc_id="atof")  # replaced
        await ctx.documents.forget("cmd1")
        kept = {j: e for j, e in before.items() if e.doc_id in ("cmd0", "cmd2")}
        assert await repo.files_named(names, before) == _asked_each(kept, names)
        current = repo.current_journals()
        assert await repo.files_named(names, current) == _asked_each(current, names)
        assert await repo.files_named(frozenset(("strconv",)), current) == {}
        assert {e.doc_id for e in (await repo.files_named(names, current)).values()} == {"atof", "cmd0", "cmd2"}
