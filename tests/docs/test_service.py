"""DocumentService: ingest, search, outline, window cursors and forget, through the library face."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest
import trio

import ctxtrio
from ctxtrio._errors import IngestError, InputError, InvalidIdError, NotFoundError
from ctxtrio._wiring import open_wiring
from ctxtrio.docs import ingest as ingest_module
from ctxtrio.docs import service as service_module
from ctxtrio.docs.packing import CUT_MARK, contiguous_text
from ctxtrio.docs.render import render_outline
from ctxtrio.text.chunking import chunk_document

from .conftest import fixture_text, opened

if TYPE_CHECKING:
    from pathlib import Path


async def test_file_ingest_matches_the_chunker(tmp_path: Path, root: Path) -> None:
    """A file is chunked as the chunker says, titled by its name, and listed with its sizes."""
    async with opened(tmp_path, root) as ctx:
        result = await ctx.documents.ingest(file_path="manual.md")
        text = fixture_text("manual.md")
        expected = chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=ctx.live.tokens.current)
        assert result.doc.title == "manual.md" and not result.replaced
        assert result.doc.chunks == len(expected) and result.doc.chars == len(text)
        assert result.doc.source == str((root / "manual.md").resolve())
        assert [info.doc_id for info in await ctx.documents.list_documents()] == [result.doc.doc_id]


async def test_file_ingest_off_without_roots(tmp_path: Path) -> None:
    """Without ingest roots, file_path is refused and inline text still works."""
    async with opened(tmp_path) as ctx:
        with pytest.raises(IngestError, match="no --ingest-root"):
            await ctx.documents.ingest(file_path="/etc/hostname")
        assert (await ctx.documents.ingest(text="inline only", doc_id="x")).doc.chunks == 1


async def test_argument_errors(tmp_path: Path) -> None:
    """Both or neither source, bad and reserved ids, and unknown documents are clear errors."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        with pytest.raises(InputError, match="exactly one"):
            await docs.ingest()
        with pytest.raises(InputError, match="exactly one"):
            await docs.ingest(text="a", file_path="b")
        with pytest.raises(InvalidIdError):
            await docs.ingest(text="a", doc_id="../x")
        with pytest.raises(InvalidIdError, match="reserved"):
            await docs.ingest(text="a", doc_id="catalog.jsonl")
        with pytest.raises(NotFoundError, match="no document 'nope'") as missing:
            await docs.window("nope")
        assert missing.value.hint == "list_documents"
        with pytest.raises(InputError, match="budget_tokens must be between 50 and 100000"):
            await docs.search("x", budget_tokens=10)
        with pytest.raises(InputError, match="no searchable words"):
            await docs.search("the of and ...")
        for empty in ("", " \n "):  # nothing typed is not "only punctuation or common stopwords"
            with pytest.raises(InputError) as caught:
                await docs.search(empty)
            assert str(caught.value) == "query is empty: give the distinctive words to look for", caught.value


async def test_inline_title_comes_from_first_line(tmp_path: Path) -> None:
    """Inline text without a title is named by its first line, heading marks dropped."""
    async with opened(tmp_path) as ctx:
        result = await ctx.documents.ingest(text="\n\n## Deploy   notes\n\nbody text")
        assert result.doc.title == "Deploy notes" and result.doc.source == "inline"
        assert result.doc.doc_id.startswith("doc-")


@pytest.mark.parametrize(
    ("fixture", "query", "phrase"),
    [
        ("korean.txt", "데이터베이스 이전", "데이터베이스"),
        ("chinese.txt", "连接失败", "连接失败"),
        ("app.log", "TimeoutError", "TimeoutError"),
        ("sample.py.txt", "retry policy", "retry"),
    ],
)
async def test_search_across_scripts(tmp_path: Path, root: Path, fixture: str, query: str, phrase: str) -> None:
    """Korean, Chinese, log and source documents are found by words in their own script."""
    async with opened(tmp_path, root) as ctx:
        text = fixture_text(fixture)
        if phrase not in text:
            pytest.skip(f"{fixture} does not contain {phrase!r}")
        doc = await ctx.documents.ingest(file_path=fixture, doc_id="d")
        await ctx.documents.ingest(file_path="manual.md", doc_id="other")
        result = await ctx.documents.search(query, doc_id="d")
        assert result.hits and all(hit.doc_id == "d" for hit in result.hits)
        assert phrase in result.hits[0].text and result.hits[0].title == doc.doc.title
        everywhere = await ctx.documents.search(query)
        assert everywhere.hits[0].doc_id == "d"


async def test_search_packs_into_budget_and_counts_the_rest(tmp_path: Path, root: Path) -> None:
    """Hits are verbatim chunks (or passages of them) within the budget; those that did not fit are counted."""
    async with opened(tmp_path, root) as ctx:
        await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        wide = await ctx.documents.search("token budget chunks", budget_tokens=100_000, limit=10)
        narrow = await ctx.documents.search("token budget chunks", budget_tokens=600, limit=10)
        assert len(wide.hits) == 10 and wide.omitted == 0 and wide.more
        assert 1 <= len(narrow.hits) < 10 and narrow.used_tokens <= 600
        assert len(narrow.hits) + narrow.omitted == 10
        text = fixture_text("manual.md")
        assert all(hit.text in text and not hit.cut for hit in wide.hits)
        assert len({hit.index for hit in wide.hits}) == 10  # re-ranked by passage: each chunk once, in any order
        pieces = [piece.strip() for hit in narrow.hits for piece in hit.text.split(CUT_MARK)]  # verbatim between marks
        assert all(piece in text for piece in pieces)


async def test_window_reads_the_whole_document_in_order(tmp_path: Path, root: Path) -> None:
    """Reading with a large budget returns the source exactly once, overlap skipped."""
    async with opened(tmp_path, root) as ctx:
        info = (await ctx.documents.ingest(file_path="manual.md", doc_id="m")).doc
        window = await ctx.documents.window("m", budget_tokens=100_000)
        assert len(window.chunks) == info.chunks and window.at_end
        assert "".join(chunk.text for chunk in window.chunks) == fixture_text("manual.md")


async def test_window_cursor_advances_per_session(tmp_path: Path, root: Path) -> None:
    """Each session has its own cursor; the default cursor is separate; reset starts over."""
    async with opened(tmp_path, root) as ctx:
        docs = ctx.documents
        await docs.ingest(file_path="manual.md", doc_id="m")
        await ctx.sessions.open("a")
        await ctx.sessions.open("b")
        first = await docs.window("m", budget_tokens=1000, session_id="a")
        second = await docs.window("m", budget_tokens=1000, session_id="a")
        other = await docs.window("m", budget_tokens=1000, session_id="b")
        default = await docs.window("m", budget_tokens=1000)
        assert second.chunks[0].index == first.next_index
        assert other.chunks[0].index == 0 and default.chunks[0].index == 0
        again = await docs.window("m", budget_tokens=1000, session_id="a", reset=True)
        assert again.chunks[0].index == 0


async def test_window_bounds_and_errors(tmp_path: Path, root: Path) -> None:
    """start/end select chunks; end < start and end before the cursor are errors; past the end says so."""
    async with opened(tmp_path, root) as ctx:
        docs = ctx.documents
        info = (await docs.ingest(file_path="manual.md", doc_id="m")).doc
        window = await docs.window("m", start=2, end=3, budget_tokens=100_000)
        assert [chunk.index for chunk in window.chunks] == [2, 3] and window.next_index == 4
        with pytest.raises(InputError, match="end=1 is before start=3"):
            await docs.window("m", start=3, end=1)
        with pytest.raises(InputError, match="before the cursor"):
            await docs.window("m", end=1)
        past = await docs.window("m", start=info.chunks + 5)
        assert past.chunks == () and past.at_end
        last = info.chunks - 1
        assert past.rendered == (  # the from given is past the end, not the cursor (still at #4)
            f'm "manual.md" has {info.chunks} chunks (#0-{last}): from={info.chunks + 5} is past the end. '
            f"Pass from=0 to {last}, or leave from out to read on from the cursor."
        ), past.rendered
        before = await docs.window("m")
        assert before.chunks[0].index == 4
        with pytest.raises(InputError, match=r"^budget_tokens=50 cannot hold chunk #0 of m: .* Pass budget_tokens=\d+"):
            await docs.window("m", start=0, budget_tokens=50)  # not even its head: said, and the cursor stays
        assert (await docs.window("m")).chunks[0].index == before.next_index
        small = await docs.window("m", start=0, budget_tokens=200)
        assert (
            len(small.chunks) == 1 and small.cut and small.next_index == 0 and small.next_offset > 0
        )  # reads on inside #0


async def test_cursors_and_documents_survive_restart(tmp_path: Path, root: Path) -> None:
    """After a restart the catalog, chunks, index and per-session cursors are all there."""
    async with opened(tmp_path, root) as ctx:
        await ctx.documents.ingest(file_path="korean.txt", doc_id="k")
        await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        await ctx.sessions.open("s")
        moved = await ctx.documents.window("m", budget_tokens=900, session_id="s")
    async with opened(tmp_path, root) as ctx:
        assert {info.doc_id for info in await ctx.documents.list_documents()} == {"k", "m"}
        resumed = await ctx.documents.window("m", budget_tokens=900, session_id="s")
        assert resumed.chunks[0].index == moved.next_index
        assert (await ctx.documents.search("데이터베이스")).hits[0].doc_id == "k"


async def test_outline_lists_chunks_and_pages(tmp_path: Path, root: Path) -> None:
    """The outline gives every chunk's trail and tokens, pages with from, and summarizes on request."""
    async with opened(tmp_path, root) as ctx:
        info = (await ctx.documents.ingest(file_path="manual.md", doc_id="m")).doc
        outline = await ctx.documents.outline("m", max_chunks=5)
        assert [entry.index for entry in outline.entries] == [0, 1, 2, 3, 4]
        assert outline.remaining == info.chunks - 5
        assert sum(entry.tokens for entry in (await ctx.documents.outline("m", max_chunks=500)).entries) == info.tokens
        page = await ctx.documents.outline("m", start=5, max_chunks=2, summarize=True)
        assert [entry.index for entry in page.entries] == [5, 6]
        assert all(entry.summary for entry in page.entries) and "extractive" in page.note
        with pytest.raises(InputError, match="past the last chunk"):
            await ctx.documents.outline("m", start=info.chunks)


async def test_outline_fits_the_default_budget(tmp_path: Path, root: Path) -> None:
    """With a small default budget the outline (summaries included) fits it and says where to continue."""
    async with opened(tmp_path, root) as ctx:
        await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        ctx.live.budget_tokens = 160
        outline = await ctx.documents.outline("m", max_chunks=200, summarize=True)
        assert outline.remaining > 0 and outline.entries
        assert ctx.live.tokens.current.estimate(render_outline(outline)) <= 160


async def test_forget_removes_everything(tmp_path: Path, root: Path) -> None:
    """forget removes the generation file, its index rows and its cursors, durably."""
    async with opened(tmp_path, root) as ctx:
        await ctx.documents.ingest(file_path="chinese.txt", doc_id="c")
        await ctx.sessions.open("s")
        await ctx.documents.window("c", budget_tokens=300, session_id="s")
        files = list((ctx.data.docs / "c").glob("*.jsonl"))
        assert len(files) == 1
        await ctx.documents.forget("c")
        assert not files[0].exists()
        assert (await ctx.documents.search("连接失败")).hits == ()
        rows = await ctx.store.search("chunks", ["连接"], journals=None, limit=5)
        assert rows == []
        with pytest.raises(NotFoundError):
            await ctx.documents.forget("c")
        await ctx.documents.ingest(file_path="chinese.txt", doc_id="c")
        assert (await ctx.documents.window("c", budget_tokens=300, session_id="s")).chunks[0].index == 0
    async with opened(tmp_path, root) as ctx:
        assert [info.doc_id for info in await ctx.documents.list_documents()] == ["c"]


async def test_contiguous_text_of_stored_chunks(tmp_path: Path, root: Path) -> None:
    """The chunks as stored rebuild every fixture exactly (what summaries and windows rely on)."""
    async with opened(tmp_path, root) as ctx:
        for name in ("app.log", "korean.txt", "sample.py.txt"):
            await ctx.documents.ingest(file_path=name, doc_id="x")
            _, doc = await ctx.documents._repo.load("x")
            assert contiguous_text(doc.chunks) == fixture_text(name)


@dataclass
class _Writes:
    """How many generation writes run at once, and the most that ever did."""

    running: int = 0
    peak: int = 0


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> _Writes:
    """Wrap the service's write_generation so each write is counted while it runs (10 ms longer than it would)."""
    real = ingest_module.write_generation
    writes = _Writes()

    async def counting(*args: Any, **kwargs: Any) -> Any:
        writes.running += 1
        writes.peak = max(writes.peak, writes.running)
        try:
            await trio.sleep(0.01)
            return await real(*args, **kwargs)
        finally:
            writes.running -= 1

    monkeypatch.setattr(service_module, "write_generation", counting)
    return writes


async def test_concurrent_ingests_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many ingests arrive at once, at most ingest_slots are past reading at a time."""
    writes = _count_writes(monkeypatch)
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        async with trio.open_nursery() as nursery:
            for number in range(20):
                nursery.start_soon(partial(ctx.documents.ingest, text=f"document {number} body", doc_id=f"d{number}"))
        assert len(await ctx.documents.list_documents()) == 20
    assert writes.peak == 16


async def test_ingests_in_flight_are_bounded_by_characters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingests past reading hold their length against ingest_chars: large texts wait for each other."""
    writes = _count_writes(monkeypatch)
    async with open_wiring(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        for size, expected in ((60, 1), (40, 2)):
            docs = service_module.DocumentService(ctx.store, ctx.live, ctx.config, ingest_chars=100)
            writes.peak = 0
            async with trio.open_nursery() as nursery:
                for number in range(6):
                    text = f"{number}" + "x" * (size - 1)
                    nursery.start_soon(partial(docs.ingest, text=text, doc_id=f"s{size}-{number}"))
            assert writes.peak == expected


async def test_concurrent_ingests_of_one_doc_id_say_what_their_commits_did(tmp_path: Path) -> None:
    """Of concurrent ingests of a new doc_id the first committed says ingested and the others replaced."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        results: list[ctxtrio.IngestResult] = []

        async def ingest(number: int) -> None:
            results.append(await ctx.documents.ingest(text=f"version {number} of one document", doc_id="d"))

        async with trio.open_nursery() as nursery:
            for number in range(8):
                nursery.start_soon(ingest, number)
        assert sorted(result.replaced for result in results) == [False] + [True] * 7
        again = await ctx.documents.ingest(text="one more version", doc_id="d")
        assert again.replaced


async def test_unstorable_text_or_title_is_an_input_error_that_logs_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Inline text or a title holding an unpaired surrogate: an InputError naming it, nothing stored or logged."""
    caplog.set_level(logging.INFO, logger="ctxtrio")
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        with pytest.raises(InputError, match="^text holds an unpaired surrogate"):
            await ctx.documents.ingest(text="a cut emoji \ud83d here", doc_id="d")
        with pytest.raises(InputError, match="^title holds an unpaired surrogate"):
            await ctx.documents.ingest(text="fine text", title="cut \udc00", doc_id="d")
        assert await ctx.documents.list_documents() == []
    assert list((tmp_path / "docs").glob("*/*.jsonl")) == []
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_window_of_a_session_that_does_not_exist_writes_nothing(tmp_path: Path, root: Path) -> None:
    """A session_id that names no session, or a deleted one, is refused before any cursor is written."""
    async with opened(tmp_path, root) as ctx:
        await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        catalog = ctx.data.docs / "catalog.jsonl"
        size = catalog.stat().st_size
        with pytest.raises(NotFoundError, match="^no session 'made-up': a document's cursor belongs to a session"):
            await ctx.documents.window("m", budget_tokens=500, session_id="made-up")
        await ctx.sessions.open("gone")
        await ctx.sessions.delete_session("gone")
        with pytest.raises(NotFoundError, match="^session 'gone' was deleted"):
            await ctx.documents.window("m", budget_tokens=500, session_id="gone")
        assert catalog.stat().st_size == size
        assert not ctx.data.session_journal("made-up").exists()
        await ctx.sessions.open("real")
        first = await ctx.documents.window("m", budget_tokens=500, session_id="real")
        assert (await ctx.documents.window("m", budget_tokens=500, session_id="real")).chunks[
            0
        ].index == first.next_index
