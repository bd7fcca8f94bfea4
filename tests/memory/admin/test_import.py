"""Import and prune as a backup people can trust: line ends, all-or-nothing, never over other data, checked values, true answers."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio._config import Config
from ctxtrio._errors import InputError
from ctxtrio.cli.transfer import FORMAT_VERSION, export_line, read_export
from ctxtrio.store.handle import StoreHandle
from ctxtrio.store.install import temporary_prefix
from ctxtrio.store.journal import JournalAppender
from ctxtrio.store.reading import read_journal
from ctxtrio.store.records import NewRecord
from ctxtrio.store.results import JournalExistsError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from ctxtrio._context import Context
    from ctxtrio.store.results import AppendResult

ODD = "a\u2028b\u2029c\x85d\re\x0bf"


def _config(path: Path) -> Config:
    return Config(data_dir=path, llm_enabled=False, audit=False)


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    async with ctxtrio.open_context(_config(tmp_path / "data")) as context:
        yield context


async def test_line_separators_in_entries_survive_an_export_file(ctx: Context, tmp_path: Path) -> None:
    """Entries holding U+2028, U+2029, U+0085 are exported one line each and read back equal."""
    await ctx.sessions.append("s", f"first {ODD}", pinned=True)
    await ctx.sessions.append("s", f"second {ODD}")
    records = await ctx.sessions.records("s")
    header = json.dumps({"ctxtrio_export": FORMAT_VERSION, "sessions": 1})
    text = "\n".join([header, *(export_line("s", r) for r in records)]) + "\n"
    assert "\u2028" not in text and "\u2029" not in text and "\x85" not in text
    assert read_export(text, "file") == {"s": records}
    async with ctxtrio.open_context(_config(tmp_path / "other")) as second:
        result = await second.sessions.import_session("s", read_export(text, "file")["s"])
        assert (result.outcome, result.ids) == ("imported", "preserved")
        assert await second.sessions.export("s") == await ctx.sessions.export("s")


async def test_import_never_lands_on_a_session_created_meanwhile(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process appends to the id between the import's check and its write: its entry stays, the import goes to -2 and says why."""
    await ctx.sessions.append("s", "exported entry")
    records = await ctx.sessions.records("s")
    real_install = StoreHandle.install
    async with (
        ctxtrio.open_context(_config(tmp_path / "other")) as target,
        ctxtrio.open_context(_config(tmp_path / "other")) as rival,
    ):
        raced: list[object] = []

        async def racing(self: StoreHandle, path: Path, batch: Sequence[NewRecord]) -> AppendResult:
            if not raced:
                raced.append(await rival.sessions.append("s", "the server's acknowledged note", pinned=True))
            return await real_install(self, path, batch)

        monkeypatch.setattr(StoreHandle, "install", racing)
        result = await target.sessions.import_session("s", records)
        assert (result.outcome, result.session_id, result.ids) == ("imported", "s-2", "remapped")
        assert result.skipped == ("s: holds other content, left as it was",)
        assert [e.text for e in await target.sessions.export("s")] == ["the server's acknowledged note"]
        assert [e.text for e in await rival.sessions.export("s")] == ["the server's acknowledged note"]
        assert [e.text for e in await target.sessions.export("s-2")] == ["exported entry"]


def test_install_refuses_a_journal_with_records_and_replaces_an_empty_one(tmp_path: Path) -> None:
    """install() writes nothing over a journal holding a line; an empty journal file is replaced whole."""
    appender = JournalAppender(lock_timeout_s=1)
    held = tmp_path / "held.jsonl"
    appender.append(held, [NewRecord("entry", {"text": "mine"}, id="e1")])
    before = held.read_bytes()
    with pytest.raises(JournalExistsError):
        appender.install(held, [NewRecord("entry", {"text": "theirs"}, id="e1")])
    assert held.read_bytes() == before
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = appender.install(empty, [NewRecord("entry", {"text": "imported"}, id="e1")])
    assert [r.data["text"] for r in read_journal(empty).records] == ["imported"] and result.end == empty.stat().st_size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl", "held.jsonl"]


def test_an_install_killed_before_its_link_leaves_no_journal_and_is_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the temporary file is written leaves no journal; a dead process's temporary file goes on the next install."""
    appender = JournalAppender(lock_timeout_s=1)
    path = tmp_path / "s.jsonl"
    records = [NewRecord("entry", {"text": f"entry {n}"}, id=f"e{n}") for n in range(1, 1001)]

    def crash(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "link", crash)
        with pytest.raises(ctxtrio.StoreError):
            appender.install(path, records)
    assert not path.exists()
    abandoned = tmp_path / f"{temporary_prefix(path)}999999999-dead"
    abandoned.write_bytes(b"half")
    appender.install(path, records)
    assert len(read_journal(path).records) == 1000
    assert not abandoned.exists()


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("ts", float("nan"), "timestamp nan"),
        ("ts", 1e308, "timestamp 1e+308"),
        ("ts", -5, "timestamp -5"),
        ("role", "wizard", "entry e2 has role 'wizard'"),
        ("id", "../x", "id '../x'"),
        ("pinned", "yes", "entry e2 has pinned = yes"),
        ("kind", "bogus", "kind 'bogus'"),
        ("text", "half \ud800 a pair", "entry e2 has text with an unpaired surrogate"),
        ("title", "\udfff", "session record e2 has a title with an unpaired surrogate"),
        ("tags", ["two words"], "entry e2: tag 'two words' is invalid"),
        ("tags", ["a\nb"], "entry e2: tag 'a\\nb' is invalid"),
        ("tags", ["<b>"], "entry e2: tag '<b>' is invalid"),
        ("tags", ["Auth"], "entry e2 has tags ['Auth'], which an append stores as ['auth']"),
        ("tags", ["#x", "y"], "entry e2 has tags ['#x', 'y'], which an append stores as ['x', 'y']"),
        ("tags", ["x", "x"], "entry e2 has tags ['x', 'x'], which an append stores as ['x']"),
        ("tags", [f"t{n}" for n in range(11)], "entry e2: 11 tags given: at most 10 are allowed"),
    ],
)
async def test_imported_values_are_checked_like_tool_input(ctx: Context, field: str, value: object, says: str) -> None:
    """A record an append could not have written is refused, naming the session and record; nothing is stored."""
    await ctx.sessions.append("s", "fine")
    await ctx.sessions.append("s", "fine too")
    records = await ctx.sessions.records("s")
    records[1] = {**records[1], field: value}  # type: ignore[dict-item]
    with pytest.raises(InputError, match=re.escape(f"session 't' record 2: {says}")):
        await ctx.sessions.import_session("t", records)
    assert not ctx.data.session_journal("t").exists()


async def test_the_first_append_after_another_process_pruned_a_longer_journal_is_answered(
    ctx: Context, tmp_path: Path
) -> None:
    """A server holding a session appends right after another process's prune shrank its journal: a true answer, no KeyError."""
    async with ctxtrio.open_context(_config(tmp_path / "data")) as server:
        for number in range(30):
            await server.sessions.append("s", f"a long note number {number} " * 8)
        await server.sessions.compact("s", keep_recent=1)
        await ctx.sessions.prune(0)
        appended = await server.sessions.append("s", "after the prune")
        assert appended.entry.text == "after the prune"
        assert [e.text for e in await ctx.sessions.export("s")][-1] == "after the prune"


@pytest.mark.parametrize("ts", ["NaN", "1e308", "-1e308", "Infinity"])
async def test_a_journal_with_an_odd_timestamp_does_not_break_listing(ctx: Context, ts: str) -> None:
    """A journal written before imports were checked, holding ts NaN or 1e308, leaves every session listable."""
    await ctx.sessions.append("good", "a normal entry")
    odd = ctx.data.session_journal("odd")
    lines = [
        json.dumps({"v": 1, "seq": 1, "ts": 1.0, "kind": "session", "id": "odd", "title": "odd"}),
        f'{{"v":1,"seq":2,"ts":{ts},"kind":"entry","id":"e2","text":"from an old import","role":"note","tags":[],"pinned":false}}',
    ]
    odd.write_text("\n".join(lines) + "\n")
    listed = await ctx.sessions.list_sessions()
    assert {info.session_id for info in listed} == {"good", "odd"}
    page = await ctx.sessions.page_sessions()
    assert "odd" in page.text and "good" in page.text
    assert [e.text for e in await ctx.sessions.export("odd")] == ["from an old import"]
