"""Session tools across real server processes: sharing a data dir, and SIGTERM durability."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import trio
from mcp import Client
from mcp.types import TextContent

from ctxtrio.store.reading import read_journal
from testkit.servers import server_command, server_params
from testkit.stdio_lines import line

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]


def params(data_dir: Path) -> StdioServerParameters:
    return server_params(data_dir)


async def test_two_servers_see_each_others_appends(tmp_path: Path) -> None:
    """Two stdio servers on one data dir: each sees the other's appends and pins on its next call."""
    data = tmp_path / "data"
    with trio.fail_after(90):
        async with Client(params(data)) as a, Client(params(data)) as b:
            first = await a.call_tool("context_append", {"session_id": "shared", "text": "A: cookies stay"})
            second = await b.call_tool("context_append", {"session_id": "shared", "text": "B: tokens rotate"})
            assert first.structured_content is not None and second.structured_content is not None
            assert first.structured_content["id"] != second.structured_content["id"]
            seen_by_a = await a.call_tool("context_recall", {"session_id": "shared", "query": "tokens rotate"})
            assert seen_by_a.structured_content is not None
            assert seen_by_a.structured_content["ids"] == [second.structured_content["id"]]
            pin = {"session_id": "shared", "entry_id": first.structured_content["id"], "pinned": True}
            await a.call_tool("context_update", pin)
            status = await b.call_tool("context_status", {"session_id": "shared"})
            assert status.structured_content is not None
            assert (status.structured_content["live_entries"], status.structured_content["pinned"]) == (2, 1)
            listed = await b.call_tool("context_list_sessions", {})
            block = listed.content[0]
            assert isinstance(block, TextContent) and block.text.startswith('shared "shared": 2 live')


async def test_sigterm_after_acknowledged_appends_keeps_them(tmp_path: Path) -> None:
    """Appends in flight when SIGTERM arrives: every acknowledged one is in the journal."""
    data = tmp_path / "data"
    process = await trio.lowlevel.open_process(
        server_command(data),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdin is not None and process.stdout is not None
    count = 60
    handshake = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    script = line(handshake) + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for number in range(1, count + 1):
        arguments = {"session_id": "durable", "text": f"fact number {number}"}
        request = {"name": "context_append", "arguments": arguments}
        script += line({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": request})
    acknowledged: set[str] = set()
    buffer = b""
    with trio.fail_after(60):
        await process.stdin.send_all(script)
        while len(acknowledged) < count // 3:
            chunk = await process.stdout.receive_some()
            assert chunk, "server exited early"
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for raw in complete:
                reply = json.loads(raw)
                result = reply.get("result", {})
                if reply.get("id") and not result.get("isError"):
                    acknowledged.add(result["structuredContent"]["id"])
        process.send_signal(signal.SIGTERM)
        assert await process.wait() == 0
    await process.stdin.aclose()
    records = read_journal(data / "sessions" / "durable.jsonl").records
    stored = {record.id for record in records if record.kind == "entry"}
    assert acknowledged <= stored
