"""HTTP attacks on the real server on 127.0.0.1:0 (issue 11: H1-H3, and more).

Each attack starts ``python -m ctxtrio --http`` on a fresh data dir, attacks it with raw
sockets and the SDK client, and checks that it answered as it should and still serves.
Loopback only; every attack is bounded in connections and in time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import trio
from mcp import Client

from testkit.processes import stop_process
from testkit.raw_http import address, post_head, send_chunked_until_answered, stall_connections, status_line

from . import Row, guarded

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ROOT = Path(__file__).resolve().parents[2]
_READY = re.compile(rb"ready: MCP over HTTP at (http://[^\s,]+)/mcp")
TEXT = "\n\n".join(f"Paragraph {n} is about the bilby {n}." for n in range(12_000))  # ~400 KB: a large body


@asynccontextmanager
async def _server(
    work: Path, name: str, *extra: str, fd_limit: int | None = None
) -> AsyncIterator[tuple[str, bytearray]]:
    """The server's base URL and its stderr so far (drained meanwhile); SIGTERM on exit."""
    command = [
        sys.executable,
        "-m",
        "ctxtrio",
        "--http",
        "--port",
        "0",
        "--no-llm",
        "--no-audit",
        "--data-dir",
        str(work / name),
        *extra,
    ]
    if fd_limit is not None:
        command = ["sh", "-c", f"ulimit -n {fd_limit} && exec " + " ".join(command)]
    process = await trio.lowlevel.open_process(
        command, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert process.stderr is not None
    stderr = process.stderr
    seen = bytearray()
    try:
        with trio.fail_after(60):
            while (match := _READY.search(seen)) is None:
                chunk = await stderr.receive_some()
                if not chunk:
                    raise RuntimeError(f"server exited: {seen.decode(errors='replace')[-300:]}")
                seen += chunk
        async with trio.open_nursery() as nursery:

            async def drain() -> None:
                while chunk := await stderr.receive_some():
                    seen.extend(chunk)

            nursery.start_soon(drain)
            yield match.group(1).decode(), seen
            nursery.cancel_scope.cancel()
    finally:
        await stop_process(process)
        with trio.CancelScope(shield=True):
            await stderr.aclose()


async def _alive(base_url: str) -> bool:
    """Health answers and a small ingest is stored and found."""
    async with httpx.AsyncClient(timeout=30) as http:
        if (await http.get(base_url + "/health")).status_code != 200:
            return False
    async with Client(base_url + "/mcp") as client:
        # "A numbat." fits even --max-ingest-chars 10.
        if (await client.call_tool("doc_ingest", {"text": "A numbat.", "doc_id": "alive"})).is_error:
            return False
        found = await client.call_tool("doc_search", {"query": "numbat"})
        return not found.is_error and "numbat" in str(found.content)


async def chunked_unbounded(work: Path) -> Row:
    async with _server(work, "h1", "--max-ingest-chars", "10") as (base_url, _):
        host, port = address(base_url)
        async with await trio.open_tcp_stream(host, port) as stream:
            status, sent = await send_chunked_until_answered(stream, host, port, cap_bytes=256 << 20)
        alive = await _alive(base_url)
    held = status.startswith(b"HTTP/1.1 413") and sent < 32 << 20 and alive
    return Row(
        "H1 chunked POST without Content-Length, never ending (limit ~1 MB)",
        "413 at the limit, serves on",
        f"{status.decode(errors='replace')} after {sent >> 20} MB sent; alive {alive}",
        held,
    )


async def silent_bodies(work: Path) -> Row:
    async with _server(work, "h2", "--max-ingest-chars", "25000000", "--http-body-timeout", "2") as (base_url, _):
        host, port = address(base_url)
        answers: list[bytes] = []

        async def silent() -> None:
            async with await trio.open_tcp_stream(host, port) as stream:
                await stream.send_all(post_head(host, port, length=128 << 20) + b'{"jsonrpc": "2.0", ')
                answers.append(await status_line(stream))

        started = trio.current_time()
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(silent)
            await trio.sleep(0.5)
            async with Client(base_url + "/mcp") as client:
                ok = not (await client.call_tool("doc_ingest", {"text": TEXT, "doc_id": "bilby"})).is_error
            waited = trio.current_time() - started
    timed_out = sum(answer.startswith(b"HTTP/1.1 408") for answer in answers)
    return Row(
        "H2 five connections declare 128 MiB bodies (the whole buffer budget), then go silent",
        "408 after the body timeout (2 s); a large doc_ingest then completes",
        f"{timed_out} of 5 got 408; ingest {'ok' if ok else 'failed'} after {waited:.1f} s",
        timed_out == 5 and ok,
    )


async def half_open_flood(work: Path) -> Row:
    async with _server(work, "h3", "--http-body-timeout", "2", fd_limit=1024) as (base_url, seen):
        host, port = address(base_url)
        streams = await stall_connections(host, port, 1100, within_s=5)
        started = trio.current_time()
        alive = await _alive(base_url)
        waited = trio.current_time() - started
        for stream in streams:
            await stream.aclose()
        exhausted = b"EMFILE" in seen or b"Too many open files" in seen
    return Row(
        "H3 1,100 connections stalled mid-body under ulimit -n 1024",
        "service continues; no EMFILE",
        f"{len(streams)} connected; served again after {waited:.1f} s; fd exhaustion {exhausted}",
        alive and not exhausted,
    )


async def trickled_body(work: Path) -> Row:
    async with _server(work, "trickle", "--http-body-timeout", "2") as (base_url, _):
        host, port = address(base_url)
        started = trio.current_time()
        async with await trio.open_tcp_stream(host, port) as stream:
            await stream.send_all(post_head(host, port, length=1 << 20))

            async def drip() -> None:
                for _ in range(200):  # 2 bytes a second: never idle for 2 s, never done
                    try:
                        await stream.send_all(b" ")
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        return
                    await trio.sleep(0.5)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(drip)
                status = await status_line(stream)
                nursery.cancel_scope.cancel()
        took = trio.current_time() - started
        alive = await _alive(base_url)
    held = status.startswith(b"HTTP/1.1 408") and took < 30 and alive
    return Row(
        "1 MB body trickled at 2 bytes/s (never idle long enough for the per-read timeout)",
        "408 at the whole-body deadline (2 s + 1 MB at 256 KB/s)",
        f"{status.decode(errors='replace')} after {took:.1f} s; alive {alive}",
        held,
    )


async def slow_headers(work: Path) -> Row:
    async with _server(work, "slowloris") as (base_url, _):
        host, port = address(base_url)
        started = trio.current_time()
        closed_after = None
        async with await trio.open_tcp_stream(host, port) as stream:
            await stream.send_all(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
            with trio.move_on_after(60):
                for number in range(60):
                    try:
                        await stream.send_all(f"X-Slow-{number}: 1\r\n".encode())
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        closed_after = trio.current_time() - started
                        break
                    with trio.move_on_after(1):
                        if await stream.receive_some() == b"":
                            closed_after = trio.current_time() - started
                            break
        alive = await _alive(base_url)
    return Row(
        "headers trickled one line a second (slowloris)",
        "connection closed by the header timeout",
        f"closed after {closed_after:.1f} s" if closed_after is not None else "still open after 60 s",
        closed_after is not None and alive,
    )


async def raw_cases(work: Path) -> list[Row]:
    rows: list[Row] = []
    async with _server(work, "raw", "--max-ingest-chars", "10") as (base_url, _):
        host, port = address(base_url)

        async def exchange(payload: bytes) -> bytes:
            async with await trio.open_tcp_stream(host, port) as stream:
                await stream.send_all(payload)
                with trio.move_on_after(15):
                    return await status_line(stream)
            return b"(no answer)"

        status = await exchange(post_head(host, port, length=50 << 20))
        rows.append(
            Row(
                "declared Content-Length of 50 MB over a ~1 MB limit",
                "413 before reading",
                status.decode(errors="replace"),
                status.startswith(b"HTTP/1.1 413"),
            )
        )
        status = await exchange(post_head(host, port, length=20) + b"{not json at all!!!}")
        rows.append(
            Row(
                "POST /mcp with a body that is not JSON",
                "a 4xx answer",
                status.decode(errors="replace"),
                status.startswith(b"HTTP/1.1 4"),
            )
        )
        status = await exchange(b"\x16\x03\x01\x02\x00garbage that is not HTTP\r\n\r\n")
        rows.append(
            Row(
                "bytes that are not HTTP (a TLS hello)",
                "400 or closed; serves on",
                status.decode(errors="replace") or "closed",
                not status.startswith(b"HTTP/1.1 2"),
            )
        )
        status = await exchange(
            post_head(host, port, length=10, extra="Host: evil.example\r\n").replace(
                f"Host: {host}:{port}\r\n".encode(), b"", 1
            )
            + b"0123456789"
        )
        rows.append(
            Row(
                "foreign Host header (DNS rebinding)",
                "403",
                status.decode(errors="replace"),
                status.startswith(b"HTTP/1.1 403"),
            )
        )
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=300)) as http:
            codes: list[int] = []

            async def health() -> None:
                codes.append((await http.get(base_url + "/health")).status_code)

            async with trio.open_nursery() as nursery:
                for _ in range(300):
                    nursery.start_soon(health)
        rows.append(
            Row("300 concurrent /health requests", "all 200", f"{codes.count(200)} of 300", codes.count(200) == 300)
        )
        alive = await _alive(base_url)
        rows.append(Row("after all the above", "health and ingest/search still work", f"alive {alive}", alive))
    return rows


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    for name, attack in (
        ("H1", lambda: chunked_unbounded(work)),
        ("H2", lambda: silent_bodies(work)),
        ("H3", lambda: half_open_flood(work)),
        ("trickle", lambda: trickled_body(work)),
        ("slowloris", lambda: slow_headers(work)),
        ("raw", lambda: raw_cases(work)),
    ):
        rows.extend(await guarded(name, attack, 240))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
