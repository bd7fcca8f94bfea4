"""Over stdio, a request read just before stdin's EOF is answered as one asked before the stop, whenever its
handler task gets to run, and its answer is out before the stop ends what is in flight: the server runs
in-process, or its transport's parts, and the test holds a task at the point where the order was lost."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

import ctxtrio
from ctxtrio import _app
from ctxtrio.transport.answers import AnswerRecorder
from ctxtrio.transport.stdio import ProtocolWriter, Traffic
from testkit.stdio_lines import line, modern_meta, modern_request

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    import pytest
    from mcp.server.lowlevel import Server

    from ctxtrio._sdk.events import Hub
    from ctxtrio._wiring import Wiring
    from ctxtrio.surface.watch import Journals
    from ctxtrio.tools.stopping import Stopping

_MODERN = modern_meta()


def _held_until_the_stop(monkeypatch: pytest.MonkeyPatch, *methods: str) -> None:
    """The server's handlers of ``methods`` run only once the stop began: the order a busy machine gave a
    listen whose line and EOF were read together (flaky26: 2 runs in 5 at load 5), forced. Each handler is
    the one the server registered (``Server.get_request_handler``), called after the stop."""
    build = _app._build

    def held(ctx: Wiring, stopping: Stopping, journals: Journals) -> tuple[Server[Any], Hub]:
        server, hub = build(ctx, stopping, journals)
        stopped = trio.Event()
        stopping.at_stop(lambda *_: stopped.set())  # after hub.end_listens, registered first by _build
        for method in methods:
            entry = server.get_request_handler(method)
            assert entry is not None, method
            server.add_request_handler(method, entry.params_type, _after(stopped, entry.handler))
        return server, hub

    monkeypatch.setattr(_app, "_build", held)


def _after(stopped: trio.Event, handler: Callable[[Any, Any], Awaitable[Any]]) -> Callable[[Any, Any], Awaitable[Any]]:
    async def after_the_stop(ctx: Any, params: Any) -> Any:
        await stopped.wait()
        return await handler(ctx, params)

    return after_the_stop


async def _served(tmp_path: Path, capfd: pytest.CaptureFixture[str], *lines: bytes) -> list[dict[str, Any]]:
    """Serve ``lines`` then EOF on stdin (a pipe) in-process, with an hour of grace; what went to stdout."""
    config = ctxtrio.Config(
        data_dir=tmp_path / "data", llm_enabled=False, audit=False, warm_start=False, shutdown_grace_s=3600.0
    )
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"".join(lines))  # a few hundred bytes: the pipe takes them whole
    os.close(write_fd)
    capfd.readouterr()
    try:
        # Only a hang guard. The grace is an hour so that no answer depends on the machine's speed: a listen left
        # open holds the server until this guard fails the test.
        with trio.fail_after(300):
            await _app.serve(config, stdin_fd=read_fd, warm=None)
    finally:
        os.close(read_fd)
    return [json.loads(line) for line in capfd.readouterr().out.splitlines() if line.strip()]


async def test_a_listen_read_before_eof_whose_handler_starts_after_the_stop_ends_with_its_result(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listen read just before EOF, whose handler starts only once the stop began, is acknowledged and ended
    with its result (before: refused, -32603 "the server is stopping: listen again once it is back", for a
    request the server had read before it stopped)."""
    _held_until_the_stop(monkeypatch, "subscriptions/listen")
    listen = {"notifications": {"resourcesListChanged": True}, "_meta": _MODERN}
    out = await _served(
        tmp_path,
        capfd,
        line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": _MODERN}}),
        line({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": listen}),
    )
    answer = next((message for message in out if message.get("id") == 2), None)
    assert answer is not None and "result" in answer, out
    assert answer["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 2, answer
    order = [message.get("method", message.get("id")) for message in out]
    assert order == [1, "notifications/subscriptions/acknowledged", 2], out


_HELD = ("tools/call", "tools/list", "resources/read", "resources/list", "prompts/list", "subscriptions/listen")


async def test_every_request_read_before_eof_whose_handler_starts_after_the_stop_gets_its_result(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same losing order for each kind of request a host sends: a write (context_append) and a read tool
    call, tools/list, resources/read, resources/list, prompts/list and a listen, all read with EOF and each
    handler held until the stop began: every one is answered with its result (the grace, an hour, is not
    spent), none refused nor answered that the server stops."""
    _held_until_the_stop(monkeypatch, *_HELD)
    out = await _served(
        tmp_path,
        capfd,
        modern_request(1, "server/discover"),
        modern_request(
            2, "tools/call", {"name": "context_append", "arguments": {"session_id": "s", "text": "Decision: X"}}
        ),
        modern_request(3, "tools/call", {"name": "context_guide", "arguments": {}}),
        modern_request(4, "tools/list"),
        modern_request(5, "resources/read", {"uri": "ctxtrio://guide"}),
        modern_request(6, "resources/list"),
        modern_request(7, "prompts/list"),
        modern_request(8, "subscriptions/listen", {"notifications": {"resourcesListChanged": True}}),
    )
    answers = {message["id"]: message for message in out if "id" in message}
    assert sorted(answers) == list(range(1, 9)), out
    assert all("result" in answer for answer in answers.values()), out
    assert not any(answers[i]["result"].get("isError") for i in (2, 3)), out


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
#: The answer as the SDK writes it (``jsonrpc`` then ``id``: see ctxtrio._sdk.response_id), one the warm start keeps.
_INITIALIZED = (
    '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},'
    '"serverInfo":{"name":"ctxtrio","version":"0"}}}\n'
)


async def test_an_answer_the_warm_start_records_is_in_flight_until_it_is_written(tmp_path: Path) -> None:
    """An initialize answered as stdin ends, its answer waiting for a worker thread to save the warm start's
    recording (all threads busy): the stop's drain waits for it, and the line goes out before the handlers are
    cancelled. Before, it counted as answered before the save, so the drain ended at once and the cancel (the
    SDK's, as the reader ends) caught the handler in the save: the host never got its answer."""
    recorder = AnswerRecorder(tmp_path / "answers.json", "stamp", {})
    traffic = Traffic(recorder)
    read_fd, write_fd = os.pipe()
    writer = ProtocolWriter(write_fd, traffic)
    threads = trio.to_thread.current_default_thread_limiter()
    threads.total_tokens = 1
    busy = object()  # the one worker thread, busy elsewhere (a search's SQLite read) until the test frees it
    await threads.acquire_on_behalf_of(busy)
    traffic.incoming(json.dumps(_INITIALIZE))

    async def answer() -> None:
        await writer.write(_INITIALIZED)

    async def free_the_thread() -> None:
        await trio.testing.wait_all_tasks_blocked()  # once the drain waits (when it does)
        threads.release_on_behalf_of(busy)

    with trio.fail_after(300):  # only a hang guard: the grace below is an hour
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            async with trio.open_nursery() as handlers:  # the SDK's handler task group
                handlers.start_soon(answer)
                await trio.testing.wait_all_tasks_blocked()  # the answer waits for the thread
                handlers.start_soon(free_the_thread)
                await traffic.inflight.settle(3600.0, 2.0)  # drain(), at EOF
                handlers.cancel_scope.cancel()  # the reader ended: the SDK cancels the handlers still running
            writer.close()
    await writer.aclose()
    with os.fdopen(read_fd, "rb") as out:
        assert out.read() == _INITIALIZED.encode()
    assert json.loads((tmp_path / "answers.json").read_text())["answers"], "the answer was recorded"
