"""doc_window without ``from``, call after call at one budget, shows every line of a document once, in order.

A window that ends in a chunk cut to fit its budget leaves the cursor inside that chunk, where the
cut left off (user23's sitting: at budget_tokens=400, 400 one-line paragraphs in 11 chunks showed
#0 up to Para 16, then #1 from Para 41: Paras 17-40 were never shown to a model paging through).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio.docs.catalog import CatalogState, cursor_record, drop_stale_cursors

from .conftest import PY_SOURCES, opened

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring
    from ctxtrio.store.records import Record

#: How far back a window that starts at a chunk's start may begin: the overlap with the chunk before,
#: which a new window shows again (as it always did); more would be text shown twice.
_OVERLAP_CHARS = 1_500


async def _chunk_starts(ctx: Wiring, doc_id: str, text: str, chunks: int) -> list[int]:
    """Where each chunk of ``doc_id`` starts in ``text`` (each read whole, found after the one before)."""
    starts: list[int] = []
    for index in range(chunks):
        whole = (await ctx.documents.read(doc_id, index, index, budget_tokens=4_000)).chunks[0]
        assert not whole.cut
        starts.append(text.index(whole.text, starts[-1] + 1 if starts else 0))
    return starts


async def _read_through(ctx: Wiring, doc_id: str, text: str, budget: int, starts: list[int]) -> int:
    """Page through ``doc_id`` at ``budget`` and check that what the windows show is ``text``, in order,
    each character once (a separator where a cut ended aside, and the overlap a window from a chunk's
    start shows again); returns the calls it took."""
    shown = 0  # characters of ``text`` shown so far
    here = 0  # where the last piece shown ends
    for calls in range(1, 2_000):
        window = await ctx.documents.window(doc_id, budget_tokens=budget)
        assert ctx.live.counter.model.estimate(window.rendered) <= budget, (budget, calls)
        for position, chunk in enumerate(window.chunks):
            at = starts[chunk.index] + chunk.offset
            assert text.startswith(chunk.text, at), (budget, calls, chunk.index, chunk.offset)
            if position == 0 and chunk.offset == 0:  # a window from a chunk's start: its overlap again
                assert shown - _OVERLAP_CHARS <= at <= shown + 1, ("skipped", budget, calls, text[shown:at][:200])
            else:  # reading on: from where the last piece ended, or past the break or space a cut ended at
                assert at == here or (at == here + 1 and text[here] in "\n "), (
                    "skipped",
                    budget,
                    calls,
                    text[here:at][:200],
                )
            if position == 0 and chunk.offset:
                assert chunk.lines is not None
                within = f", line {chunk.lines[0]} from character {chunk.column:,}" if chunk.column > 1 else ""
                assert f"[#{chunk.index} lines {chunk.lines[0]}-{chunk.lines[1]}{within}]" in window.rendered
                # The column (named in a long line) is the character of its line in the chunk's text, as the lines
                # are the chunk's.
                assert chunk.column == 1 or max(text.rfind("\n", 0, at), starts[chunk.index] - 1) == at - chunk.column
            here = at + len(chunk.text)
            shown = max(shown, here)
        if window.at_end:
            assert not text[shown:].strip(), (budget, text[shown:][:200])
            return calls
    raise AssertionError("never reached the end")


@pytest.mark.parametrize("budget", [200, 400, 2000])
async def test_reading_on_at_a_budget_shows_every_line_once(tmp_path: Path, budget: int) -> None:
    """library/json.rst.txt (29 kB) paged through at 200, 400 and 2,000 tokens a window (150 cannot hold its #16 from the start: its trail and the head take 151 tokens): the windows
    read as the page. Before, each cut chunk's rest was skipped (at 400: most of the page)."""
    page = PY_SOURCES / "library" / "json.rst.txt"
    if not page.is_file():
        pytest.skip("apt-get install python3.11-doc")
    text = page.read_text(encoding="utf-8")
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=text, title="json", doc_id="json")).doc
        starts = await _chunk_starts(ctx, "json", text, doc.chunks)
        calls = await _read_through(ctx, "json", text, budget, starts)
        assert calls >= (doc.chunks if budget < 1_000 else 2)  # a cut chunk takes several calls


async def test_from_and_reset_start_at_a_chunks_start(tmp_path: Path) -> None:
    """The cursor inside a cut chunk is for reading on; ``from`` and ``reset`` read a chunk from its start."""
    text = "\n\n".join(f"Para {n} about retries and backoff number {n}." for n in range(400))
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=text, title="t", doc_id="d")
        first = await ctx.documents.window("d", budget_tokens=400)
        assert first.next_index == 0 and first.next_offset > 0 and first.chunks[0].cut
        assert f"Next: #0 line {first.next_line} (call doc_window again)" in first.rendered
        last = int(first.chunks[0].text.split()[-1].rstrip("."))  # the last paragraph shown: Para 16 or so
        onward = await ctx.documents.window("d", budget_tokens=400)
        assert onward.chunks[0].text.startswith(f"Para {last + 1} ") and onward.chunks[0].lines is not None
        assert onward.rendered.split("\n")[2] == f"[#0 lines {first.next_line}-{onward.chunks[0].lines[1]}]"
        again = await ctx.documents.window("d", budget_tokens=400, start=0)
        assert again.chunks[0].offset == 0 and again.chunks[0].text.startswith("Para 0 ")
        assert (await ctx.documents.window("d", budget_tokens=400, reset=True)).chunks[0].text.startswith("Para 0 ")


def test_a_cursor_record_says_where_in_its_chunk_only_when_inside() -> None:
    """The catalog's cursor record gains ``at``, written only when not 0; a record without it (an older
    data dir) reads as a chunk's start, one of another generation as 0, and the compaction keeps it."""
    assert "at" not in cursor_record("d", "g1", "", 3).body
    state = CatalogState()
    commit: Record = {"kind": "commit", "doc": "d", "gen": "g1", "title": "t", "source": "inline"}
    commit |= {"chunks": 5, "chars": 10, "tokens": 5}
    state.apply(commit)
    state.apply({"kind": "cursor", "doc": "d", "gen": "g1", "session": "", "next": 2})
    assert state.position("d", "") == (2, 0)
    inside: Record = {"kind": "cursor", **cursor_record("d", "g1", "", 2, 140).body}
    state.apply(inside)
    assert state.position("d", "") == (2, 140)
    state.apply({**commit, "gen": "g2"})
    assert state.position("d", "") == (0, 0)
    kept = drop_stale_cursors([commit, {"kind": "cursor", "doc": "d", "gen": "g1", "session": "", "next": 2}, inside])
    assert kept is not None and kept[-1]["at"] == 140


async def test_pieces_of_one_long_line_say_where_in_the_line_they_start(tmp_path: Path) -> None:
    """Reading on inside a line of thousands of characters (raw HTML), each window's header and its Next say which
    character of the line: two pieces were both headed '[#0 lines 2-2]' and both said 'Next: #0 line 2' (user24's
    sitting, PostgreSQL's HTML), which a model could not tell apart. The pieces still read as the text, in order."""
    line = " ".join(f"<td>cell{n}</td>" for n in range(600))
    text = f"<html><body>\n{line}\n</body></html>\n"
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=text, title="raw html", doc_id="h")).doc
        starts = await _chunk_starts(ctx, "h", text, doc.chunks)
        assert await _read_through(ctx, "h", text, 400, starts) > doc.chunks
        heads: list[str] = []
        for call in range(6):
            window = await ctx.documents.window("h", budget_tokens=400, reset=call == 0)
            heads.append(window.rendered.split("\n")[0])
            heads.extend(window.rendered.split("\n")[2::2][:1])
            if window.next_offset:
                here = window.next_index
                at = starts[here] + window.next_offset
                assert f"Next: #{here} line {window.next_line} from character {window.next_column:,} " in heads[-2]
                assert max(text.rfind("\n", 0, at), starts[here] - 1) == at - window.next_column
        assert len(heads) == len(set(heads)), heads
