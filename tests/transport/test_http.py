"""The real server over Streamable HTTP on 127.0.0.1:0, driven by the SDK client and raw HTTP."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import httpx
import httpx2
import pytest
import trio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from testkit.raw_http import address, post_head

from .serving import http_server, spawn

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = "s3cret-token-of-enough-length"


async def _guide_text(client: Client) -> str:
    result = await client.call_tool("context_guide", {})
    assert not result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_sdk_client_over_http(tmp_path: Path) -> None:
    """The SDK client lists tools and calls one at /mcp and at / (the original's path)."""
    async with http_server(tmp_path / "data") as server:
        for url in (server.mcp_url, server.base_url + "/"):
            async with Client(url) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert "context_guide" in names
                assert "context_recall" in await _guide_text(client)


async def test_health(tmp_path: Path) -> None:
    """GET /health answers with status and version."""
    async with http_server(tmp_path / "data") as server, httpx.AsyncClient() as http:
        response = await http.get(server.base_url + "/health")
        assert response.status_code == 200
        assert response.json()["status"] == "ok" and response.json()["version"]


async def test_a_path_that_is_no_endpoint_says_where_mcp_is(tmp_path: Path) -> None:
    """A client pointed at another path (a host config's /sse, /v1) gets a 404 that names /mcp, / and /health;
    it got a bare "Not Found" in plain text, which does not say the server is ctxtrio or where to go."""
    async with http_server(tmp_path / "data") as server, httpx.AsyncClient() as http:
        for method, path in (("POST", "/sse"), ("GET", "/v1/mcp"), ("POST", "/mcpx")):
            response = await http.request(method, server.base_url + path, json={})
            assert response.status_code == 404, (path, response.text)
            assert response.json() == {
                "error": f"nothing at {path}: ctxtrio serves MCP at /mcp (and at /), and GET /health"
            }, response.text


async def test_foreign_host_and_origin_rejected(tmp_path: Path) -> None:
    """DNS rebinding: a foreign Host or Origin gets 403, on MCP and health alike."""
    async with http_server(tmp_path / "data") as server, httpx.AsyncClient() as http:
        for path in ("/mcp", "/health"):
            response = await http.post(server.base_url + path, headers={"Host": "evil.example"}, json={})
            assert response.status_code == 403
            response = await http.post(server.base_url + path, headers={"Origin": "http://evil.example"}, json={})
            assert response.status_code == 403
        ok = await http.get(server.base_url + "/health", headers={"Origin": "http://localhost:5173"})
        assert ok.status_code == 200


async def test_refusals_close_the_connection(tmp_path: Path) -> None:
    """A refusal says Connection: close, so a keep-alive client never reuses a closing connection."""
    async with http_server(tmp_path / "data") as server, httpx.AsyncClient() as http:
        for _ in range(20):
            response = await http.post(server.mcp_url, headers={"Origin": "http://evil.example"}, json={})
            assert response.status_code == 403
            assert response.headers["connection"] == "close"


async def test_token_required_when_set(tmp_path: Path) -> None:
    """With a token, requests without the right bearer get 401 naming the Bearer scheme; the SDK client with it works."""
    async with http_server(tmp_path / "data", env={"CTX_HTTP_TOKEN": TOKEN}) as server:
        async with httpx.AsyncClient() as http:
            refused = await http.get(server.base_url + "/health")
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer ")
            wrong = {"Authorization": "Bearer nope"}
            assert (await http.post(server.mcp_url, headers=wrong, json={})).status_code == 401
            good = {"Authorization": f"Bearer {TOKEN}"}
            assert (await http.get(server.base_url + "/health", headers=good)).status_code == 200
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as authed:
            async with Client(streamable_http_client(server.mcp_url, http_client=authed)) as client:
                assert "context_recall" in await _guide_text(client)


async def test_body_limit(tmp_path: Path) -> None:
    """A declared body over the limit is refused with 413 before it is read."""
    async with http_server(tmp_path / "data", "--max-ingest-chars", "10") as server:
        host, port = address(server.base_url)
        stream = await trio.open_tcp_stream(host, port)
        async with stream:
            await stream.send_all(post_head(host, port, length=50 << 20))
            with trio.fail_after(10):
                head = await stream.receive_some()
        assert head.startswith(b"HTTP/1.1 413")


async def test_two_clients_at_once(tmp_path: Path) -> None:
    """Two SDK clients share one server concurrently."""
    async with http_server(tmp_path / "data") as server:
        texts: list[str] = []

        async def one() -> None:
            async with Client(server.mcp_url) as client:
                for _ in range(5):
                    texts.append(await _guide_text(client))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(one)
            nursery.start_soon(one)
        assert len(texts) == 10


async def test_non_loopback_refused_without_allow_remote(tmp_path: Path) -> None:
    """Binding 0.0.0.0 without --allow-remote exits 2 before listening."""
    process = await spawn("--http", "--host", "0.0.0.0", "--data-dir", str(tmp_path / "d"))
    with trio.fail_after(30):
        assert await process.wait() == 2
    assert process.stderr is not None
    assert b"not loopback" in await process.stderr.receive_some()


async def test_sigterm_exits_zero(tmp_path: Path) -> None:
    """SIGTERM stops the HTTP server gracefully with exit code 0."""
    async with http_server(tmp_path / "data") as server:
        async with Client(server.mcp_url) as client:
            await _guide_text(client)
        server.process.send_signal(signal.SIGTERM)
        with trio.fail_after(5):
            assert await server.process.wait() == 0


async def test_sigterm_lets_the_call_in_flight_finish(tmp_path: Path) -> None:
    """SIGTERM during a slow LLM summary: the call still gets its answer, then exit 0."""
    from testkit.fake_openai import FakeServer, open_fake_openai

    async with trio.open_nursery() as nursery:
        # An answer that passes the summarizer's checks (three of the figures kept whole, shorter than the text).
        fake = await open_fake_openai(
            nursery, FakeServer(reply=lambda _: "Sentences 0 to 299 (150 in the middle) cover the retry policy.")
        )
        async with http_server(tmp_path / "data", "--llm-base-url", fake.base_url, llm=True) as server:
            async with Client(server.mcp_url) as client:
                with trio.fail_after(30):  # calibration first, so the summary does not queue behind it
                    while "rates measured via" not in await _guide_text(client):
                        await trio.sleep(0.1)
                text = " ".join(f"Sentence {n} about the retry policy and its backoff." for n in range(300))
                ingested = await client.call_tool("doc_ingest", {"text": text, "doc_id": "long"})
                assert not ingested.is_error
                fake.delay_s = 0.5
                results: list[str] = []

                async def summarize() -> None:
                    result = await client.call_tool("doc_summarize", {"doc_id": "long", "target_tokens": 100})
                    assert not result.is_error
                    block = result.content[0]
                    assert isinstance(block, TextContent)
                    results.append(block.text)

                async with trio.open_nursery() as calls:
                    calls.start_soon(summarize)
                    await trio.sleep(0.2)
                    server.process.send_signal(signal.SIGTERM)
                assert results and "extractive" not in results[0].split("\n", 1)[0].lower()
            with trio.fail_after(10):
                assert await server.process.wait() == 0
        nursery.cancel_scope.cancel()


# The server exits while the SDK client still holds its GET stream; the client leaves that stream's
# generators to the garbage collector (ResourceWarnings of the client's, as in tests/surface/test_notify).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_call_past_the_grace_is_answered_that_the_server_stops(tmp_path: Path) -> None:
    """SIGTERM with --shutdown-grace 0 during a large ingest: the client gets an error answer saying the server
    stops and to call again, then exit 0 (before: the connection closed without an answer, which the SDK client
    raised as a bare -32603 'Server returned an error response'; user24's sitting, a 16 MB file at 5 s)."""
    text = "\n\n".join(f"## Part {n}\n\nThe marker zebrafinch{n} sits in part {n} of the manual." for n in range(60000))
    answers: list[str] = []
    async with http_server(tmp_path / "data", "--shutdown-grace", "0") as server:
        async with Client(server.mcp_url) as client:
            running = trio.Event()

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                running.set()  # the ingest is under way in the tool: the stop cuts it off

            async def ingest() -> None:
                result = await client.call_tool(
                    "doc_ingest", {"text": text, "doc_id": "big"}, progress_callback=progressed
                )
                assert result.is_error
                block = result.content[0]
                assert isinstance(block, TextContent)
                answers.append(block.text)

            with trio.fail_after(120):  # only stops a hang
                async with trio.open_nursery() as calls:
                    calls.start_soon(ingest)
                    await running.wait()
                    server.process.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            assert await server.process.wait() == 0
    assert answers == [
        "Error: not finished: the server is stopping, and this call did not finish within its shutdown grace "
        "(0 s, --shutdown-grace), so what it stores may or may not have landed; once the server is back, look "
        "before you call doc_ingest again"
    ]


# The server exits while the SDK client still holds its connection (see the test above).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_listen_stream_ends_gracefully_when_the_server_stops(tmp_path: Path) -> None:
    """A 2026-07-28 client listening for changes, SIGTERM: its stream ends with the server's result (the loop
    over it just ends), exit 0 (before: the stream was a request owed an answer, kept past the grace, then cut
    off, which the SDK client raised as SubscriptionLost, 3.1 s after SIGTERM with a 1 s grace)."""
    events: list[object] = []
    async with http_server(tmp_path / "data", "--shutdown-grace", "1") as server:
        async with Client(server.mcp_url) as client:
            assert client.protocol_version == "2026-07-28"
            with trio.fail_after(60):  # only stops a hang
                async with client.listen(resources_list_changed=True) as stream:
                    server.process.send_signal(signal.SIGTERM)
                    async for event in stream:  # SubscriptionLost, raised here, fails the test
                        events.append(event)
                assert await server.process.wait() == 0
    assert events == []


async def test_client_gone_mid_ingest_cancels_it_cleanly(tmp_path: Path) -> None:
    """A client that disconnects during a large ingest cancels it: nothing half-stored, the server serves on."""
    text = "\n\n".join(f"## Part {n}\n\nThe marker zebrafinch{n} sits in part {n} of the manual." for n in range(60000))
    folder = tmp_path / "data" / "docs" / "big"
    async with http_server(tmp_path / "data") as server:
        # Gone once the server is storing the document (its partial generation file is there), not after 0.5 s of
        # real time, which on a loaded machine could end before the call was even sent.
        with trio.fail_after(300), trio.CancelScope() as gone:
            async with Client(server.mcp_url) as client, trio.open_nursery() as nursery:

                async def leave_once_storing() -> None:
                    while not list(folder.glob("*.jsonl")):
                        await trio.sleep(0.01)
                    gone.cancel()

                nursery.start_soon(leave_once_storing)
                await client.call_tool("doc_ingest", {"text": text, "doc_id": "big"})
        assert gone.cancelled_caught, "the ingest finished before the client left"
        async with Client(server.mcp_url) as client:
            with trio.fail_after(60):  # the abandoned ingest never commits; its partial generation file goes
                looks = 0
                while looks < 6 or list(folder.glob("*.jsonl")):
                    listing = await client.call_tool("doc_list", {})
                    assert isinstance(listing.structured_content, dict)
                    assert listing.structured_content["doc_ids"] == [], "the abandoned ingest committed"
                    looks += 1
                    await trio.sleep(0.25)
            appended = await client.call_tool("context_append", {"session_id": "after", "text": "still serving"})
            assert not appended.is_error
            again = await client.call_tool("doc_ingest", {"text": "A tiny wombat manual.", "doc_id": "big"})
            assert not again.is_error
            found = await client.call_tool("doc_search", {"query": "wombat", "doc_id": "big"})
            assert "wombat" in str(found.content)
