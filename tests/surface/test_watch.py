"""The watcher (ctxtrio/surface/watch.py) against its Subscribers seam: who is told of a change a look finds."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.surface import watch as watching
from ctxtrio.surface.watch import watch

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

URI = "ctxtrio://docs/spec"


class Told:
    """Subscribers as a test holds them: the URIs subscribed to, and what the watcher told, in order."""

    def __init__(self) -> None:
        self.uris: set[str] = set()
        self.told: list[str] = []

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
    told = Told()
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, trio.open_nursery() as nursery:
        await ctx.documents.ingest(text="one", doc_id="spec")
        stamps, meanwhile = watching._stamps, list[str]()

        def stamps_after_a_subscription(*args: object) -> object:
            if not meanwhile:  # the next look, once
                meanwhile.append(URI)
                told.uris.add(URI)
                trio.from_thread.run(partial(ctx.documents.ingest, text="two", doc_id="spec"))
            return stamps(*args)  # type: ignore[arg-type]  # (the look's own arguments, passed on)

        await nursery.start(partial(watch, ctx, told, interval_s=1.0))  # (its first look: what is there)
        monkeypatch.setattr(watching, "_stamps", stamps_after_a_subscription)
        await trio.sleep(3.5)  # three looks: the one the subscription and the re-ingest came during, two more
        nursery.cancel_scope.cancel()
    assert meanwhile and told.told == [URI]
