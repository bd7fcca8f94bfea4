"""Contract tests for ctxtrio/_sdk/: each thing the boundary relies on in the SDK, on the real SDK.

pyproject.toml pins ``mcp`` to the minor versions these pass on; a new SDK minor release
is taken only after they pass on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import trio

from ctxtrio._sdk import http_app, make_server, response_id, serve_lines

if TYPE_CHECKING:
    from ctxtrio._progress import Progress

_TOOL = {
    "name": "echo",
    "title": "Echo",
    "description": "Says what it got.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}


@dataclass(frozen=True)
class _Result:
    text: str
    structured: Mapping[str, Any] | None = None
    is_error: bool = False


class _Writer:
    """Collects what the SDK writes; tells when the answer to ``last_id`` went out."""

    def __init__(self, last_id: object) -> None:
        self.lines: list[str] = []
        self.calls: list[str] = []
        self.done = trio.Event()
        self._last = last_id

    async def write(self, text: str) -> None:
        self.calls.append("write")
        self.lines.append(text)
        if json.loads(text).get("id") == self._last:
            self.done.set()

    async def flush(self) -> None:
        self.calls.append("flush")


async def _exchange(messages: list[dict[str, Any]], seen: list[object]) -> _Writer:
    async def call(name: str, arguments: Mapping[str, Any] | None, progress: Progress) -> _Result:
        seen.append((arguments or {}).get("text"))
        return _Result(f"{name}: {(arguments or {}).get('text')!r}", {"ok": True})

    server = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=call)
    writer = _Writer(messages[-1]["id"])

    async def lines() -> AsyncIterator[str]:
        for message in messages:
            yield json.dumps(message) + "\n"
        await writer.done.wait()  # EOF only after the last answer, as a host would

    with trio.fail_after(20):
        await serve_lines(server, lines(), writer)
    return writer


def _init(request_id: object) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


async def test_stdio_exchange_through_the_boundary() -> None:
    """The SDK serves a duck-typed line source and writer, answers tools/list with our listing, and writes
    every response so that response_id reads its id; JSON-looking strings reach the tool unparsed."""
    seen: list[object] = []
    call_args = [{"text": '{"a": [1, 2]}'}, {"text": "null"}, {"text": "123"}]
    messages = [
        _init(1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "list-1", "method": "tools/list"},
        *(
            {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": {"name": "echo", "arguments": args}}
            for n, args in enumerate(call_args)
        ),
        {"jsonrpc": "2.0", "id": "bad", "method": "tools/call", "params": {"name": "echo", "arguments": 5}},
        {"jsonrpc": "2.0", "id": 99, "method": "ping"},
    ]
    writer = await _exchange(messages, seen)
    assert seen == ['{"a": [1, 2]}', "null", "123"]
    answers = {json.dumps(json.loads(line)["id"]): line for line in writer.lines if '"id"' in line}
    for token, line in answers.items():
        assert response_id(line) == token, line[:200]
    listed = json.loads(answers['"list-1"'])["result"]["tools"]
    assert listed == [_TOOL]
    call = json.loads(answers["10"])["result"]
    assert call["structuredContent"] == {"ok": True} and call["content"][0]["text"] == "echo: '{\"a\": [1, 2]}'"
    assert "error" in json.loads(answers['"bad"'])
    assert writer.calls[:2] == ["write", "flush"]


def test_http_app_is_an_asgi_app_with_a_session_manager() -> None:
    """http_app returns the SDK's Starlette app for /mcp; the server then has its session manager."""

    async def call(name: str, arguments: Mapping[str, Any] | None, progress: Progress) -> _Result:
        return _Result("")

    server = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=call)
    app = http_app(server, host="127.0.0.1", max_body_bytes=1 << 20, max_sessions=7, session_idle_s=60.0)
    assert callable(app) and [getattr(route, "path", None) for route in app.routes] == ["/mcp"]
    manager = server.session_manager
    assert (manager.max_sessions, manager.session_idle_timeout) == (7, 60.0)


def test_the_sdk_http_handler_parses_a_post_with_its_module_json() -> None:
    """ctxtrio._sdk.bodies hands a parsed body to the SDK through the json global of its POST handler's module:
    the handler calls json.loads(body), and http_app points that global at the stand-in."""
    import inspect

    from mcp.server import _streamable_http_modern as modern

    assert "decoded = json.loads(body)" in inspect.getsource(modern.handle_modern_request)
    server = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=_no_call)
    http_app(server, host="127.0.0.1", max_body_bytes=1 << 20)
    stand_in = modern.__dict__["json"]  # an unexported global
    assert stand_in.loads(b'{"a": 1}') == {"a": 1}
    assert stand_in.loads.__module__ == "ctxtrio._sdk.bodies"


def test_the_sdk_stateful_http_handler_parses_a_post_with_its_module_pydantic_core() -> None:
    """A 2025 session's POSTs are parsed by streamable_http's pydantic_core.from_json(body), the only pydantic_core
    name that module uses: http_app points that global at ctxtrio._sdk.bodies, so a large body the gate parsed is
    not parsed again there, and the stand-in the SDK is handed for it parses to the gate's object."""
    import inspect

    from mcp.server import streamable_http as stateful

    source = inspect.getsource(stateful)
    assert "raw_message = pydantic_core.from_json(body)" in source
    assert set(re.findall(r"pydantic_core\.(\w+)", source)) == {"from_json"}
    server = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=_no_call)
    http_app(server, host="127.0.0.1", max_body_bytes=1 << 20)
    stand_in = stateful.__dict__["pydantic_core"]  # an unexported global
    assert stand_in.from_json(b'{"a": 1}') == {"a": 1}
    assert stand_in.from_json.__module__ == "ctxtrio._sdk.bodies"


def test_the_sdk_internals_the_session_cap_reads_are_there() -> None:
    """ctxtrio._sdk.sessions reads the manager's _admit_session, _server_instances and _session_owners,
    and a transport's idle_scope and _requests_in_flight: each still exists in this SDK."""
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    server = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=_no_call)
    manager = StreamableHTTPSessionManager(server)
    assert callable(manager._admit_session)
    assert manager._server_instances == {} and manager._session_owners == {}
    transport = StreamableHTTPServerTransport(mcp_session_id="abc", idle_timeout=5.0)
    assert transport.idle_scope is None and transport._requests_in_flight == 0  # the scope is made by connect()


async def _no_call(name: str, arguments: Mapping[str, Any] | None, progress: Progress) -> _Result:
    return _Result("")


def test_response_id_ignores_what_is_not_an_sdk_response() -> None:
    """Requests, notifications and other field orders are not read as responses."""
    assert response_id('{"jsonrpc":"2.0","method":"notifications/progress"}') is None
    assert response_id('{"id":1,"jsonrpc":"2.0","result":{}}') is None
    assert response_id('{"jsonrpc":"2.0","id":1,"method":"x"}') is None


def test_the_sdk_otel_middleware_is_dropped_without_a_tracer_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's Server starts with its OpenTelemetryMiddleware (ctxtrio._sdk drops it by that name); make_server
    drops it while no tracer provider is installed, and keeps it once one is."""
    from mcp.server.lowlevel import Server
    from opentelemetry import trace

    assert [type(layer).__name__ for layer in Server[Any]("plain").middleware] == ["OpenTelemetryMiddleware"]
    plain = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=_no_call)
    assert plain.middleware == []
    monkeypatch.setattr(trace, "get_tracer_provider", trace.NoOpTracerProvider)
    traced = make_server(name="t", version="0", instructions="i", tools=[_TOOL], call=_no_call)
    assert [type(layer).__name__ for layer in traced.middleware] == ["OpenTelemetryMiddleware"]


_LINES = [
    json.dumps(_init(1)),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"\\u00e9 \\ud83d\\ude00"}}}',
    '{"jsonrpc":"2.0","id":1.0,"method":"x"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"x"}',
    '{"jsonrpc":"2.0","id":true,"method":"x"}',
    '{"jsonrpc":"2.0","id":null,"method":"x"}',
    '{"jsonrpc":"1.0","id":1,"method":"x"}',
    '{"jsonrpc":"2.0","id":1,"method":5}',
    '{"jsonrpc":"2.0","id":1,"result":[1]}',
    '{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}',
    '{"jsonrpc":"2.0","method":"x","params":{"a":Infinity}}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\\ud800"}}',
    '{"method":"x"}',
    "[1, 2]",
    "{",
    '{"jsonrpc":"2.0","id":1,"method":"x"} trailing',
    json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {"text": 'é\n"' * 40_000}}}),
]


async def test_lines_become_what_the_sdk_reader_made_of_them() -> None:
    """Each line becomes the message jsonrpc_message_adapter.validate_json gives (the SDK's stdin reader), and a
    line it rejects the exception it raises, same type and text: ids of each kind, NaN/Infinity, not JSON."""
    import anyio
    from mcp.types import jsonrpc_message_adapter

    from ctxtrio._sdk.lines import LineMessages

    async def source() -> AsyncIterator[str]:
        for line in _LINES:
            yield line

    messages = LineMessages(source())
    for line in _LINES:
        got = await messages.receive()
        try:
            want: object = jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            assert type(got) is type(exc) and str(got) == str(exc), line[:80]
            continue
        assert not isinstance(got, Exception), line[:80]
        assert type(got.message) is type(want) and got.message == want, line[:80]
    with pytest.raises(anyio.EndOfStream):  # the source is exhausted, as at stdin's EOF
        await messages.receive()
