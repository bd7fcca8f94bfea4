"""What a server start imports and collects before it can take a document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

ROOT = Path(__file__).resolve().parents[1]

_INGEST = {"name": "doc_ingest", "arguments": {"doc_id": "a", "text": "the first words of a document " * 4}}
_SEARCH = {"name": "doc_search", "arguments": {"query": "first words"}}
_MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": _INGEST},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": _SEARCH},
]


def _serve_importing(tmp_path: Path, *flags: str) -> set[str]:
    """Serve the messages above over stdio under ``-X importtime``; the modules the server imported."""
    result = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "ctxtrio",
            "--no-audit",
            "--data-dir",
            str(tmp_path / "data"),
            *flags,
        ],
        input="".join(json.dumps(message) + "\n" for message in _MESSAGES),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    answers = {message["id"]: message for message in map(json.loads, result.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4]
    assert not answers[3]["result"]["isError"] and not answers[4]["result"]["isError"]
    # "import time: self [us] | cumulative | imported package", the name indented by depth
    return {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize(
    ("flags", "imported"),
    [(["--no-llm"], False), (["--llm", "--llm-base-url", "http://127.0.0.1:9/v1"], True)],
    ids=["no-llm", "llm"],
)
def test_the_llm_client_is_imported_only_when_an_llm_is_configured(
    tmp_path: Path, flags: list[str], imported: bool
) -> None:
    """A --no-llm server ingests and searches without importing httpx (~0.1 CPU-s); with an LLM it imports it."""
    modules = _serve_importing(tmp_path, *flags)
    assert "ctxtrio.llm.summarizer" in modules
    assert ("httpx" in modules) is imported
    assert ("ctxtrio.llm.client" in modules) is imported


_COLLECTIONS = """
import gc, sys
import trio
events = []
gc.callbacks.append(lambda phase, info: phase == "start" and events.append(("collect", info["generation"])))
freeze = gc.freeze
gc.freeze = lambda: (events.append(("freeze", gc.isenabled())), freeze())[-1]
trio.run = lambda *args, **kwargs: events.append(("run", gc.isenabled()))
from ctxtrio._cli import main
events.clear()
code = main(["--no-llm", "--no-audit", "--no-warm-start", "--data-dir", sys.argv[1]])
print(code, events, gc.isenabled())
"""


def test_a_server_start_collects_nothing_before_it_freezes_what_it_imported(tmp_path: Path) -> None:
    """From main() to serving no collection runs (a full one cost 0.10-0.13 CPU-s); freeze, then the collector is on."""
    result = subprocess.run(
        [sys.executable, "-c", _COLLECTIONS, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert result.stdout.strip() == "0 [('freeze', False), ('run', True)] True"


_FROZEN = """
import gc, sys
from ctxtrio.docs.catalog import DocEntry
frozen = []
freeze = gc.freeze
gc.freeze = lambda: (frozen.append(sum(isinstance(o, DocEntry) for o in gc.get_objects())), freeze())[-1]
from ctxtrio._cli import main
code = main(["--no-llm", "--no-audit", "--no-warm-start", "--data-dir", sys.argv[1]])
print(code, frozen)
"""


async def test_a_server_hides_the_catalog_it_replayed_at_its_start_from_the_collector(tmp_path: Path) -> None:
    """Serving a data dir of 30 documents freezes twice: the imports (no catalog yet), then, once the catalog is
    replayed, its 30 entries with the rest (full passes walked 85,000 such objects at 20,000 documents)."""
    from ctxtrio import Config, open_context

    async with open_context(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx:
        for n in range(30):
            await ctx.documents.ingest(text=f"document number {n}", doc_id=f"d{n}")
    assert await _printed(_FROZEN, tmp_path / "data") == "0 [0, 30]"  # (stdin empty: the server starts and stops)


_LIBRARY = """
import gc, os, sys, trio
from ctxtrio import Config, serve
read, write = os.pipe()
os.close(write)  # stdin at its end: the server starts, reads it and stops
trio.run(lambda: serve(Config(data_dir=sys.argv[1], llm_enabled=False, audit=False, warm_start=False), stdin_fd=read))
print(gc.get_freeze_count())
"""


async def test_a_library_serve_leaves_the_callers_collector_alone(tmp_path: Path) -> None:
    """``ctxtrio.serve`` in a program of the caller's own freezes nothing (frozen, the program's own objects would
    never be collected); only the ``ctxtrio`` command, whose process is the server's alone, freezes its start."""
    assert await _printed(_LIBRARY, tmp_path / "data") == "0"


async def _printed(script: str, data: Path) -> str:
    """What ``script`` prints, run by a fresh interpreter on this tree with ``data`` as its argument and empty stdin."""
    with trio.fail_after(120):
        result = await trio.run_process(
            [sys.executable, "-c", script, str(data)],
            capture_stdout=True,
            capture_stderr=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=b"",
        )
    return result.stdout.decode().strip()
