"""Semantic recall's vectors on the real server: a text already embedded is not sent again.

Every attack runs ``python -m ctxtrio --embed-model`` (stdio, through the SDK client) against
the fake embeddings endpoint of the tests served on loopback, which counts the texts it is
sent: a document edited and ingested again, a vectors file written by a newer rows layout,
and a vector cut short in the file (a damaged page). Each server is bounded (60 s).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import trio

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


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("edited", lambda: edited(work)),
        ("newer rows", lambda: newer_rows(work)),
        ("cut short", lambda: cut_short(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 150))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
