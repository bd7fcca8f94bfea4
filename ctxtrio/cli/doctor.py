"""``doctor``: is the data dir healthy, is the search index in step, are the LLM and embedding endpoints there?

Read-only unless ``--repair``: nothing is written to the data dir, no file created, healed or
migrated, and SQLite leaves nothing beside the index and vectors files (``store/read_only.py``),
also while a server on the same data dir writes them (its commits are read). ``--repair`` rebuilds the index rows of every current document
from its journal (through the store writer, one journal at a time, so servers on the
same data dir keep searching) and drops rows of journals that no longer exist, and
drops vectors of such journals or of another embedding model (``cli/embeddings.py``).
The LLM checks use the client's own probes (models, tokenize, context length); a
stopped server is one line, and a warning: the model server is optional (summaries are
then extractive). Exit 0 when nothing is BAD; ``--strict`` makes a warning fail too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, StoreError
from ..llm.client import open_llm_client
from ..llm.messages import LLMSettings
from ..llm.models import chat_model_among, embedding_models_among
from ..store.index_errors import IndexBusyError, IndexDamagedError
from ..store.layout import not_a_directory
from ..text.plural import plural
from .aside import free_space, set_aside
from .embeddings import check_embeddings, check_session_vectors, probe_dimension
from .library import open_library
from .output import emit_json, say

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping

    from .._config import Config
    from .._wiring import Wiring
    from .commands import Command

__all__ = ["ARGUMENTS", "COMMANDS"]

#: Per-request timeout of the endpoint checks: a person is waiting.
LLM_CHECK_TIMEOUT_S = 10.0
_SAMPLE = "Hello, world"
#: Pauses before the index is looked at again while it differs from the journals. A server on the data dir
#: indexes what it appended after acknowledging it (store/writer.py), so beside one ingesting, a document
#: committed a moment ago is not indexed yet: 6 of 20 plain doctors said BAD on 05e17c6 (/tmp/mend16/race.py).
#: A gap no server fills (one killed between a journal's fsync and its index commit) stays: BAD after ~4 s.
INDEX_RECHECK_S = (0.25, 0.5, 1.0, 2.0)


@dataclass(slots=True)
class Report:
    """Checks in order: (area, ok, one line); ``facts`` for --json."""

    lines: list[tuple[str, bool, str]] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)
    #: Areas whose line is a warning: shown as ``warn``, not failing the exit code.
    warned: set[str] = field(default_factory=set)

    def add(self, area: str, ok: bool, line: str, *, warn: bool = False) -> None:
        self.lines.append((area, ok, line))
        if warn:
            self.warned.add(area)


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild the search index from the journals, mend the vectors files, and forget the embedding "
        "endpoint's refusals so that they are sent again (after raising llama-server's --ubatch-size, say)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too (a model server that is not there)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


async def doctor_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    report = Report()
    root = config.data_dir.expanduser().absolute()
    if args.repair or await trio.to_thread.run_sync(root.is_dir):
        await _store(config, args, stop, report)
    elif (what := await trio.to_thread.run_sync(not_a_directory, root)) is not None:  # (it said 'does not exist')
        report.add("data dir", False, f"{root} is {what}: nothing can be stored there (--data-dir names it)")
    else:  # plain doctor creates nothing: a fresh install's data dir, or a mistyped --data-dir
        line = f"{root} does not exist: nothing is stored there (a server's first start or doctor --repair creates it)"
        report.add("data dir", True, line, warn=True)
    if config.llm_enabled:
        await _llm(config, report)
    else:
        report.add("llm", True, "off (--no-llm / CTX_LLM_ENABLED=false): summaries are extractive")
    healthy = all(ok for _, ok, _ in report.lines) and not (args.strict and report.warned)
    if args.json:
        emit_json(
            {
                "ok": healthy,
                **report.facts,
                "warnings": sorted(report.warned),
                "checks": [
                    {"area": a, "ok": ok, "warn": a in report.warned, "detail": line} for a, ok, line in report.lines
                ],
            }
        )
    else:
        for area, ok, line in report.lines:
            say(f"{'warn' if area in report.warned else 'ok ' if ok else 'BAD'} {area}: {line}")
    return 0 if healthy else 1


async def _store(config: Config, args: argparse.Namespace, stop: trio.CancelScope, report: Report) -> None:
    """The data dir, journals, index, vectors and what was set aside (read-only unless --repair)."""
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        report.add("data dir", *await trio.to_thread.run_sync(free_space, ctx.data))
        await _sessions(ctx, report)
        current = await _documents(ctx, report)
        try:
            await _index(ctx, report, repair=args.repair)
        except IndexDamagedError as exc:  # (plain doctor: --repair, as a server's start, heals it)
            report.add("index", False, f"{exc}: ctxtrio doctor --repair rebuilds it from the journals")
        except IndexBusyError:  # (--repair: a server held the write lock past WRITE_BUSY_S when it opened)
            line = "another process (a server writing it) held the search index's write lock: run doctor --repair again"
            report.add("index", False, line)
        except StoreError as exc:
            report.add("index", False, str(exc))
        await _embeddings(config, ctx, report, current, repair=args.repair)
        aside = await trio.to_thread.run_sync(set_aside, ctx.data)
        for found in aside:
            report.add(found.area, True, "; ".join([found.summary, *found.details]), warn=True)
        report.facts["set_aside"] = {
            found.area: {"files": found.files, "summary": found.summary, "shown": list(found.details)}
            for found in aside
        }


async def _embeddings(config: Config, ctx: Wiring, report: Report, current: Mapping[str, int], *, repair: bool) -> None:
    """The chunks' vectors, then the session entries' (one probe of the endpoint for both)."""
    if not config.embed_model:
        report.add("embeddings", True, "off (no --embed-model): search is by keywords only")
        return
    probed = await probe_dimension(config)
    for area, key, (ok, line, facts) in (
        ("embeddings", "embeddings", await check_embeddings(config, ctx, current, probed, repair=repair)),
        ("session vectors", "session_vectors", await check_session_vectors(config, ctx, probed[0], repair=repair)),
    ):
        report.add(area, ok, line)
        if facts is not None:
            report.facts[key] = facts


async def _sessions(ctx: Wiring, report: Report) -> None:
    check = await ctx.sessions.check_journals()
    report.facts["sessions"] = {"count": check.sessions, "deleted": check.deleted, "records": check.records}
    damage = _damage(check.torn, check.malformed, copied=not ctx.store.read_only)
    report.add(
        "sessions",
        not damage,
        f"{check.sessions} ({check.deleted} deleted), {plural(check.records, 'record')}; journals {damage or 'ok'}",
    )


def _damage(torn: int, malformed: int, *, copied: bool) -> str:
    parts = []
    if torn:
        parts.append(f"{torn} with a torn last line (a crash mid-write; skipped, healed by the next append)")
    if malformed:
        done = "copied to quarantine/ and skipped" if copied else "skipped (a server's read copies them to quarantine/)"
        parts.append(f"{plural(malformed, 'malformed line')}, {done}")
    return "; ".join(parts)


async def _documents(ctx: Wiring, report: Report) -> Mapping[str, int]:
    """Current generation journal name -> chunks the catalog promises."""
    check = await ctx.documents.check_journals()
    missing = [f"{doc_id} has {found:,} of {plural(promised, 'chunk')}" for doc_id, found, promised in check.short]
    damage = "; ".join([_damage(check.torn, check.malformed, copied=not ctx.store.read_only), *missing])
    chunks_total = sum(check.journals.values())
    report.facts["documents"] = {"count": len(check.journals), "chunks": chunks_total}
    report.add(
        "documents",
        not damage.strip("; "),
        f"{len(check.journals)}, {plural(chunks_total, 'chunk')}; journals {damage.strip('; ') or 'ok'}",
    )
    return check.journals


async def _index(ctx: Wiring, report: Report, *, repair: bool) -> None:
    if repair:
        rebuilt = await ctx.documents.rebuild_index()
        report.add(
            "index",
            not rebuilt.behind,
            f"rebuilt {plural(rebuilt.rebuilt, 'document journal')}, dropped {rebuilt.dropped} stale; "
            + (f"{len(rebuilt.behind)} still differ" if rebuilt.behind else "in step"),
        )
        return
    check = await ctx.documents.check_index()
    for pause_s in INDEX_RECHECK_S:  # a server's last batch in flight: its writer indexes it after the ack
        if not (check.behind or check.stale):
            break
        await trio.sleep(pause_s)
        check = await ctx.documents.check_index()
    behind, stale = list(check.behind), list(check.stale)
    report.facts["index"] = {"journals": check.journals, "rows": check.rows, "behind": behind, "stale": stale}
    if behind or stale:
        report.add(
            "index",
            False,
            f"{plural(len(behind), 'document')} not fully indexed, {plural(len(stale), 'stale journal')}: "
            "run ctxtrio doctor --repair",
        )
    else:
        report.add("index", True, f"in step: {plural(check.rows, 'row')} for {plural(check.documents, 'document')}")


async def _llm(config: Config, report: Report) -> None:
    settings = LLMSettings(
        base_url=config.llm_base_url,
        model=config.llm_model,
        api_key=config.llm_api_key,
        timeout_s=min(config.llm_timeout_s, LLM_CHECK_TIMEOUT_S),
        probe_timeout_s=min(config.llm_timeout_s, LLM_CHECK_TIMEOUT_S),
    )
    async with open_llm_client(settings) as llm:
        try:
            models = await llm.list_models()
        except LLMError as exc:
            report.facts["llm"] = {"url": config.llm_base_url, "reachable": False, "error": str(exc)}
            report.add(
                "llm",
                True,
                f"{config.llm_base_url} is not reachable ({exc}); summaries are extractive "
                "until it is: start the model server, fix --llm-base-url, or pass --no-llm",
                warn=True,
            )
            return
        model = config.llm_model or chat_model_among(models)
        if not config.embed_model and (embedding := embedding_models_among(models)):
            # Semantic recall is opt-in (nothing loads beside the user's model unasked), but a
            # server that already serves an embedding model makes it one flag away.
            listed = f"embedding model{'' if len(embedding) == 1 else 's'} {', '.join(embedding[:3])}"
            report.add(
                "embeddings",
                True,
                f"the model server lists {listed}: --embed-model {embedding[0]} (CTX_EMBED_MODEL) "
                "adds search by meaning to keyword search (README: Semantic recall)",
            )
        try:
            tokens = await llm.tokenize(_SAMPLE)
            length = await llm.context_length(model)
            if length is None and llm.tokenize_style == "llama-cpp-python":
                # llama-cpp-python reports no window, but states it when a request overflows
                # (the same probe calibration makes).
                length = await llm.context_from_overflow()
        except LLMError as exc:
            report.add("llm", False, f"{config.llm_base_url} answered /models, then failed: {exc}")
            return
    report.facts["llm"] = {
        "url": config.llm_base_url,
        "reachable": True,
        "model": model,
        "models": models,
        "tokenize": tokens is not None,
        "tokenize_sample": tokens,
        "context_length": length,
    }
    tokenize = (
        f"available ({tokens} tokens for {_SAMPLE!r})"
        if tokens is not None
        else "not offered (counts are calibrated estimates)"
    )
    context = f"{length} tokens" if length is not None else "not reported by this server (set --budget)"
    report.add(
        "llm",
        model is not None,
        f"{config.llm_base_url} reachable; model {model or 'none loaded'}; "
        f"tokenize {tokenize}; context length {context}",
    )


COMMANDS: dict[str, Command] = {"doctor": doctor_command}
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"doctor": _args}
