"""The README's two worked examples, "How a session actually goes" and "How a document goes", run for real.

    python stress/readme_examples.py

Runs the calls the README shows through the SDK's in-memory client against a fresh data dir
(``--no-llm``, budget 4000, audit off) and prints each call and the tool's text answer as the
README lays them out (of ``doc_window``'s, its head line), so the transcript there can be replaced by this output when the tools'
wording changes. The twelve notes between the third append and ``context_status`` and the
141 KB build log are made up here, deterministically: rerunning prints the same text.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client
from mcp.types import TextContent

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring

SESSION = "refactor-auth"
#: What a long task records between the decisions: test runs and findings.
NOTES = [
    f"test run {n}: {'test_login_cookie' if n % 3 == 0 else 'test_refresh_token'} "
    f"{'failed: expected a Set-Cookie header' if n % 2 else 'passed'} ({40 + n} tests, {n + 2} skipped)"
    for n in range(1, 13)
]


def build_log() -> str:
    """About 141 KB of build output with one OutOfMemoryError near its end."""
    lines: list[str] = []
    for step in range(2900):
        minute, second = divmod(step, 60)
        lines.append(f"2026-12-01T{10 + minute // 60:02d}:{minute % 60:02d}:{second:02d} INFO build step {step} ok")
        if step == 2400:
            lines.append("2026-12-01T11:00:00 ERROR java.lang.OutOfMemoryError: Java heap space in :app:compileKotlin")
    return "\n".join(lines) + "\n"


def _args(arguments: dict[str, object]) -> str:
    return " ".join(f"{key}={json.dumps(value)}" for key, value in arguments.items())


async def _show(
    client: Client, tool: str, arguments: dict[str, object], *, shown: str | None = None, lines: int | None = None
) -> str:
    """Call ``tool`` and print the call (``shown`` in place of long arguments) and its answer (its first ``lines``)."""
    result = await client.call_tool(tool, arguments)
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    print(f"> {tool} {shown if shown is not None else _args(arguments)}".rstrip())
    print(text if lines is None else "\n".join(text.splitlines()[:lines] + ["..."]))
    return text


async def main() -> None:
    config = Config(data_dir=Path(tempfile.mkdtemp(prefix="readme-examples-")), llm_enabled=False, audit=False)
    async with open_wiring(config.validated()) as ctx, Client(build_server(ctx)) as client:
        print("== How a session actually goes")
        await _show(client, "context_open", {"session_id": SESSION, "title": "Replace session cookies with JWT"})
        await _show(
            client,
            "context_append",
            {
                "session_id": SESSION,
                "text": "Goal: replace session cookies with JWT; keep the public API unchanged.",
                "pinned": True,
                "role": "decision",
            },
        )
        await _show(
            client,
            "context_append",
            {"session_id": SESSION, "text": "auth/middleware.ts:42 assumes a cookie is present", "tags": ["finding"]},
        )
        await _show(
            client,
            "context_append",
            {
                "session_id": SESSION,
                "text": "Decision: keep cookie support behind the LEGACY_COOKIES flag for one release",
                "role": "decision",
            },
        )
        for note in NOTES:
            await client.call_tool("context_append", {"session_id": SESSION, "text": note})
        print("  ... twelve more notes from test runs ...")
        await _show(client, "context_status", {"session_id": SESSION})
        await _show(client, "context_compact", {"session_id": SESSION, "keep_recent": 4})
        await _show(
            client, "context_recall", {"session_id": SESSION, "query": "cookie flag decision", "budget_tokens": 300}
        )
        print("\n== How a document goes")
        log = build_log()
        await _show(
            client,
            "doc_ingest",
            {"text": log, "title": "build-failure.log", "doc_id": "build-log"},
            shown=f'text=<{len(log.encode()) // 1000} KB build log> title="build-failure.log" doc_id="build-log"',
        )
        found = await _show(client, "doc_search", {"query": "OutOfMemoryError", "budget_tokens": 300})
        hit = re.search(r"^\[build-log .*? #(\d+)", found, re.M)  # the hit's header, not the head line's hint
        index = int(hit.group(1)) if hit else 0
        await _show(client, "doc_window", {"doc_id": "build-log", "from": max(index - 1, 0), "to": index + 1}, lines=1)


if __name__ == "__main__":
    sys.exit(trio.run(main))
