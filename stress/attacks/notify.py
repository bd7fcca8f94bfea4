"""Change notifications promised at subscription: a change made at once after it, through a real stdio server.

A subscriber is promised every change after its subscription is acknowledged, whatever the
watcher (ctxtrio/surface/watch.py, a look every 0.25 s) had looked at. Each row subscribes,
then at once, before the server's watcher can look again, changes what it subscribed to from
another process (this one, on the same data dir: as a second server or the ``ctxtrio`` CLI
would), and waits up to :data:`WAIT_S` for the notification:

* a session appended to, compacted, deleted, restored, and one that does not exist yet created
  (``resources/subscribe`` on a handshake connection);
* a session appended to under a 2026-07-28 ``subscriptions/listen`` stream;
* a document id that does not exist yet ingested, and an existing one replaced.

The in-process twins on virtual time are tests/surface/test_watch.py (each session change) and
tests/surface/test_notify.py::test_a_session_changed_right_after_a_subscription_is_announced.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

STRESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(STRESS.parent))

from mcp import Client  # noqa: E402
from mcp.types import EmptyResult, ResourceUpdatedNotification, SubscribeRequest, SubscribeRequestParams  # noqa: E402

from attacks import Row, guarded, stdio_params  # noqa: E402
from ctxtrio._app import open_context  # noqa: E402
from ctxtrio._config import Config  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio._context import Context

#: How long a row waits for its notification (the watcher looks every 0.25 s).
WAIT_S = 10.0


class _Updates:
    """The URIs of the resources/updated notifications a handshake client received."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._arrived = trio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self._arrived.set()
            self._arrived = trio.Event()

    async def wait_for(self, uri: str) -> bool:
        with trio.move_on_after(WAIT_S):
            while uri not in self.uris:
                await self._arrived.wait()
            return True
        return False


async def _three(other: Context) -> None:
    for text in ("one", "two", "three"):
        await other.sessions.append("work", text)


async def _deleted(other: Context) -> None:
    await _three(other)
    await other.sessions.delete_session("work")


async def _none(other: Context) -> None:
    pass


async def _doc(other: Context) -> None:
    await other.documents.ingest(text="version one", doc_id="spec")


#: fault -> (the URI, what is there before the subscription, the change right after it).
_Change = tuple[str, Callable[["Context"], Awaitable[None]], Callable[["Context"], Awaitable[object]]]
CHANGES: dict[str, _Change] = {
    "session appended to": ("ctxtrio://sessions/work", _three, lambda o: o.sessions.append("work", "four")),
    "session compacted": ("ctxtrio://sessions/work", _three, lambda o: o.sessions.compact("work", keep_recent=1)),
    "session deleted": ("ctxtrio://sessions/work", _three, lambda o: o.sessions.delete_session("work")),
    "session restored": ("ctxtrio://sessions/work", _deleted, lambda o: o.sessions.restore_session("work")),
    "session created": ("ctxtrio://sessions/work", _none, lambda o: o.sessions.append("work", "born")),
    "document created": ("ctxtrio://docs/spec", _none, lambda o: o.documents.ingest(text="new", doc_id="spec")),
    "document replaced": ("ctxtrio://docs/spec", _doc, lambda o: o.documents.ingest(text="two", doc_id="spec")),
}


def _config(data: Path) -> Config:
    return Config(data_dir=data, llm_enabled=False, audit=False)


async def _subscribed(work: Path, name: str) -> Row:
    uri, before, change = CHANGES[name]
    data = work / name.replace(" ", "-")
    async with open_context(_config(data)) as other:
        await before(other)
        updates = _Updates()
        with trio.fail_after(60):
            async with Client(stdio_params(data), mode="legacy", message_handler=updates) as client:
                await client.session.send_request(SubscribeRequest(params=SubscribeRequestParams(uri=uri)), EmptyResult)
                await change(other)
                told = await updates.wait_for(uri)
    return Row(
        f"{name} by another process right after resources/subscribe (stdio)",
        f"resources/updated for {uri} within {WAIT_S:g} s",
        "told" if told else f"not told in {WAIT_S:g} s (told: {updates.uris or 'nothing'})",
        told,
    )


async def _listened(work: Path) -> Row:
    data = work / "listen"
    async with open_context(_config(data)) as other:
        await _three(other)
        with trio.fail_after(60):
            async with (
                Client(stdio_params(data)) as client,
                client.listen(resource_subscriptions=["ctxtrio://sessions/work"]) as stream,
            ):
                await other.sessions.append("work", "four")
                event: object = None
                with trio.move_on_after(WAIT_S):
                    event = await stream.__anext__()
    told = type(event).__name__ == "ResourceUpdated"
    return Row(
        "session appended to by another process right after subscriptions/listen (stdio, 2026-07-28)",
        f"ResourceUpdated on the stream within {WAIT_S:g} s",
        "told" if told else f"not told in {WAIT_S:g} s (got {type(event).__name__})",
        told,
    )


async def _all(work: Path) -> list[Row]:
    rows: list[Row] = []
    for name in CHANGES:
        rows += await guarded(name, partial(_subscribed, work, name), 90)
    rows += await guarded("listen", partial(_listened, work), 90)
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_all, work)
