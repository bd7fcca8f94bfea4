"""Warm start: recorded SDK answers served before the SDK is imported, then a clean handoff."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import trio
from mcp import Client

from ctxtrio.transport.messages import peek
from ctxtrio.transport.warm_start import EarlyResponder, Handoff, load_answers, request_key
from testkit.servers import server_command, server_params
from testkit.stdio_lines import line

ROOT = Path(__file__).resolve().parents[2]

DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {"x": 1}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "context_guide", "arguments": {}}}


def test_early_responder_answers_recorded_requests_and_hands_over() -> None:
    """Recorded requests are answered with the new id; every line read is handed to the SDK."""
    discover_key = request_key(DISCOVER)
    assert discover_key is not None
    answers = {discover_key[0]: '{"ok":true}'}
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    responder = EarlyResponder(in_read, out_write, answers)
    responder.start()
    os.write(in_write, line(DISCOVER) + line(LIST) + line(CALL))
    reply = os.read(out_read, 4096)
    handoff = responder.handoff()
    assert json.loads(reply) == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    assert handoff.answered == {"1"}
    assert b"".join(handoff.lines) + handoff.rest == line(DISCOVER) + line(LIST) + line(CALL)
    for fd in (in_read, in_write, out_read, out_write):
        os.close(fd)


def test_recorder_drops_duplicates_and_records_new_answers(tmp_path: Path) -> None:
    """The SDK's answer to an early-answered id is dropped; a new cacheable answer is saved."""
    path = tmp_path / "warm-start.json"
    handoff = Handoff(answered={"1"}, sent={"1": "{}"}, pending={"1": "server/discover {}"})
    recorder = handoff.recorder(path, "stamp", {"server/discover {}": "{}"})
    recorder.note_request(peek(json.dumps(LIST)))
    assert recorder.filter(peek('{"jsonrpc":"2.0","id":1,"result":{}}\n')) is False
    assert recorder.filter(peek('{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}\n')) is True
    recorder.save()
    list_key = request_key(LIST)
    assert list_key is not None
    assert load_answers(path, "stamp")[list_key[0]] == '{"tools":[]}'
    assert load_answers(path, "other build") == {}


async def test_second_start_is_answered_identically(tmp_path: Path) -> None:
    """After one run records its answers, the next run gives the same tools/list and still serves calls."""
    params = server_params(tmp_path, cache=tmp_path / "cache")
    listings = []
    for _ in range(2):
        with trio.fail_after(60):
            async with Client(params) as client:
                listings.append((await client.list_tools()).tools)
                result = await client.call_tool("context_guide", {})
                assert not result.is_error
    assert (tmp_path / "cache" / "ctxtrio" / "warm-start.json").exists()
    assert listings[0] == listings[1]


def test_legacy_handshake_survives_handoff(tmp_path: Path) -> None:
    """initialize answered early still reaches the SDK, so a later tools/call is served."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    script = line(initialize) + line(initialized) + line(LIST) + line(CALL)
    outputs = []
    for _ in range(2):
        run = subprocess.run(
            server_command(tmp_path),
            input=script,
            capture_output=True,
            cwd=ROOT,
            timeout=60,
            check=True,
            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        )
        replies = [json.loads(line) for line in run.stdout.splitlines()]
        assert [reply["id"] for reply in replies] == [0, 2, 3]
        assert "error" not in replies[2] and not replies[2]["result"].get("isError")
        outputs.append(replies[:2])
    assert outputs[0] == outputs[1]


def _tools_list(request_id: int, version: str, client: str | None = None) -> dict[str, object]:
    """A ``tools/list`` request of a 2026-style client: the version (and who it is) in ``_meta``."""
    meta: dict[str, object] = {"io.modelcontextprotocol/protocolVersion": version}
    if client is not None:
        meta["io.modelcontextprotocol/clientInfo"] = {"name": client}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {"_meta": meta}}


def test_keys_ignore_who_the_client_is() -> None:
    """Two hosts that differ only in their clientInfo share one recorded answer."""
    lm_studio = _tools_list(1, "2026-07-28", "LM Studio")
    claude = _tools_list(9, "2026-07-28", "Claude")
    older = _tools_list(9, "2025-11-25")
    first, second, third = request_key(lm_studio), request_key(claude), request_key(older)
    assert first is not None and second is not None and third is not None
    assert first[0] == second[0] != third[0]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A private copy of the package to run the servers from.

    The recording is stamped with every source file's size and mtime (answers.fingerprint),
    so an edit, checkout or rebase of the working tree while a test runs would make a later
    server of the same test ignore what an earlier one recorded.
    """
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "ctxtrio", copy / "ctxtrio", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_fresh_data_dir_starts_warm(tmp_path: Path, source: Path) -> None:
    """Answers recorded with one data dir serve the first requests of another, before the SDK loads.

    The requests are in the pipe before the second server starts, so how many the early
    responder answers does not depend on the machine's speed (with a live client on a
    loaded machine the SDK sometimes loaded before tools/list was sent: 1 answered, not 2).
    """
    first = _run_legacy(tmp_path, source, data="one")
    second = _run_legacy(tmp_path, source, data="two")
    assert b"warm start: answered" not in first.stderr
    assert b"warm start: answered 2 request(s)" in second.stderr
    assert second.stdout.splitlines()[:2] == first.stdout.splitlines()[:2]  # the same answers, sent early


def _run_legacy(tmp_path: Path, source: Path, *flags: str, data: str = "data") -> subprocess.CompletedProcess[bytes]:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    script = (
        line(initialize) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + line(LIST) + line(CALL)
    )
    return subprocess.run(
        server_command(tmp_path / data, *flags),
        input=script,
        capture_output=True,
        cwd=source,
        timeout=300,  # a hang guard
        check=True,
        env={**os.environ, "PYTHONPATH": str(source), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )


def test_a_wrong_recording_is_noticed_and_dropped(tmp_path: Path, source: Path) -> None:
    """An early answer the SDK contradicts is logged, and the recording no longer holds it."""
    _run_legacy(tmp_path, source)
    path = tmp_path / "cache" / "ctxtrio" / "warm-start.json"
    data = json.loads(path.read_text())
    list_keys = [key for key in data["answers"] if key.endswith("tools/list {}")]
    assert len(list_keys) == 1 and " => initialize " not in list_keys[0] and list_keys[0].startswith("initialize ")
    wrong = json.loads(data["answers"][list_keys[0]])
    wrong["tools"] = wrong["tools"][:3]
    data["answers"][list_keys[0]] = json.dumps(wrong)
    path.write_text(json.dumps(data))
    run = _run_legacy(tmp_path, source)
    assert b"differs from the SDK's; dropping the recording" in run.stderr
    assert len(json.loads(run.stdout.splitlines()[1])["result"]["tools"]) == 3  # sent once, early
    assert list_keys[0] not in json.loads(path.read_text())["answers"]
    third = _run_legacy(tmp_path, source)
    assert len(json.loads(third.stdout.splitlines()[1])["result"]["tools"]) == 15


def test_switched_off_it_neither_answers_nor_records(tmp_path: Path, source: Path) -> None:
    """--no-warm-start: no recording is written, so nothing can be answered early either."""
    for _ in range(2):
        run = _run_legacy(tmp_path, source, "--no-warm-start")
        assert b"warm start: answered" not in run.stderr
    assert not (tmp_path / "cache" / "ctxtrio" / "warm-start.json").exists()


def test_malformed_recordings_are_ignored(tmp_path: Path) -> None:
    """A recording whose answers do not have the SDK's result shape is not used at all."""
    path = tmp_path / "warm-start.json"
    good = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "ctxtrio", "version": "1"}}
    for answers in (
        {"initialize {}": json.dumps(good), "initialize {} => tools/list {}": "[]"},
        {"initialize {}": json.dumps({**good, "serverInfo": {"name": "other"}})},
        {"initialize {}": "{not json"},
        {"initialize {} => tools/list {}": json.dumps({"tools": [{"name": "x"}]})},
    ):
        path.write_text(json.dumps({"fingerprint": "s", "answers": answers}))
        assert load_answers(path, "s") == {}
    path.write_text(json.dumps({"fingerprint": "s", "answers": {"initialize {}": json.dumps(good)}}))
    assert load_answers(path, "s") == {"initialize {}": json.dumps(good, separators=(",", ":"))}


def test_fingerprint_follows_the_schema_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """A different pydantic-core (which writes every schema the SDK sends) changes the stamp."""
    import importlib.metadata

    from ctxtrio.transport.answers import fingerprint

    before = fingerprint("s")
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.0.1" if name == "pydantic-core" else real(name))
    assert fingerprint("s") != before


def test_tools_list_is_keyed_by_its_initialize() -> None:
    """The same tools/list after two different initialize requests has two keys."""
    first, second = request_key(LIST, 'initialize {"protocolVersion":"2025-06-18"}'), request_key(LIST, "initialize {}")
    assert first is not None and second is not None and first[0] != second[0]
