"""The current documents by journal are kept in step with the catalog one change at a time (docs/current.py).

Before, :meth:`Repository.current_journals` named every document's journal again after each catalog change,
on the event loop (29-120 ms at 20,000 documents, paid per search during a bulk ingest). Counted here by
the names made: each view after an ingest, a replace and a forget names only the documents changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.docs.repository import Repository
from ctxtrio.docs.service import repository_of

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio.docs.catalog import DocEntry


def _named(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The documents whose journal :meth:`Repository.journal` names (the real method answers)."""
    named: list[str] = []
    journal = Repository.journal

    def counting(self: Repository, entry: DocEntry) -> str:
        named.append(entry.doc_id)
        return journal(self, entry)

    monkeypatch.setattr(Repository, "journal", counting)
    return named


async def test_each_view_names_only_the_documents_changed_and_leaves_the_last_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After 20 documents, a view made after an ingest, a replace and a forget names the journals of the two
    documents that are new (the forgotten one needs none), not all 20 again; it equals a view built from every
    entry, with their chunks in all; the view taken before those changes still holds what it held."""
    named = _named(monkeypatch)
    async with opened(tmp_path) as ctx:
        for n in range(20):
            await ctx.documents.ingest(text=f"# Doc {n}\n\nwords of document {n}.\n", doc_id=f"d{n}")
        repo = repository_of(ctx.documents)
        before = repo.current_journals()
        kept = dict(before)
        await ctx.documents.ingest(text="# New\n\nA new document.\n\n# Two\n\nIn two chunks.\n", doc_id="new")
        await ctx.documents.ingest(text="# Doc 3 again\n\nOther words.\n", doc_id="d3")
        await ctx.documents.forget("d7")
        named.clear()
        after = repo.current_journals()
        assert sorted(named) == ["d3", "new"]
        assert before == kept  # (a snapshot a search or a pass started from)
        named.clear()
        every = {repo.journal(entry): entry for entry in repo.state.docs.values()}
        assert after == every and len(after) == 20
        assert repo.current_chunks() == sum(entry.info.chunks for entry in every.values())
        assert repo.current_journals() is after  # (nothing changed since: the same view)
