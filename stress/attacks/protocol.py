"""Protocol attacks on the stdio server: hostile lines, large requests, cancellation, JSON-looking strings.

Each attack spawns ``python -m ctxtrio`` on a fresh data dir, writes its lines to stdin,
closes it, and reads everything the server wrote (60 s at most per spawn).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ctxtrio._limits import SEARCH_WORDS
from testkit.servers import server_command
from testkit.stdio_lines import INITIALIZED, line

from . import Row

ROOT = Path(__file__).resolve().parents[2]

_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "0"}},
}
_TEXT = "\n\n".join(f"Paragraph {i}: the quick brown fox jumps over the lazy dog. " * 4 for i in range(6000))


def _session(work: Path, name: str, lines: list[bytes]) -> tuple[int, list[dict[str, object]], str, float]:
    """Exit code, answers, stderr and seconds for one spawn fed ``lines`` then EOF."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(work / "cache")}
    started = time.perf_counter()
    done = subprocess.run(
        server_command(work / name),
        input=b"".join([line(_INIT), line(INITIALIZED), *lines]),
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, answers, done.stderr.decode(errors="replace"), time.perf_counter() - started


def _answer(answers: list[dict[str, object]], request_id: int) -> dict[str, object] | None:
    return next((message for message in answers if message.get("id") == request_id), None)


def _ok(answer: dict[str, object] | None) -> bool:
    result = answer.get("result") if answer is not None else None
    return isinstance(result, dict) and not result.get("isError")


def _call(request_id: int, tool: str, arguments: dict[str, object], *, id_last: bool = False) -> bytes:
    params = {"name": tool, "arguments": arguments}
    if id_last:
        return line({"method": "tools/call", "params": params, "jsonrpc": "2.0", "id": request_id})
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def hostile_lines(work: Path) -> Row:
    bad_escape = '{"jsonrpc":"2.0","id":"\\x","method":"tools/call","params":{"t":"' + "y" * 70000 + '"}}\n'
    lines = [b"[" * 30000 + b"\n", bad_escape.encode(), line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    code, answers, log, _ = _session(work, "c1", lines)
    held = code == 0 and _ok(_answer(answers, 2)) and "Traceback" not in log
    return Row(
        'C1 stdin line "[" * 30000, then a 70 KB line with a bad escape',
        "parse errors; tools/list still answered; exit 0",
        f"exit {code}, tools/list {'answered' if _ok(_answer(answers, 2)) else 'missing'}",
        held,
    )


def late_id(work: Path) -> Row:
    code, answers, log, _ = _session(work, "w5", [_call(5, "doc_ingest", {"text": _TEXT}, id_last=True)])
    answered = _ok(_answer(answers, 5))
    return Row(
        'W5 2 MB doc_ingest with "id" last, then EOF',
        "in flight at EOF; answered before exit 0",
        f"exit {code}, {'answered' if answered else 'not answered'}; "
        f"{'tracked' if 'stdin closed: 1 request(s)' in log else 'not tracked'}",
        code == 0 and answered and "stdin closed: 1 request(s)" in log,
    )


def cancelled(work: Path) -> Row:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}}
    code, answers, log, seconds = _session(work, "w6", [_call(6, "doc_ingest", {"text": _TEXT}), line(cancel)])
    clean = "stdin closed: 0 request(s)" in log and "still in flight" not in log
    return Row(
        "W6 doc_ingest cancelled by notifications/cancelled, then EOF",
        "nothing in flight at EOF; no answer; exit 0 without the grace wait",
        f"exit {code} after {seconds:.1f} s, {'nothing' if clean else 'something'} in flight, "
        f"{'answered' if _answer(answers, 6) else 'unanswered'}",
        code == 0 and clean and _answer(answers, 6) is None,
    )


def json_strings(work: Path) -> Row:
    document = json.dumps({"service": "auth", "retries": [1, 2, 3]})
    lines = [
        _call(7, "doc_ingest", {"text": document, "title": "null", "doc_id": "123"}),
        _call(8, "doc_ingest", {"text": "null"}),
        _call(9, "doc_search", {"query": "[1]"}),
    ]
    code, answers, _, _ = _session(work, "w7", lines)
    oks = [_ok(_answer(answers, n)) for n in (7, 8, 9)]
    return Row(
        'W7 doc_ingest of a JSON document, title "null", doc_id "123"; text "null"; query "[1]"',
        "all taken as strings",
        f"exit {code}, {sum(oks)} of 3 accepted",
        code == 0 and all(oks),
    )


def lone_surrogate(work: Path) -> Row:
    """An unpaired surrogate escape in a tool argument (a model's broken emoji): JSON to the stdlib, not to the
    SDK's reader, which dropped it unanswered, so the client waited for ever and EOF waited out the grace."""
    lines = [_call(12, "context_append", {"session_id": "s", "text": "broken \ud83d emoji"})]
    code, answers, log, seconds = _session(work, "w8", lines)
    answer = _answer(answers, 12)
    error = answer.get("error") if answer is not None else None
    refused = isinstance(error, dict) and error.get("code") == -32700
    clean = "stdin closed: 0 request(s)" in log and "still in flight" not in log
    return Row(
        'W8 context_append whose text holds "\\ud83d" alone (an unpaired surrogate escape), then EOF',
        "answered -32700 with its id; nothing in flight at EOF; exit 0",
        f"exit {code} after {seconds:.1f} s, {'answered -32700' if refused else f'answer {answer}'}, "
        f"{'nothing' if clean else 'something'} in flight",
        code == 0 and refused and clean and "Traceback" not in log,
    )


def huge_query(work: Path) -> Row:
    """A 400 KB doc_search query of 60,000 distinct words (tests/docs/test_search_words.py
    does the same over a stored document: the lines here run concurrently, a search
    could overtake an ingest sent before it)."""
    query = " ".join(f"word{n}x" for n in range(60_000))
    lines = [_call(11, "doc_search", {"query": "fox " + query, "limit": 5})]
    code, answers, log, seconds = _session(work, "q1", lines)
    answer = _answer(answers, 11)
    result = answer.get("result") if answer is not None else None
    content = result.get("content") if isinstance(result, dict) else None
    text = (
        str(content[0].get("text", ""))
        if isinstance(content, list) and content and isinstance(content[0], dict)
        else ""
    )
    said = f"Only its first {SEARCH_WORDS} distinct words were searched." in text
    return Row(
        "doc_search with a 400 KB query of 60,000 distinct words",
        "answered within seconds from its first words, and says so; the answer does not echo it",
        f"exit {code} after {seconds:.1f} s, {'answered' if _ok(answer) else 'not answered'}, "
        f"{'says so' if said else 'silent'}, answer {len(text):,} characters",
        code == 0 and _ok(answer) and said and len(text) < 50_000 and seconds < 30 and "Traceback" not in log,
    )


def run(work: Path) -> list[Row]:
    return [
        hostile_lines(work),
        late_id(work),
        cancelled(work),
        json_strings(work),
        lone_surrogate(work),
        huge_query(work),
    ]
