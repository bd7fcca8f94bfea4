"""The doc_* tools through the SDK's in-memory client: schemas, arguments, results, progress, sandbox."""

from __future__ import annotations

import json
import os
import random
import re
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import trio
from mcp import Client

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.text.chunking import chunk_document
from ctxtrio.text.tokens import TokenModel
from ctxtrio.tools.documents import DOC_TOOLS
from testkit.results import text_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

FIXTURES = Path(__file__).resolve().parents[1] / "text" / "fixtures"


@asynccontextmanager
async def client_for(tmp_path: Path, root: Path | None = None) -> AsyncIterator[Client]:
    roots = (root,) if root is not None else ()
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, ingest_roots=roots)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        yield client


async def test_tool_list_is_small_and_annotated(tmp_path: Path) -> None:
    """The seven doc tools show a model at most 3,200 characters of tools/list; annotations, titles, output schemas."""
    async with client_for(tmp_path) as client:
        tools = [tool for tool in (await client.list_tools()).tools if tool.name.startswith("doc_")]
        assert sorted(tool.name for tool in tools) == sorted(DOC_TOOLS)
        # What a host shows the model: everything but the outputSchema (see test_tool_list.py).
        dumped = [
            tool.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"output_schema"}) for tool in tools
        ]
        assert len(json.dumps(dumped, separators=(",", ":"))) <= 3200
        for tool in tools:
            assert tool.title and tool.annotations is not None
            assert tool.annotations.open_world_hint is False
            # Writers say idempotentHint only when true (the protocol's default is false).
            assert tool.annotations.read_only_hint or tool.name in {"doc_ingest", "doc_window", "doc_forget"}
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            assert "title" not in tool.input_schema
        window = next(tool for tool in tools if tool.name == "doc_window")
        assert set(window.input_schema["properties"]) == {
            "doc_id",
            "from",
            "to",
            "budget_tokens",
            "reset",
            "session_id",
        }


async def test_from_and_to_through_the_client(tmp_path: Path) -> None:
    """``{"from": 2, "to": 3}`` reaches the window; to < from is an error result the model can read."""
    text = "\n\n".join(f"# Part {n}\n\n" + "word " * 400 for n in range(8))
    async with client_for(tmp_path) as client:
        await client.call_tool("doc_ingest", {"text": text, "doc_id": "d"})
        result = await client.call_tool("doc_window", {"doc_id": "d", "from": 2, "to": 3, "budget_tokens": 100000})
        assert not result.is_error
        assert result.structured_content is not None and result.structured_content["chunks"] == [2, 3]
        assert "[#2 · Part 2]" in text_of(result)
        bad = await client.call_tool("doc_window", {"doc_id": "d", "from": 3, "to": 1})
        assert bad.is_error and text_of(bad) == "Error: to=1 is before from=3; to is the last chunk to include"
        outline = await client.call_tool("doc_outline", {"doc_id": "d", "from": 6})
        assert text_of(outline).splitlines()[1].startswith("#6")


async def test_fifty_concurrent_ingests_are_listed_and_searchable(tmp_path: Path) -> None:
    """50 ingests at once: every document listed with its chunk count, and its unique phrase found."""
    rng = random.Random(5)
    words = [f"w{n}" for n in range(400)]
    texts = {
        f"doc{n:02d}": f"# Doc {n}\n\n"
        + "\n\n".join(" ".join(rng.choices(words, k=60)) for _ in range(rng.randint(5, 40)))
        + f"\n\nThe marker uniq{n}phrase appears once.\n"
        for n in range(50)
    }
    async with client_for(tmp_path) as client:
        async with trio.open_nursery() as nursery:
            for doc_id, text in texts.items():
                nursery.start_soon(client.call_tool, "doc_ingest", {"text": text, "doc_id": doc_id})
        listed = await client.call_tool("doc_list", {})
        lines = {line.split(" ")[1]: line for line in text_of(listed).splitlines()[1:]}
        model_chunks = {
            doc_id: len(chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=TokenModel.cold()))
            for doc_id, text in texts.items()
        }
        assert set(lines) == set(texts)
        for doc_id, count in model_chunks.items():
            assert f": {count} chunks," in lines[doc_id]
        for n, doc_id in enumerate(texts):
            found = await client.call_tool("doc_search", {"query": f"uniq{n}phrase", "limit": 3})
            assert found.structured_content is not None
            assert found.structured_content["hits"][0]["doc_id"] == doc_id


async def test_ingest_reports_progress_when_asked(tmp_path: Path) -> None:
    """With a progress token, a large ingest reports increasing progress up to the total."""
    text = "\n\n".join(f"Line {n} with some words in it to fill the chunk." for n in range(40_000))
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with client_for(tmp_path) as client:
        result = await client.call_tool("doc_ingest", {"text": text, "doc_id": "big"}, progress_callback=on_progress)
        assert not result.is_error
    assert len(seen) >= 2
    assert [progress for progress, _ in seen] == sorted(progress for progress, _ in seen)
    assert seen[-1] == (len(text), len(text))


async def test_sandbox_refusals_reach_the_model_and_the_canary_is_untouched(tmp_path: Path) -> None:
    """A symlink out of the root is an error result; the file it points to is never read."""
    root = tmp_path / "root"
    root.mkdir()
    canary = tmp_path / "canary.txt"
    canary.write_text("secret\n")
    past = time.time() - 86_400 * 3
    os.utime(canary, (past, time.time()))  # atime older than mtime: any read would update it
    (root / "link.txt").symlink_to(canary)
    (root / "ok.md").write_bytes((FIXTURES / "korean.txt").read_bytes())
    async with client_for(tmp_path, root) as client:
        for path in ("link.txt", str(canary), "../canary.txt"):
            result = await client.call_tool("doc_ingest", {"file_path": path})
            assert result.is_error and "outside the ingest roots" in text_of(result)
        ok = await client.call_tool("doc_ingest", {"file_path": "ok.md", "doc_id": "k"})
        assert not ok.is_error and 'k "ok.md"' in text_of(ok)
    assert os.stat(canary).st_atime == past


async def test_errors_are_results(tmp_path: Path) -> None:
    """Unknown documents and bad ids come back as error results, not protocol errors."""
    async with client_for(tmp_path) as client:
        missing = await client.call_tool("doc_search", {"query": "x", "doc_id": "nope"})
        assert missing.is_error and "no document 'nope'" in text_of(missing)
        bad = await client.call_tool("doc_forget", {"doc_id": "../etc"})
        assert bad.is_error and "invalid doc_id" in text_of(bad)
        empty = await client.call_tool("doc_list", {})
        assert text_of(empty) == "No documents. Add one with doc_ingest."


async def test_doc_list_pages_within_the_budget(tmp_path: Path) -> None:
    """doc_list shows a page that fits the budget and names where the next page starts."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, budget_tokens=100)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for n in range(10):
            await client.call_tool("doc_ingest", {"text": f"document {n} text", "doc_id": f"d{n}", "title": f"doc {n}"})
        seen: list[str] = []
        start = 0
        for _ in range(10):
            listed = await client.call_tool("doc_list", {"from": start})
            text = text_of(listed)
            assert ctx.live.tokens.current.estimate(text) <= 100 and listed.structured_content is not None
            seen += [str(doc_id) for doc_id in listed.structured_content["doc_ids"]]
            if listed.structured_content["next_offset"] is None:
                break
            start = int(listed.structured_content["next_offset"])
            assert text.endswith(f"(next page: doc_list from={start}, {10 - start} more)")
        assert seen == [f"d{n}" for n in range(10)]


async def test_outline_one_liners_of_wrapped_prose_are_one_line_each(tmp_path: Path) -> None:
    """doc_outline summarize=true: a chunk's extractive line of prose wrapped over several lines is one line."""
    git_doc = "As an example, suppose you are trying to find the commit that broke a\nfeature that was known to work"
    text = "\n\n".join(f"# Part {n}\n\n{git_doc} in version {n}.\n\n" + "word " * 400 for n in range(3))
    async with client_for(tmp_path) as client:
        await client.call_tool("doc_ingest", {"text": text, "doc_id": "d"})
        outline = await client.call_tool("doc_outline", {"doc_id": "d", "summarize": True})
        lines = text_of(outline).splitlines()
        assert [re.sub(r"\[\d+\]", "[N]", line) for line in lines[1:-1]] == [
            f"#{n} [N] Part {n}: As an example, suppose you are trying to find the commit that broke a feature"
            f" that was known to work in version {n}."
            for n in range(3)
        ]
        assert lines[-1] == "Note: no LLM configured; extractive"
