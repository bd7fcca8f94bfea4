"""``sessions``, ``show``, ``delete``, ``restore`` and ``prune``: sessions as a person sees them."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from ..memory import entry_counts
from ..text.plural import plural
from .library import open_library
from .output import ask, emit_json, err, parse_duration, say, when
from .transfer import export_args, export_command, import_args, import_command

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence

    import trio

    from .._config import Config
    from ..memory.model import Entry
    from .commands import Command

__all__ = ["ARGUMENTS", "COMMANDS"]


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


def _sessions_args(p: argparse.ArgumentParser) -> None:
    _json_flag(p)
    p.add_argument("--deleted", action="store_true", help="include deleted sessions (restorable until prune)")


def _show_args(p: argparse.ArgumentParser) -> None:
    _json_flag(p)
    p.add_argument("session", metavar="SESSION", help="a session id (ctxtrio sessions lists them)")


def _delete_args(p: argparse.ArgumentParser) -> None:
    _json_flag(p)
    p.add_argument("sessions", metavar="SESSION", nargs="+", help="session ids to delete (ctxtrio sessions lists them)")
    p.add_argument("--yes", action="store_true", help="do not ask")


def _restore_args(p: argparse.ArgumentParser) -> None:
    _json_flag(p)
    p.add_argument(
        "sessions",
        metavar="SESSION",
        nargs="+",
        help="deleted session ids to bring back (ctxtrio sessions --deleted lists them)",
    )


def _prune_args(p: argparse.ArgumentParser) -> None:
    _json_flag(p)
    p.add_argument(
        "--older-than",
        metavar="DURATION",
        required=True,
        help="how long ago something must have been deleted or superseded (30d, 12h, 0 for all)",
    )
    p.add_argument("--idle", action="store_true", help="also remove live sessions with no activity within DURATION")
    p.add_argument("--dry-run", action="store_true", help="say what would go; change nothing")
    p.add_argument("--yes", action="store_true", help="do not ask")


async def sessions_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        infos = await ctx.sessions.list_sessions(include_deleted=args.deleted)
    # Newest last record first: the library lists by journal mtime, which an import sets to the import's time.
    infos.sort(key=lambda info: info.last_activity or 0.0, reverse=True)
    if args.json:
        emit_json([asdict(info) for info in infos])
        return 0
    if not infos:
        say("no sessions" + ("" if args.deleted else " (--deleted shows deleted ones)"))
    for info in infos:
        deleted = f"  DELETED {when(info.deleted_at)}" if info.deleted_at is not None else ""
        say(f'{info.session_id}  {info.live_entries} live  last {when(info.last_activity)}  "{info.title}"{deleted}')
    return 0


def _entry_line(entry: Entry, by_id: Mapping[str, Entry]) -> str:
    marks: list[str] = [entry.role]
    if entry.pinned:
        marks.append("pinned")
    marks.extend(f"#{tag}" for tag in entry.tags)
    if entry.status == "superseded":
        marks.append(f"SUPERSEDED by {entry.superseded_by}")
    elif entry.status == "deleted":
        marks.append("DELETED")
    if entry.folds:
        marks.append(_folds_now(entry, by_id))
    text = entry.text if len(entry.text) <= 400 else entry.text[:400] + f"... ({len(entry.text)} chars)"
    text = text.replace("\n", "\n" + " " * 8)  # continuation lines stay under the entry
    return f"{entry.id:>6} {when(entry.ts)} [{' '.join(marks)}] {text}"


def _folds_now(summary: Entry, by_id: Mapping[str, Entry]) -> str:
    """What ``summary`` folds now, and what became of the rest: ``folds e2, e4 (e3 restored; e5 deleted)``.

    ``Entry.folds`` is what the compaction folded (the journal is never rewritten); listed bare, entries
    restored one by one, deleted or folded again read as if the summary still kept them out of recall."""
    fates: dict[str, list[str]] = {}
    for folded_id in summary.folds:
        fates.setdefault(_fate(by_id.get(folded_id), summary.id), []).append(folded_id)
    still = fates.pop("", [])
    if not fates:
        return f"folds {_ids(still)}"
    if not still and len(fates) == 1:
        return f"folded {_ids(summary.folds)} (all {next(iter(fates))})"
    rest = "; ".join(f"{_ids(ids)} {fate}" for fate, ids in fates.items())
    return f"folds {_ids(still)} ({rest})" if still else f"folded {_ids(summary.folds)} ({rest})"


#: Ids listed whole up to this many; past it, the first few and how many more (``--json`` has them all).
_IDS_LISTED = 8
_IDS_FIRST = 5


def _ids(ids: Sequence[str]) -> str:
    """``e2, e3, e4`` or, for a long list, ``e2, e3, e4, e5, e6 and 395 more``: a compaction of 400 entries
    printed 400 ids on its summary's line, which a person scrolls past (user24's sitting)."""
    if len(ids) <= _IDS_LISTED:
        return ", ".join(ids)
    return f"{', '.join(ids[:_IDS_FIRST])} and {len(ids) - _IDS_FIRST} more"


def _fate(entry: Entry | None, summary_id: str) -> str:
    """What became of an entry ``summary_id`` folded: "" while it still folds it."""
    if entry is None:
        return "pruned"
    if entry.still_folded_by(summary_id):
        return ""
    if entry.status == "superseded":
        return f"folded again into {entry.superseded_by}"
    return "restored" if entry.status == "live" else "deleted"


async def show_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        contents = await ctx.sessions.contents(args.session)
    info, entries = contents.info, contents.entries
    if args.json:
        emit_json(
            {
                "session_id": info.session_id,
                "title": info.title,
                "deleted_at": info.deleted_at,
                "entries": [asdict(entry) for entry in entries],
            }
        )
        return 0
    deleted = f", DELETED {when(info.deleted_at)} (ctxtrio restore {info.session_id})" if info.deleted_at else ""
    superseded = sum(entry.status == "superseded" for entry in entries)
    gone = sum(entry.status == "deleted" for entry in entries)
    # Retired summaries counted where context_status counts them, and worded by the same function.
    counts = entry_counts(superseded, gone, contents.retired)
    say(f'{info.session_id} "{info.title}": {info.live_entries} live, {counts}{deleted}')
    by_id = {entry.id: entry for entry in entries}
    for entry in entries:
        say(_entry_line(entry, by_id))
    return 0


async def delete_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    return await _lifecycle(config, args, stop, delete=True)


async def restore_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    return await _lifecycle(config, args, stop, delete=False)


async def _lifecycle(config: Config, args: argparse.Namespace, stop: trio.CancelScope, *, delete: bool) -> int:
    done: list[dict[str, object]] = []
    named = list(dict.fromkeys(args.sessions))  # (one named twice was deleted, and said so, twice)
    async with open_library(config, stop) as ctx:
        # Both check every name first (restore changed the sessions before an unknown one, then failed) and
        # say which changed nothing (the library leaves a deleted session deleted; they said 'deleted' again).
        known = {info.session_id: info for info in await ctx.sessions.list_sessions(include_deleted=True)}
        missing = [sid for sid in named if sid not in known]
        if missing:
            # Worded as show's and export's (the library's message and its hint), quoted: a name is anyone's text.
            quoted = ", ".join(map(repr, missing))
            noun = "session" if len(missing) == 1 else "sessions"
            err(f"ctxtrio: error: no {noun} {quoted}; ctxtrio sessions lists them")
            return 2
        if delete:
            shown = ", ".join(f"{sid} ({known[sid].live_entries} live)" for sid in named)
            if not ask(f"Delete {shown}? Restorable with `ctxtrio restore` until `ctxtrio prune`.", yes=args.yes):
                err("nothing deleted")
                return 1
        for session_id in named:
            change = ctx.sessions.delete_session if delete else ctx.sessions.restore_session
            unchanged = (known[session_id].deleted_at is not None) == delete
            info = await change(session_id)
            done.append(asdict(info))
            if args.json:
                continue
            if unchanged:
                say(f"{session_id} was {'deleted already' if delete else 'not deleted'}")
            else:
                say(
                    f"{'deleted' if delete else 'restored'} {session_id} ({plural(info.live_entries, 'live entry', 'live entries')})"
                )
    if args.json:
        emit_json(done)
    return 0


async def prune_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    older_than_s = parse_duration(args.older_than)
    async with open_library(config, stop) as ctx:
        plans = await ctx.sessions.prune(older_than_s, idle=args.idle, dry_run=True)
        if plans and not args.dry_run and not args.json:
            for plan in plans:
                say(
                    f"will {plan.action} {plan.session_id}: {plural(len(plan.entries), 'entry', 'entries')} ({plan.reason})"
                )
        go = bool(plans) and not args.dry_run and ask(f"Prune {plural(len(plans), 'session')} for good?", yes=args.yes)
        if go:
            plans = await ctx.sessions.prune(older_than_s, idle=args.idle)
    if args.json:
        emit_json({"dry_run": args.dry_run, "pruned": go, "sessions": [asdict(plan) for plan in plans]})
        return 0
    if not plans:
        say("nothing to prune")
    for plan in plans:
        verb = ("removed" if go else "would remove") + plan.action.removeprefix("remove")
        say(f"{verb} {plan.session_id}: {plural(len(plan.entries), 'entry', 'entries')} ({plan.reason})")
    return 0


COMMANDS: dict[str, Command] = {
    "sessions": sessions_command,
    "show": show_command,
    "export": export_command,
    "import": import_command,
    "delete": delete_command,
    "restore": restore_command,
    "prune": prune_command,
}

ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "sessions": _sessions_args,
    "show": _show_args,
    "export": export_args,
    "import": import_args,
    "delete": _delete_args,
    "restore": _restore_args,
    "prune": _prune_args,
}
