"""The doors added last: export/import, prune, side files, odd bytes, full disks, clients that stop reading.

One row per numbered finding of issue 27 (finding 8's glob loop and finding 4's CLI
half have their rows with the ingest area; finding 10's last parts are in ``corners.py``):

1. an export holding U+2028/U+2029/U+0085, pins, compactions and deletes round-trips;
2. an import racing a server appending to the same id keeps every acknowledged append;
3. ``kill -9`` mid-import leaves no half session, and the rerun stores one copy;
4. ``doc_ingest`` of a non-UTF-8 path through a symlink is refused; the server serves on;
5. a snapshot cut short under a server, a summary symlinked to /dev/zero: no crash, no growth;
6. a full disk: sessions, show, export, doctor and a server's reads work; appends take the
   search index's room first, then are refused clearly, and search is back once there is room;
7. the first append after another process's prune is answered; 1e308 timestamps list;
8. stdio answers left unread and idle HTTP sessions: memory bounded;
9. a trickled body gets 408 soon; doctor warns about lost-and-found.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import trio

STRESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(STRESS))

from import_safety import ENV, ODD, kill_rounds, race_rounds  # noqa: E402
from unread_memory import http_idle, stdio_unread  # noqa: E402

from attacks import ROOT, Row, guarded, stdio_server  # noqa: E402
from ctxtrio._app import open_context  # noqa: E402
from ctxtrio._config import Config  # noqa: E402
from ctxtrio.memory.sessions.summary import summary_path  # noqa: E402
from testkit.results import text_of  # noqa: E402


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxtrio", *args, "--data-dir", str(data), "--no-llm"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _config(data: Path) -> Config:
    return Config(data_dir=data, llm_enabled=False, audit=False)


async def _round_trip(work: Path) -> Row:
    data, other, dump = work / "rt-data", work / "rt-other", work / "rt.export"
    async with open_context(_config(data)) as ctx:
        await ctx.sessions.append("odd", f"Goal {ODD} keep cookies", pinned=True, role="decision")
        for n in range(8):
            await ctx.sessions.append("odd", f"finding {n} {ODD} about tokens", tags=["x"])
        await ctx.sessions.compact("odd", keep_recent=2)
        await ctx.sessions.update("odd", "e10", delete=True)
    exported = _cli(data, "export", "odd", "-o", str(dump))
    imported = _cli(other, "import", str(dump))
    before, after = _cli(data, "show", "odd", "--json"), _cli(other, "show", "odd", "--json")
    same = before.returncode == 0 and before.stdout == after.stdout
    return Row(
        "1 export/import of a session with U+2028/U+2029/U+0085, a pin, a compaction, a delete",
        "imported whole; ctxtrio show --json identical",
        f"export {exported.returncode}, import {imported.returncode}: {imported.stdout.strip()[:70]}; "
        f"show --json {'identical' if same else 'DIFFERENT'}",
        exported.returncode == imported.returncode == 0 and same,
    )


async def _race(work: Path) -> Row:
    held, line = await race_rounds(work / "race", 5)
    return Row(
        "2 import racing a server appending to the same session id (5 rounds)",
        "every acknowledged append kept; the import's report true",
        line,
        held,
    )


async def _kill(work: Path) -> Row:
    held, line = await trio.to_thread.run_sync(kill_rounds, work / "kill", 5000, 3)
    return Row(
        "3 kill -9 at 3 random points of an import, then import again", "no half session; exactly one copy", line, held
    )


async def _odd_path(work: Path) -> Row:
    root = work / "root4"
    root.mkdir()
    bad = os.path.join(os.fsencode(root), b"bad\xff.md")
    with open(bad, "wb") as handle:
        handle.write(b"# Title\n\ntext\n")
    os.symlink(bad, os.fsencode(root / "link.md"))
    async with stdio_server(work / "odd-data", "--ingest-root", str(root)) as client:
        refused = await client.call_tool("doc_ingest", {"file_path": str(root / "link.md")})
        after = await client.call_tool("context_append", {"session_id": "s", "text": "still serving"})
    text = text_of(refused)
    held = refused.is_error and "not UTF-8" in text and "\\xff" in text and not after.is_error
    return Row(
        "4 doc_ingest of a path with byte 0xff, through an in-root symlink (stdio server)",
        "a clear refusal naming the path escaped; the server serves on",
        f"{text[:90]}; next call ok: {not after.is_error}",
        held,
    )


async def _side_files(work: Path) -> Row:
    data = work / "side-data"
    async with open_context(_config(data)) as ctx:
        for n in range(1500):
            await ctx.sessions.append("big", f"entry {n}: a note long enough to grow the journal past a snapshot " * 2)
    journal = data / "sessions" / "big.jsonl"
    async with stdio_server(data) as client:
        first = text_of(await client.call_tool("context_recall", {"session_id": "big", "query": "entry 77"}))
        snapshot = journal.with_name("big.snapshot")
        size = snapshot.stat().st_size if snapshot.exists() else 0
        if size:
            os.truncate(snapshot, size // 2)  # in place: the same inode, cut short
        again = text_of(await client.call_tool("context_recall", {"session_id": "big", "query": "entry 77"}))
        summary = summary_path(journal)
        summary.unlink(missing_ok=True)
        os.symlink("/dev/zero", summary)
        listed = await client.call_tool("context_list_sessions", {})
    held = size > 0 and first == again and not listed.is_error and "big" in text_of(listed)
    return Row(
        "5 snapshot cut short in place under a server; summary made a symlink to /dev/zero",
        "no SIGBUS, the same answer, listing works without reading /dev/zero",
        f"snapshot {size:,} -> {size // 2:,} bytes: answer {'same' if first == again else 'DIFFERENT'}; "
        f"listing {'ok' if not listed.is_error else 'error'}",
        held,
    )


def _mount(mount: Path, *, umount: bool = False) -> bool:
    """Mount a 4 MB tmpfs at ``mount`` (root only), or unmount it; whether that worked."""
    if umount:
        return subprocess.run(["umount", "-l", str(mount)], check=False).returncode == 0
    if os.geteuid() != 0:
        return False
    return (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True, check=False
        ).returncode
        == 0
    )


async def _full_disk(work: Path) -> Row:
    name = "6 data dir on a full disk (4 MB tmpfs filled to the last byte)"
    mount = work / "mnt"
    mount.mkdir()
    if not _mount(mount):
        return Row(name, "reads work", "not run: mounting a tmpfs needs root", False)
    try:
        data = mount / "data"
        async with open_context(_config(data)) as ctx:
            for n in range(20):
                await ctx.sessions.append("s", f"kept {n}")
            await ctx.documents.ingest(text="# D\n\nechidna\n", title="d")
        with open(mount / "filler", "wb") as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 65536)
        codes = {
            command: _cli(data, *command.split()).returncode for command in ("sessions", "show s", "export s", "doctor")
        }
        async with stdio_server(data) as client:
            recalled = await client.call_tool("context_recall", {"session_id": "s", "query": "kept"})
            # Journals first: the first appends take the room of the derived search index (store/room.py).
            stored = 0
            for n in range(100):
                appended = await client.call_tool("context_append", {"session_id": "s", "text": f"{n} " + "x " * 3000})
                if appended.is_error:
                    break
                stored += 1
            (mount / "filler").unlink()
            searched = await client.call_tool("doc_search", {"query": "echidna"})
        held = (
            codes == {"sessions": 0, "show s": 0, "export s": 0, "doctor": 1}
            and not recalled.is_error
            and stored > 0
            and appended.is_error
            and "No space left" in text_of(appended)
            and "echidna" in text_of(searched)
        )
        return Row(
            name,
            "sessions/show/export 0, doctor names the full disk (1); reads served; appends take the index's room, "
            "then are refused clearly; search back once there is room",
            f"exit codes {codes}; recall ok: {not recalled.is_error}; {stored} stored, then: "
            f"{text_of(appended)[:60]}; search after: {text_of(searched)[:40]!r}",
            held,
        )
    finally:
        _mount(mount, umount=True)


async def _prune_and_odd_times(work: Path) -> Row:
    data = work / "prune-data"
    wrong = 0
    async with stdio_server(data) as client:
        for round_ in range(3):
            session = f"p{round_}"
            for n in range(30):
                await client.call_tool("context_append", {"session_id": session, "text": f"note {n} " * 20})
            await client.call_tool("context_compact", {"session_id": session, "keep_recent": 1})
            pruned = _cli(data, "prune", "--older-than", "0", "--yes")
            answer = await client.call_tool("context_append", {"session_id": session, "text": "after the prune"})
            wrong += pruned.returncode != 0 or answer.is_error
    odd = data / "sessions" / "odd.jsonl"
    odd.write_text(
        '{"v":1,"seq":1,"ts":1e308,"kind":"session","id":"odd","title":"odd"}\n'
        '{"v":1,"seq":2,"ts":NaN,"kind":"entry","id":"e2","text":"t","role":"note","tags":[],"pinned":false}\n'
    )
    listed = _cli(data, "sessions")
    held = wrong == 0 and listed.returncode == 0 and "odd" in listed.stdout
    return Row(
        "7 append right after another process pruned the journal (3 rounds); a journal with ts 1e308/NaN",
        "every append answered truthfully; ctxtrio sessions lists every session",
        f"{wrong} wrong answers; sessions exit {listed.returncode}, lists odd: {'odd' in listed.stdout}",
        held,
    )


async def _unread(work: Path) -> Row:
    taken, started, peak, _, answered = await trio.to_thread.run_sync(stdio_unread, work / "unread", 3000)
    before, after, alive, refused = await http_idle(work / "idle", 300, 100)
    held = taken < 2000 and answered == 3000 and peak - started < 50 and alive == 100 and after - before < 30
    return Row(
        "8 stdio: 3,000 calls with answers unread; HTTP: 300 idle sessions at cap 100",
        "stdio stops reading (< 2,000 taken), RSS +< 50 MB; HTTP RSS +< 30 MB, newest sessions answer",
        f"stdio took {taken:,}, RSS {started:.0f} -> peak {peak:.0f} MB, {answered:,} answered; "
        f"HTTP RSS {before:.0f} -> {after:.0f} MB, {alive}/100 newest answer, {refused} refused",
        held,
    )


async def _trickle_and_doctor(work: Path) -> Row:
    from harness import start_http_server, stop_server

    process, url = await start_http_server(work / "trickle-data", "--http-body-timeout", "3")
    try:
        host, port = url.split("//")[1].split("/")[0].split(":")

        def trickle() -> tuple[str, float]:
            started = time.monotonic()
            with socket.create_connection((host, int(port)), timeout=60) as sock:
                sock.sendall(
                    f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: 5000000\r\n\r\n".encode()
                )
                sock.settimeout(2.0)
                while time.monotonic() - started < 60:
                    try:
                        sock.sendall(b" " * 100)
                        answer = sock.recv(200)
                        return answer.split(b"\r\n")[0].decode(errors="replace"), time.monotonic() - started
                    except TimeoutError:
                        continue
                    except OSError:
                        return "connection closed", time.monotonic() - started
            return "no answer", 60.0

        status, took = await trio.to_thread.run_sync(trickle)
    finally:
        await stop_server(process)
    data = work / "doctor-data"
    lost = data / "lost-and-found" / "docs" / "doc-1" / "g.jsonl"
    lost.parent.mkdir(parents=True)
    lost.write_text('{"v":1,"seq":1,"ts":1,"kind":"chunk","id":"c0","index":0,"text":"lost"}\n')
    doctor = _cli(data, "doctor")
    held = "408" in status and took < 15 and "warn lost-and-found" in doctor.stdout
    return Row(
        "9 a body trickled 100 bytes every 2 s under a declared 5 MB; a file in lost-and-found",
        "408 within the grace; doctor warns about lost-and-found, with how to restore",
        f"{status} after {took:.1f} s; doctor: {'warns' if 'warn lost-and-found' in doctor.stdout else 'silent'}",
        held,
    )


def run(work: Path) -> list[Row]:
    async def main() -> list[Row]:
        rows: list[Row] = []
        for name, attack, limit in (
            ("1 export/import round trip", _round_trip, 120),
            ("2 import race", _race, 240),
            ("3 kill -9 mid-import", _kill, 300),
            ("4 non-UTF-8 path", _odd_path, 90),
            ("5 side files", _side_files, 180),
            ("6 full disk", _full_disk, 180),
            ("7 prune beside a server", _prune_and_odd_times, 180),
            ("8 unread answers", _unread, 300),
            ("9 trickled body, doctor", _trickle_and_doctor, 120),
        ):
            rows += await guarded(name, lambda attack=attack: attack(work), limit)  # type: ignore[misc]
        return rows

    return trio.run(main)
