"""The stdio reader's line checks: one parse of a short line, the same verdicts as the separate checks."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from ctxtrio.transport.json_lines import JsonLines, not_json, not_message
from ctxtrio.transport.messages import Peek, peek
from ctxtrio.transport.stdio import Traffic

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

_REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
_LINES = [
    json.dumps({**_REQUEST, "params": {"name": "doc_ingest", "arguments": {"text": "words " * 200}}}) + "\n",
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}\r\n',
    '{"jsonrpc":"2.0","id":"a","result":{}}\n',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n',
    "null\n",
    "5\n",
    '"text"\n',
    '{"id": 7}\n',
    "{bad\n",
    "   \n",
    "",
    '\x0c{"jsonrpc":"2.0","id":1,"method":"ping"}\n',  # str.strip drops \x0c, JSON does not
    '{"jsonrpc":"2.0","id":2,"method":"ping"}\u2028\n',
    '{"jsonrpc":"2.0","id":3,"method":"x","params":{"a":NaN}}\n',
    '{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":"\\ud800"}}\n',
    '{"jsonrpc":"2.0","id":5,"id":6,"method":"x"}\n',
    '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}\n',
    "[" * 30000 + "\n",
    json.dumps({**_REQUEST, "params": {"text": "x" * (1 << 16)}}) + "\n",  # longer than a short line
    json.dumps({**_REQUEST, "params": {"text": "y" * ((1 << 16) - 90)}}).ljust((1 << 16) - 1) + "\n",
]


class _Recorded(Traffic):
    """A Traffic that keeps what it was told about each line."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Peek] = []

    def incoming(self, line: str, seen: Peek | None = None) -> None:
        self.seen.append(seen if seen is not None else peek(line))
        super().incoming(line, seen)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def write(self, text: str) -> None:
        self.lines.append(text)


async def _each(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def _read(line: str) -> tuple[list[str], list[Peek], list[str]]:
    traffic, writer = _Recorded(), _Writer()
    passed = [text async for text in JsonLines(_each([line]), writer, traffic)]
    return passed, traffic.seen, writer.lines


@pytest.mark.parametrize("line", _LINES, ids=range(len(_LINES)))
async def test_each_line_gets_the_verdicts_of_the_separate_checks(line: str) -> None:
    """Passed on, answered -32700 or -32600, and noted to the traffic as not_json, not_message and peek say."""
    passed, seen, answers = await _read(line)
    if (problem := not_json(line)) is not None:
        expected = [f"Parse error: {problem}"]
    elif (wrong := not_message(line)) is not None:
        expected = [f"Invalid Request: {wrong}"]
    else:
        expected = []
    assert [json.loads(answer)["error"]["message"] for answer in answers] == expected
    assert passed == ([] if expected else [line])
    assert seen == [peek(line)]


async def test_a_short_line_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A doc_ingest line of a few KB is parsed by one json.loads for both checks and the in-flight note (it was three)."""
    loads = json.loads
    calls: list[int] = []

    def counted(text: str | bytes, **kwargs: object) -> object:
        calls.append(len(text))
        return loads(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", counted)
    traffic, writer = _Recorded(), _Writer()
    line = json.dumps({**_REQUEST, "params": {"name": "doc_ingest", "arguments": {"text": "words " * 500}}}) + "\n"
    passed = [text async for text in JsonLines(_each([line]), writer, traffic)]
    assert passed == [line] and writer.lines == []
    assert len(calls) == 1
    assert len(traffic.inflight) == 1 and traffic.seen[0].kind == "request"
