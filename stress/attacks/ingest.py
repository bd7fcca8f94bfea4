"""Ingest-path attacks on the real server (issues 12, 23): chunking processes, index schema, re-ingest, kills.

Every attack drives ``python -m ctxtrio`` over stdio with the SDK client, bounded to
60 s per server. Nothing leaves loopback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ctxtrio import Config, CtxError, open_context
from ctxtrio.docs.pool import POOL_ALONE_MIN_CHARS
from testkit.results import text_of

from . import Row
from . import stdio_server as _server

if TYPE_CHECKING:
    from mcp import Client

ROOT = Path(__file__).resolve().parents[2]
#: Long enough for the pool of chunking processes even when no other ingest is in flight
#: (more than POOL_ALONE_MIN_CHARS: ~50 characters a paragraph).
TEXT = "# Field notes\n\n" + "\n\n".join(
    f"Paragraph {n}: the numbat digs near burrow {n}." for n in range(POOL_ALONE_MIN_CHARS // 40)
)


def _workers(server_pid: int) -> list[int]:
    """Process ids of the server's chunking processes."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if int(rest.split()[1]) == server_pid:
            found.append(int(stat.parent.name))
    return found


def _server_pids(data: Path) -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"ctxtrio" in args and str(data).encode() in args:
            pids.append(int(cmdline.parent.name))
    return pids


async def worker_killed(work: Path) -> Row:
    """Kill every chunking process while the server is up: the next ingest still succeeds."""
    data = work / "killed"
    async with _server(data) as client:
        # The chunking processes start with the first ingest long enough for them (not on
        # any document call), so one such ingest comes first; then they sit idle.
        await client.call_tool("doc_ingest", {"text": TEXT, "doc_id": "first"})
        await trio.sleep(1.0)
        killed = 0
        for server in _server_pids(data):
            for pid in _workers(server):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        await trio.sleep(0.2)
        result = await client.call_tool("doc_ingest", {"text": TEXT, "doc_id": "n"})
        found = await client.call_tool("doc_search", {"query": "burrow 1234", "doc_id": "n", "limit": 3})
    held = killed > 0 and not result.is_error and "burrow 1234" in text_of(found)
    said = f"{killed} killed; ingest {'ok' if not result.is_error else text_of(result)[:120]}; search {'found' if held else text_of(found)[:80]}"
    return Row("chunking processes killed while idle", "replaced; the next ingest and search work", said, held)


async def old_index_schema(work: Path) -> Row:
    """An index of the schema before line offsets: emptied and re-indexed at start."""
    data = work / "schema"
    async with _server(data) as client:
        await client.call_tool("doc_ingest", {"text": TEXT, "doc_id": "n"})
    index = data / "index.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    old = sqlite3.connect(index)
    old.executescript(
        "CREATE TABLE journals (name TEXT PRIMARY KEY, indexed_offset INTEGER NOT NULL);"
        "CREATE VIRTUAL TABLE chunks USING fts5(terms, journal UNINDEXED, item UNINDEXED);"
    )
    old.close()
    async with _server(data) as client:
        found = await client.call_tool("doc_search", {"query": "numbat burrow 77", "limit": 3})
    held = not found.is_error and "burrow 77" in text_of(found)
    return Row(
        "index.sqlite3 of the older schema (no line offsets)",
        "re-indexed at start; search finds the chunk",
        "found" if held else text_of(found)[:120],
        held,
    )


async def reingest_same_file(work: Path) -> Row:
    """The same file ingested three times without doc_id: one document, later calls skipped."""
    data, root = work / "again" / "data", work / "again" / "root"
    root.mkdir(parents=True)
    (root / "notes.md").write_text(TEXT, encoding="utf-8")
    async with _server(data, "--ingest-root", str(root)) as client:
        said = [text_of(await client.call_tool("doc_ingest", {"file_path": "notes.md"})) for _ in range(3)]
        listed = await client.call_tool("doc_list", {})
    count = sum("notes.md" in line for line in text_of(listed).splitlines())
    held = count == 1 and all(line.startswith("Unchanged") for line in said[1:])
    return Row(
        "the same file re-ingested 3 times without doc_id",
        "one document; the repeats say Unchanged",
        f"{count} listed; {said[-1][:60]}",
        held,
    )


#: What a terminal or a bidi renderer obeys: clear screen, window title (OSC ... BEL), C1 CSI, DEL, RLO, an isolate.
NASTY = "\x1b[2J\x1b]0;owned\x07\x9b2J\x7f\u202eevil\u2066"


async def hostile_names(work: Path) -> Row:
    """Titles and paths holding terminal and bidi controls: every answer and resource shows them escaped."""
    data, root = work / "names" / "data", work / "names" / "root"
    root.mkdir(parents=True)
    (root / f"file{NASTY}\nline.md").write_text("Numbats dig burrows.\n", encoding="utf-8")
    (root / f"dir{NASTY}").mkdir()
    (root / "link.md").symlink_to(root / f"dir{NASTY}")
    async with _server(data, "--ingest-root", str(root)) as client:
        said = [
            text_of(await client.call_tool(name, arguments))
            for name, arguments in (
                ("doc_ingest", {"file_path": f"file{NASTY}\nline.md", "doc_id": "f"}),
                ("doc_ingest", {"text": "Numbats again.", "title": f"T{NASTY}", "doc_id": "t"}),
                ("doc_ingest", {"file_path": "link.md"}),  # refused, naming the link's target
                ("context_open", {"session_id": "s", "title": f"S{NASTY}"}),
                ("doc_list", {}),
                ("doc_search", {"query": "numbats"}),
                ("context_list_sessions", {}),
            )
        ]
        listed = (await client.list_resources()).resources
        said += [f"{resource.title} {resource.description}" for resource in listed]
        for uri in ("ctxtrio://docs/f", "ctxtrio://docs/t", "ctxtrio://sessions/s"):
            said += [getattr(content, "text", "") for content in (await client.read_resource(uri)).contents]
    raw = sum(any(control in text for control in NASTY if control < " " or "\x7f" <= control <= "\x9f") or
              any(control in text for control in "\u202e\u2066") for text in said)  # fmt: skip
    return Row(
        "titles, a file name and a symlink target holding ESC, OSC, C1, DEL, U+202E, U+2066",
        "every tool answer, resource and refusal shows them as escapes",
        f"{raw} of {len(said)} answers hold raw controls",
        raw == 0 and len(said) == 14,
    )


def _versions(paragraphs: int) -> tuple[str, str]:
    """Two versions of one document, every paragraph of each naming its version."""
    return tuple(  # type: ignore[return-value]
        "# Field notes\n\n" + "\n\n".join(f"Paragraph {n}: the {word} digs near burrow {n}." for n in range(paragraphs))
        for word in ("numbat", "quokka")
    )


async def _kill_during_ingest(data: Path, text: str, delay_s: float) -> None:
    """Ingest ``text`` as ``k`` and SIGKILL the server ``delay_s`` after the call went out."""

    async def call(client: Client) -> None:
        with contextlib.suppress(Exception):  # the server dies under it
            await client.call_tool("doc_ingest", {"text": text, "doc_id": "k"})

    with contextlib.suppress(Exception), trio.move_on_after(20):
        async with _server(data) as client, trio.open_nursery() as nursery:
            await client.call_tool("doc_ingest", {"text": "warm", "doc_id": "warm"})  # imports done
            nursery.start_soon(call, client)
            await trio.sleep(delay_s)
            for server in _server_pids(data):
                os.kill(server, signal.SIGKILL)


async def _version_of(data: Path, versions: tuple[str, str]) -> int | str:
    """Which of ``versions`` ``k`` holds after a restart (every chunk, in order), or what is wrong."""
    config = Config(data_dir=data, llm_enabled=False, audit=False)
    try:
        async with open_context(config) as context:
            window = await context.documents.window("k", budget_tokens=100_000, reset=True)
    except CtxError as exc:
        return f"unreadable: {exc}"[:80]
    text = "".join(chunk.text for chunk in window.chunks)
    return versions.index(text) if text in versions else f"a mix ({len(text)} characters)"


async def killed_mid_reingest(work: Path) -> list[Row]:
    """SIGKILL the server at several moments of a re-ingest: after a restart the document is the old
    version or the new one, whole, never neither (one batch on the event loop, one in a thread, several)."""
    rows = []
    for name, paragraphs in (("small", 20), ("one batch", 600), ("several batches", 3000)):
        data = work / f"kill-{paragraphs}"
        versions = _versions(paragraphs)
        async with _server(data) as client:
            await client.call_tool("doc_ingest", {"text": versions[0], "doc_id": "k"})
        current: int | str = 0
        seen: list[str] = []
        for delay_s in (0.0, 0.01, 0.05, 0.2, 1.0, 3.0):
            assert isinstance(current, int)
            await _kill_during_ingest(data, versions[1 - current], delay_s)
            found = await _version_of(data, versions)
            seen.append("old" if found == current else "new" if isinstance(found, int) else str(found))
            if not isinstance(found, int):
                break
            current = found
        held = all(found in ("old", "new") for found in seen)
        rows.append(
            Row(
                f"server SIGKILLed during a re-ingest ({name}), 6 moments",
                "after a restart: the old or the new version, whole",
                ", ".join(seen),
                held,
            )
        )
    return rows


async def _main(work: Path) -> list[Row]:
    return [
        await worker_killed(work),
        await old_index_schema(work),
        await reingest_same_file(work),
        await hostile_names(work),
        *await killed_mid_reingest(work),
    ]


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
