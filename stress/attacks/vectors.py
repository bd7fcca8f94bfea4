"""Semantic recall's vectors on the real server: a text already embedded is not sent again.

Every attack runs ``python -m ctxtrio --embed-model`` (stdio, through the SDK client) against
the fake embeddings endpoint of the tests served on loopback, which counts the texts it is
sent: a document edited and ingested again, a vectors file written by a newer rows layout,
a vector cut short in the file (a damaged page), and a table rule llama.cpp's llama-server
answers HTTP 500 "input is too large to process" to (``testkit/fake_embeddings.TOO_LARGE``),
with the server answering and then failing every input. Each server is bounded (60 s).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import trio

from ctxtrio.store.vector_task import RETRY_REFUSED
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings

from . import Row, guarded
from . import stdio_server as _server
from ._store_kit import TEXT, call, guide_says

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from mcp import Client

#: A manual's shape: sections under headings (a long text with none is cut into chunks by size,
#: so an edit moves the cuts after it and their texts change: those are sent again).
MANUAL = "# Quolls\n\n" + "\n\n".join(
    f"## Quoll {n}\n\n" + " ".join(f"Quoll number {n} was seen {k} times near the creek." for k in range(8))
    for n in range(40)
)
EDITED = MANUAL.replace("Quoll number 30 was seen 3 times", "Quoll number 30 was seen 3 times, edited since,")


async def _settled(client: Client, fake: FakeEmbeddings) -> bool:
    """Caught up, with every chunk embedded, and no request for 2 s (the line may be of a pass
    that began before the last change: the embedder is woken by it and looks at least every 5 s)."""
    while True:
        if not await guide_says(client, "caught up"):
            return False
        seen = len(fake.requests)
        await trio.sleep(6.0)
        if len(fake.requests) == seen and await guide_says(client, "caught up"):
            return True


async def edited(work: Path) -> Row:
    fault = "a manual of 40 sections edited in one line and ingested again (doc_ingest, same doc_id)"
    expected = "only the chunk holding the edit sends texts (its passages are cut again); the rest keep their vectors"
    fake = FakeEmbeddings()
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        async with _server(work / "v1", "--embed-model", fake.model, "--embed-base-url", url) as client:
            await call(client, "doc_ingest", text=MANUAL, doc_id="q")
            first = await _settled(client, fake)
            sent = len(fake.embedded)
            await call(client, "doc_ingest", text=EDITED, doc_id="q")
            await trio.sleep(1.0)
            again = await _settled(client, fake)
            resent = fake.embedded[sent:]
            ok, said = await call(client, "doc_search", query="quoll number 30 edited since")
        nursery.cancel_scope.cancel()
    edit = [one for one in resent if "edited since" in one]
    trails = {one.partition("\n")[0] for one in resent}
    return Row(
        fault,
        expected,
        f"first ingest: {sent} texts; after the edit: {len(resent)} sent ({len(edit)} with the edit), "
        f"of chunks led by {sorted(trails)}; search finds it: {ok and 'edited since' in said}",
        first and again and len(edit) == 1 and len(trails) == 1 and len(resent) < sent / 10 and ok,
    )


async def _restarted(work: Path, name: str, change: Callable[[Path], None]) -> tuple[bool, int, list[str], bool]:
    """Ingest TEXT with semantic recall, stop, ``change`` the vectors file, start again: (caught up
    both times, texts sent first, texts sent after the restart, search answered)."""
    fake = FakeEmbeddings()
    data = work / name
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        embed = ("--embed-model", fake.model, "--embed-base-url", url)
        async with _server(data, *embed) as client:
            await call(client, "doc_ingest", text=TEXT, doc_id="q")
            first = await _settled(client, fake)
        sent = len(fake.embedded)
        change(data / "vectors.sqlite3")
        async with _server(data, *embed) as client:
            again = await _settled(client, fake)
            resent = fake.embedded[sent:]
            ok, said = await call(client, "doc_search", query="quoll number 412")
        nursery.cancel_scope.cancel()
    return first and again, sent, resent, ok and "412" in said


def _changed(statement: str) -> Callable[[Path], None]:
    """A change of the vectors file at ``path``: one SQL statement, committed."""

    def change(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute(statement)
        conn.commit()
        conn.close()

    return change


async def newer_rows(work: Path) -> Row:
    caught_up, sent, again, answered = await _restarted(work, "v2", _changed("PRAGMA user_version = 99"))
    return Row(
        "vectors file of another rows layout (user_version 99), server started again",
        "rows made again from the journals; no text sent again",
        f"first: {sent} texts; after the restart: {len(again)} sent; caught up: {caught_up}; search: {answered}",
        caught_up and sent > 0 and again == [] and answered,
    )


async def cut_short(work: Path) -> Row:
    caught_up, sent, again, answered = await _restarted(
        work, "v3", _changed("UPDATE texts SET vec = x'0000803f' WHERE rowid = (SELECT min(rowid) FROM texts)")
    )
    return Row(
        "one stored vector cut to 4 bytes (a damaged page), server started again",
        "never scanned; that one text is sent again (its chunk's other texts are still held), no other",
        f"first: {sent} texts; after the restart: {len(again)} sent; caught up: {caught_up}; search: {answered}",
        caught_up and len(again) == 1 and answered,
    )


#: A psql table (``\\pset border 2``) as a note or a manual section holds it: its rule is one token a
#: character for a BERT model. ctxtrio cuts its parts to 512 tokens (text/wordpiece.py), llama-server's default
#: physical batch; a server started with a smaller one (``--ubatch-size 256``) refuses them.
RULE = "+" + "+".join(["-" * 10] * 60) + "+"
TABLE = f"{RULE}\n| 1 | spotted | 12 |\n{RULE}"
UBATCH = 256


@dataclass
class Crashing(FakeEmbeddings):
    """While ``crashed``, HTTP 500 to every input, as a server whose model cannot run."""

    crashed: bool = False

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.crashed:
            return httpx.Response(
                500, json={"error": {"code": 500, "message": "model crashed", "type": "server_error"}}
            )
        return await super()._handle(request)


async def semantic_lines(client: Client) -> tuple[str, str]:
    """context_guide's two semantic recall lines: the chunks', the session entries'."""
    _, said = await call(client, "context_guide")
    lines = said.splitlines()
    chunks = next((line for line in lines if line.startswith("- semantic recall:")), "")
    entries = next((line for line in lines if line.startswith("- session entries by meaning:")), "")
    return chunks, entries


async def settled_or_none(client: Client, fake: FakeEmbeddings) -> tuple[str, str] | None:
    """Both lines caught up with every chunk and entry embedded or refused, and no request for 6 s (40 s
    at most: the server has 60); None if not."""
    with trio.move_on_after(40):
        while True:
            chunks, entries = (line.removesuffix(f"; {RETRY_REFUSED}") for line in await semantic_lines(client))
            counts = re.search(r"([\d,]+) of ([\d,]+) chunks? embedded(?:, (\d+) refused)?", chunks)
            whole = counts is not None and int(counts[1]) + int(counts[3] or 0) == int(counts[2]) > 0
            if whole and chunks.endswith("; caught up") and entries.endswith("; caught up"):
                seen = len(fake.requests) + len(fake.refusals)
                await trio.sleep(6.0)
                if len(fake.requests) + len(fake.refusals) == seen:
                    return chunks, entries
            await trio.sleep(0.5)
    return None


async def fill(client: Client) -> None:
    """A manual of 40 sections, section 7 holding TABLE, and 40 notes, note 7 TABLE."""
    manual = MANUAL.replace("## Quoll 7\n\n", f"## Quoll 7\n\n{TABLE}\n\n")
    await call(client, "doc_ingest", text=manual, doc_id="q")
    for n in range(40):
        await call(client, "context_append", session_id="s", text=TABLE if n == 7 else f"Quoll {n} nests by the creek.")


def counts(lines: tuple[str, str] | None) -> str:
    """What the two lines say was embedded and refused ("not caught up" for None)."""
    if lines is None:
        return "not caught up"
    plain = (line.removesuffix(f"; {RETRY_REFUSED}") for line in lines)
    chunks, entries = (re.sub(r"; caught up$", "", line).rpartition("; ")[2] for line in plain)
    return f"{chunks}; entries: {entries.removeprefix('- session entries by meaning: ')}"


def _refused_once(lines: tuple[str, str] | None) -> bool:
    return lines is not None and all(", 1 refused by the endpoint; caught up" in line for line in lines)


async def too_large(work: Path) -> Row:
    fake = FakeEmbeddings(ubatch_tokens=UBATCH)
    data = work / "v4"
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        embed = ("--embed-model", fake.model, "--embed-base-url", url)
        async with _server(data, *embed) as client:
            await fill(client)
            first = await settled_or_none(client, fake)
        sent = len(fake.embedded)
        async with _server(data, *embed) as client:
            again = await settled_or_none(client, fake)
            resent = fake.embedded[sent:]
            ok, said = await call(client, "doc_search", query="quoll 39 seen near the creek")
        nursery.cancel_scope.cancel()
    table = sum(RULE[:60] in one for one in fake.embedded)
    return Row(
        "a psql table (661-character rules) in a manual section and a note; the endpoint answers llama-server's "
        "HTTP 500 'input (N tokens) is too large to process' to it (--ubatch-size 256); server started again",
        "that chunk and that note refused, every other one embedded; after the restart nothing sent again",
        f"{counts(first)}; after the restart: {len(resent)} sent; search: {ok and '39' in said}",
        _refused_once(first) and _refused_once(again) and resent == [] and table == 0 and ok,
    )


async def crashing(work: Path) -> Row:
    fake = Crashing(ubatch_tokens=UBATCH, crashed=True)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        async with _server(work / "v5", "--embed-model", fake.model, "--embed-base-url", url) as client:
            await fill(client)
            await trio.sleep(8.0)
            paused = await semantic_lines(client)
            fake.crashed = False
            done = await settled_or_none(client, fake)
        nursery.cancel_scope.cancel()
    held = all("refused by" not in line and "endpoint unreachable" in line for line in paused)
    return Row(
        "the same, the endpoint answering HTTP 500 to every input (the one-word probe too) for 8 s, then working",
        "embedding paused, nothing refused; then the table's chunk and note refused, every other one embedded",
        f"while failing: {'paused, 0 refused' if held else paused}; then: {counts(done)}",
        held and _refused_once(done),
    )


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("edited", lambda: edited(work)),
        ("newer rows", lambda: newer_rows(work)),
        ("cut short", lambda: cut_short(work)),
        ("too large", lambda: too_large(work)),
        ("crashing", lambda: crashing(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 150))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
