"""The watcher (ctxtrio/surface/watch.py) against its Subscribers seam: who is told of a change a look finds."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._errors import StoreError
from ctxtrio._wiring import open_wiring
from ctxtrio.surface import watch as watching
from ctxtrio.surface.watch import Journals, watch

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from ctxtrio._wiring import Wiring

URI = "ctxtrio://docs/spec"
SESSION = "ctxtrio://sessions/work"


class Told:
    """Subscribers as a test holds them: the URIs subscribed to, and what the watcher told, in order.

    :meth:`subscribe` does what ctxtrio._sdk.events.Hub does for resources/subscribe and subscriptions/listen:
    registers the URI, then awaits the watcher's promise, then (the caller) acknowledges."""

    def __init__(self, journals: Journals) -> None:
        self.journals = journals
        self.uris: set[str] = set()
        self.told: list[str] = []

    async def subscribe(self, uri: str) -> None:
        self.uris.add(uri)
        await self.journals.promise([uri])

    def watched(self) -> frozenset[str]:
        return frozenset(self.uris)

    async def updated(self, uri: str) -> None:
        self.told.append(uri)

    async def list_changed(self) -> None:
        self.told.append("list_changed")


async def test_a_client_that_subscribes_while_a_look_runs_hears_of_the_change_it_finds(
    tmp_path: Path, clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscription (a listen stream opened), then a re-ingest, both while a look stats the files in its thread (a
    wait for a core on a loaded machine): that look tells the new subscriber. Before, it told only the subscribers
    read at its start, and the change, taken into what it had seen, was never announced (test_notify's HTTP listen
    stream waited 20 s for it, 2 runs of 3 with each look 0.15 s slower)."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, trio.open_nursery() as nursery:
        told = Told(Journals(ctx.data))
        await ctx.documents.ingest(text="one", doc_id="spec")
        stamps, meanwhile = watching._stamps, list[str]()

        def stamps_after_a_subscription(*args: object) -> object:
            if not meanwhile:  # the next look, once
                meanwhile.append(URI)
                told.uris.add(URI)
                trio.from_thread.run(partial(ctx.documents.ingest, text="two", doc_id="spec"))
            return stamps(*args)  # type: ignore[arg-type]  # (the look's own arguments, passed on)

        await nursery.start(partial(watch, ctx, told, told.journals, interval_s=1.0))  # (its first look: what is there)
        monkeypatch.setattr(watching, "_stamps", stamps_after_a_subscription)
        await trio.sleep(3.5)  # three looks: the one the subscription and the re-ingest came during, two more
        nursery.cancel_scope.cancel()
    assert meanwhile and told.told == [URI]


async def _entries(ctx: Wiring) -> list[str]:
    """Three entries in session "work" (enough to compact); their ids."""
    return [(await ctx.sessions.append("work", text)).entry.id for text in ("one", "two", "three")]


async def _deleted(ctx: Wiring) -> list[str]:
    ids = await _entries(ctx)
    await ctx.sessions.delete_session("work")
    return ids


async def _nothing(ctx: Wiring) -> list[str]:
    return []


#: (what is there before the subscription, the change made after it and before the watcher's next look).
CHANGES: dict[
    str, tuple[Callable[[Wiring], Awaitable[list[str]]], Callable[[Wiring, list[str]], Awaitable[object]]]
] = {
    "append": (_entries, lambda ctx, ids: ctx.sessions.append("work", "four")),
    "pin": (_entries, lambda ctx, ids: ctx.sessions.update("work", ids[0], pinned=True)),
    "compact": (_entries, lambda ctx, ids: ctx.sessions.compact("work", keep_recent=1)),
    "delete": (_entries, lambda ctx, ids: ctx.sessions.delete_session("work")),
    "restore": (_deleted, lambda ctx, ids: ctx.sessions.restore_session("work")),
    "prune": (_deleted, lambda ctx, ids: ctx.sessions.prune(0.0)),
    "create": (_nothing, lambda ctx, ids: ctx.sessions.append("work", "born")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_session_changed_after_its_subscription_and_before_the_next_look_is_announced(
    tmp_path: Path, clock: trio.testing.MockClock, change: str
) -> None:
    """Subscribed, then changed (append, pin, compact, delete, restore, prune, created) while the watcher sleeps: its
    next look announces it. Before, that look stat'ed the journal for the first time, as its baseline, and the change
    was never announced."""
    before, after = CHANGES[change]
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, trio.open_nursery() as nursery:
        told = Told(Journals(ctx.data))
        ids = await before(ctx)
        await nursery.start(partial(watch, ctx, told, told.journals, interval_s=1.0))
        await told.subscribe(SESSION)
        looked = trio.current_time()
        await after(ctx, ids)
        assert trio.current_time() == looked  # no look in between: the held clock stood still
        await trio.sleep(2.5)  # two looks
        nursery.cancel_scope.cancel()
    assert [uri for uri in told.told if uri != "list_changed"] == [SESSION]


async def test_a_session_subscribed_to_while_a_look_runs_keeps_the_stamp_it_was_promised(
    tmp_path: Path, clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscription (its stamp taken) and then an append, both while a look that did not watch the session yet stats
    in its thread: that look keeps the promised stamp, and the next one announces the append (a look that replaced the
    stamps with its own lost it, and the next look took the appended journal as its baseline)."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, trio.open_nursery() as nursery:
        told = Told(Journals(ctx.data))
        await ctx.sessions.append("work", "one")
        stamps, meanwhile = watching._stamps, list[str]()

        def stamps_after_a_subscription(*args: object) -> object:
            if not meanwhile:  # the next look, once
                meanwhile.append(SESSION)
                trio.from_thread.run(partial(told.subscribe, SESSION))
                trio.from_thread.run(partial(ctx.sessions.append, "work", "two"))
            return stamps(*args)  # type: ignore[arg-type]  # (the look's own arguments, passed on)

        await nursery.start(partial(watch, ctx, told, told.journals, interval_s=1.0))
        monkeypatch.setattr(watching, "_stamps", stamps_after_a_subscription)
        await trio.sleep(3.5)  # the look the subscription came during, two more
        nursery.cancel_scope.cancel()
    assert meanwhile and told.told == [SESSION]


async def test_a_document_changed_while_the_first_look_could_not_read_the_catalog_is_announced(
    tmp_path: Path, clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's first look fails (catalog unreadable), a client subscribes, the document is replaced, the catalog
    reads again: the first look that reads it announces the change. Before, that look took the catalog as its first
    baseline, as a first look does, and told nothing."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, trio.open_nursery() as nursery:
        told = Told(Journals(ctx.data))
        await ctx.documents.ingest(text="one", doc_id="spec")
        real, broken = ctx.documents.changes, [True]

        async def unreadable_at_first(
            since: int | None,
        ) -> tuple[int, list[str], frozenset[str], frozenset[str] | None]:
            if broken:
                raise StoreError("catalog unreadable (test)")
            return await real(since)

        monkeypatch.setattr(ctx.documents, "changes", unreadable_at_first)
        await nursery.start(partial(watch, ctx, told, told.journals, interval_s=1.0))
        await told.subscribe(URI)
        await ctx.documents.ingest(text="two", doc_id="spec")
        await trio.sleep(1.5)  # a look that fails again
        broken.clear()
        await trio.sleep(2)  # two looks that read
        nursery.cancel_scope.cancel()
    assert told.told.count(URI) == 1
