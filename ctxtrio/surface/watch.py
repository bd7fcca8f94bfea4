"""Change notifications from the data dir: which resources changed, and when the list did.

One task polls the data dir every :data:`INTERVAL_S` with a few ``stat`` calls (in a
worker thread): the document catalog, the sessions folder, and the journal of each
subscribed session. Because it reads the files, not this process's own calls, it sees
the changes of every process sharing the data dir (another server, the ``ctxtrio`` CLI)
the same way as its own, within one interval:

* a document re-ingested (new generation) or forgotten: ``updated`` for its subscribed
  URIs (``ctxtrio://docs/{id}`` and its chunk ranges);
* a subscribed session's journal grew or was replaced (append, pin, compact, delete):
  ``updated`` for ``ctxtrio://sessions/{id}``;
* a document or session journal appeared or went away: ``list_changed``.

What a subscriber is promised is every change after its subscription. Documents are
compared with the catalog's version at the last look, one for all subscribers, so a
change after a subscription is always after that version. A session journal is only
stat'ed while someone watches it, so its first stamp is taken at the subscription
(:meth:`Journals.promise`, awaited before the subscription is acknowledged), not by the
next look: an append in between would otherwise be that look's baseline, never announced.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import trio

from .._errors import CtxError
from ..docs.repository import CATALOG_NAME
from .complete import session_ids
from .resources import ResourceRef, parse_uri

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from .._wiring import Wiring
    from ..store.layout import DataDir

__all__ = ["INTERVAL_S", "Journals", "Subscribers", "watch"]

log = logging.getLogger("ctxtrio.surface")

#: How often the data dir is looked at: a change is announced within about this long.
INTERVAL_S = 0.25

_Stamp = tuple[int, int, int] | None  # (inode, size, mtime_ns) or missing


class Subscribers(Protocol):
    """Who is told (implemented at the SDK boundary)."""

    def watched(self) -> frozenset[str]:
        """The URIs some client subscribed to."""
        ...

    async def updated(self, uri: str) -> None: ...
    async def list_changed(self) -> None: ...


@dataclass
class _Seen:
    catalog: _Stamp = None
    #: The current documents (kept up to date from the catalog's changes, not listed at each look).
    docs: set[str] | None = None
    version: int = 0
    folder: _Stamp = None
    sessions: frozenset[str] | None = None


def _stamp(path: Path) -> _Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _stamps(
    catalog: Path, folder: Path, journals: Iterable[tuple[str, Path]]
) -> tuple[_Stamp, _Stamp, dict[str, _Stamp]]:
    return _stamp(catalog), _stamp(folder), _stamp_all(journals)


class Journals:
    """The last stamp of each watched session journal: what the next look compares with.

    A session comes in when it is subscribed to (:meth:`promise`, with its stamp then) and
    goes when a look finds nobody watching it. Shared by the watcher and the subscriptions.
    """

    def __init__(self, data: DataDir) -> None:
        self._data = data
        self.stamps: dict[str, _Stamp] = {}

    async def promise(self, uris: Iterable[str]) -> None:
        """Stamp the journals of the sessions among ``uris`` not stamped yet (in a worker thread).

        Await it after the subscription is registered and before it is acknowledged: every change
        after the acknowledgement then differs from a stamp the watcher holds. (Registered first, so
        no look that finds the session unwatched drops the stamp; a look meanwhile that stamped the
        session itself keeps its own, taken no earlier.) Cancelled, the journals stay unstamped.
        """
        idents = sorted({ref.ident for uri in uris if (ref := parse_uri(uri)) is not None and ref.kind == "session"})
        fresh = [(ident, self._data.session_journal(ident)) for ident in idents if ident not in self.stamps]
        if not fresh:
            return
        found = await trio.to_thread.run_sync(_stamp_all, fresh)
        for ident, stamp in found.items():
            self.stamps.setdefault(ident, stamp)

    def looked(self, stamps: dict[str, _Stamp], watched: Iterable[str]) -> set[str]:
        """Take a look's ``stamps`` in; the sessions whose journal changed since their last stamp.

        A session watched now (``watched``, read after the look's awaits) that the look did not stat
        (subscribed while it ran) keeps the stamp it was promised with; one nobody watches is dropped.
        """
        before = self.stamps
        changed = {ident for ident, stamp in stamps.items() if ident in before and before[ident] != stamp}
        kept = {ident: before[ident] for ident in watched if ident in before and ident not in stamps}
        self.stamps = kept | stamps
        return changed


def _stamp_all(journals: Iterable[tuple[str, Path]]) -> dict[str, _Stamp]:
    return {ident: _stamp(path) for ident, path in journals}


async def watch(
    ctx: Wiring,
    subscribers: Subscribers,
    journals: Journals,
    *,
    interval_s: float = INTERVAL_S,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Announce changes to ``subscribers`` until cancelled (started once the first look is taken)."""
    seen = _Seen()
    failing = await _safe_look(ctx, subscribers, seen, journals, announce=False, failing=False)
    task_status.started()
    while True:
        await trio.sleep(interval_s)
        failing = await _safe_look(ctx, subscribers, seen, journals, announce=True, failing=failing)


async def _safe_look(
    ctx: Wiring, subscribers: Subscribers, seen: _Seen, journals: Journals, *, announce: bool, failing: bool
) -> bool:
    """One look; a store that cannot be read now (damaged catalog, locked index) is said once
    and looked at again next time: notifications pause, the server serves on. True while failing."""
    try:
        await _look(ctx, subscribers, seen, journals, announce=announce)
    except CtxError as exc:
        if not failing:
            log.warning("change notifications paused: %s", exc)
        return True
    if failing:
        log.info("change notifications resumed")
    return False


def _watched(subscribers: Subscribers) -> dict[str, ResourceRef]:
    """The URIs subscribed to now, each parsed (those that do not parse are never announced)."""
    return {uri: ref for uri in subscribers.watched() if (ref := parse_uri(uri)) is not None}


def _sessions(watched: dict[str, ResourceRef]) -> set[str]:
    return {ref.ident for ref in watched.values() if ref.kind == "session"}


async def _look(ctx: Wiring, subscribers: Subscribers, seen: _Seen, journals: Journals, *, announce: bool) -> None:
    paths = [(ident, ctx.data.session_journal(ident)) for ident in sorted(_sessions(_watched(subscribers)))]
    catalog, folder, stamps = await trio.to_thread.run_sync(
        _stamps, ctx.data.docs / CATALOG_NAME, ctx.data.sessions, paths
    )
    listing = False
    changed_docs: set[str] = set()
    if catalog != seen.catalog or seen.docs is None:
        # The catalog's own change log: no listing of every document at each look (under cProfile, 19% of the
        # event loop's time in 1,758 ingests went to sorting and comparing them; then 3-5 s a minute building
        # and comparing sets of 20,000 ids, stress/busy_search.py): only the documents changed since.
        version, changed, current, everything = await ctx.documents.changes(None if seen.docs is None else seen.version)
        seen.catalog = catalog  # only once read: a failed read is tried again next time
        if seen.docs is not None or announce:
            # (None on an announcing look: the first look failed, so there is no baseline from the watcher's start;
            # every change the catalog's state recorded is announced, and the list said changed, rather than none.)
            changed_docs = set(changed)
        if everything is not None:
            listing = seen.docs != everything if seen.docs is not None else announce
            seen.docs = set(everything)
        elif seen.docs is not None:
            listing = any((doc in seen.docs) != (doc in current) for doc in changed)
            seen.docs.difference_update(changed)
            seen.docs.update(current)
        seen.version = version
    if folder != seen.folder or seen.sessions is None:
        sessions = frozenset(await trio.to_thread.run_sync(session_ids, ctx.data.sessions))
        seen.folder = folder
        listing = listing or ((seen.sessions is not None or announce) and sessions != seen.sessions)
        seen.sessions = sessions
    # Who is told is read now, after the look's awaits, not at its start: a client that subscribed meanwhile (a
    # listen stream opened, then a re-ingest, while the stat waited for a core) hears of the change this look
    # found. Before, it was left out, and the change, taken into ``seen``, was never announced to it.
    watched = _watched(subscribers)
    changed_sessions = journals.looked(stamps, _sessions(watched))
    if not announce:
        return
    for uri, ref in sorted(watched.items(), key=lambda item: item[0]):
        if (ref.kind in ("doc", "chunks") and ref.ident in changed_docs) or (
            ref.kind == "session" and ref.ident in changed_sessions
        ):
            await subscribers.updated(uri)
    if listing:
        await subscribers.list_changed()
