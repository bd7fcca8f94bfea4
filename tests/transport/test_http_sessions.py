"""HTTP session cap: at --http-max-sessions a new session closes the one idle longest, with a log line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx

from .serving import http_server

if TYPE_CHECKING:
    from pathlib import Path

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


async def _open(http: httpx.AsyncClient, url: str) -> str:
    answer = await http.post(url, headers=HEADERS, content=json.dumps(INIT))
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    done = await http.post(
        url,
        headers={**HEADERS, "mcp-session-id": session},
        content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    assert done.status_code == 202
    return session


async def _ping(http: httpx.AsyncClient, url: str, session: str) -> int:
    answer = await http.post(
        url,
        headers={**HEADERS, "mcp-session-id": session},
        content=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    )
    return answer.status_code


async def test_a_new_session_at_the_cap_closes_the_one_idle_longest(tmp_path: Path) -> None:
    """Cap 3: a fourth session is served and the first (idle longest) is closed and logged, the others
    still answer (before: sessions had no cap below the SDK's 10,000)."""
    async with http_server(tmp_path / "data", "--http-max-sessions", "3") as server, httpx.AsyncClient() as http:
        first, second, third = [await _open(http, server.mcp_url) for _ in range(3)]
        assert await _ping(http, server.mcp_url, second) == 200  # second and third are newer than first
        fourth = await _open(http, server.mcp_url)
        assert await _ping(http, server.mcp_url, first) == 404
        for session in (second, third, fourth):
            assert await _ping(http, server.mcp_url, session) == 200
        assert b"HTTP session cap (3) reached: closed session " + first[:12].encode() in server.stderr
