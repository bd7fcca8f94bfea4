"""The current documents by journal are kept in step with the catalog one change at a time (docs/current.py).

Before, :meth:`Repository.current_journals` named every document's journal again after each catalog change,
on the event loop (29-120 ms at 20,000 documents, paid per search during a bulk ingest). Counted here by
the names made: each view after an ingest, a replace and a forget names only the documents changed.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from ctxtrio.docs import current
from ctxtrio.docs.catalog import CatalogState
from ctxtrio.docs.current import CurrentJournals
from ctxtrio.docs.repository import Repository
from ctxtrio.docs.service import repository_of

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ctxtrio.docs.catalog import DocEntry
    from ctxtrio.store.records import Record


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


def _commit(doc: str, gen: str, chunks: int) -> Record:
    """A commit record as the catalog holds one (the fields ``catalog._entry`` reads)."""
    return {
        "kind": "commit", "doc": doc, "gen": gen, "title": doc, "source": "inline", "chunks": chunks, "chars": 9, "tokens": 3
    }  # fmt: skip


@pytest.mark.parametrize("patched", [1000, 3])
def test_every_view_equals_one_built_from_every_entry(patched: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through 400 random commits (new and again) and forgets, a view asked after one change or several, and now and then a
    state replayed afresh (a rewritten catalog: ``Repository._replay``), equals the view built from every entry,
    its chunks their sum; each view handed out still holds what it held. ``patched`` 3: more changes than that
    behind build from every entry (``current._PATCHED``)."""
    monkeypatch.setattr(current, "_PATCHED", patched)
    rng = random.Random(28)
    views = CurrentJournals(lambda entry: f"docs/{entry.doc_id}/{entry.gen}.jsonl")
    records: list[Record] = []
    state = CatalogState()
    handed: list[tuple[Mapping[str, DocEntry], dict[str, DocEntry]]] = []
    for step in range(400):
        doc = f"d{rng.randrange(30)}"
        forget: Record = {"kind": "forget", "doc": doc}
        record = forget if rng.random() < 0.2 else _commit(doc, f"g{step}", rng.randrange(1, 9))
        records.append(record)
        state.apply(record)
        if rng.random() < 0.03:  # replayed afresh, as a rewritten catalog is
            state = CatalogState(version=state.version + 1)
            for again in records:
                state.apply(again)
        if rng.random() < 0.4:
            continue  # (several changes between two views)
        view = views.view(state)
        every = {f"docs/{entry.doc_id}/{entry.gen}.jsonl": entry for entry in state.docs.values()}
        assert view == every, step
        assert views.chunks(state) == sum(entry.info.chunks for entry in every.values()), step
        handed.append((view, dict(view)))
    assert all(view == kept for view, kept in handed)
    assert len(handed) > 200 and min(map(len, (view for view, _ in handed[20:]))) > 10  # (views of many documents)
