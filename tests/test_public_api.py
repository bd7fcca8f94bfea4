"""The library face, as a user imports it: names, types (checked by mypy), behaviour."""

from __future__ import annotations

from pathlib import Path

from typing_extensions import assert_type

import ctxtrio


async def test_library_round_trip(tmp_path: Path) -> None:
    """The README's library example runs and its results have the advertised types."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        assert_type(ctx, ctxtrio.Context)
        appended = await ctx.sessions.append("refactor-auth", "Decision: keep cookies behind a flag", pinned=True)
        assert_type(appended, ctxtrio.Appended)
        assert_type(appended.entry, ctxtrio.Entry)
        recalled = await ctx.sessions.recall("refactor-auth", "cookie flag decision", budget_tokens=800)
        assert_type(recalled, ctxtrio.RecallResult)
        assert "keep cookies" in recalled.text
        status = await ctx.sessions.status("refactor-auth")
        assert_type(status, ctxtrio.SessionStatus)
        sessions = await ctx.sessions.list_sessions()
        assert_type(sessions, list[ctxtrio.SessionInfo])

        log_text = "\n".join(f"line {n}: ok" for n in range(2000)) + "\nFATAL OutOfMemoryError in worker 7\n"
        ingested = await ctx.documents.ingest(text=log_text, title="build log")
        assert_type(ingested, ctxtrio.IngestResult)
        assert_type(ingested.doc, ctxtrio.DocumentInfo)
        found = await ctx.documents.search("OutOfMemoryError", doc_id=ingested.doc.doc_id)
        assert_type(found, ctxtrio.SearchResult)
        assert found.hits and "OutOfMemoryError" in found.hits[0].text
        assert_type(found.hits[0], ctxtrio.SearchHit)
        window = await ctx.documents.window(ingested.doc.doc_id, start=0, end=0)
        assert_type(window, ctxtrio.Window)
        summary = await ctx.documents.summarize(ingested.doc.doc_id, target_tokens=100)
        assert_type(summary, ctxtrio.DocSummary)
        outline = await ctx.documents.outline(ingested.doc.doc_id)
        assert_type(outline, ctxtrio.Outline)
        docs = await ctx.documents.list_documents()
        assert_type(docs, list[ctxtrio.DocumentInfo])


def test_every_exported_name_resolves() -> None:
    """Each name in ctxtrio.__all__ is importable from the package."""
    for name in ctxtrio.__all__:
        assert getattr(ctxtrio, name) is not None, name


def test_errors_share_one_root() -> None:
    """Every error class derives from CtxError."""
    for name in ctxtrio.__all__:
        value = getattr(ctxtrio, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, ctxtrio.CtxError), name
