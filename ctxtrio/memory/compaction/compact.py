"""Compacting a session: :class:`CompactionMethods`, the ``compact`` of the session service.

Compaction runs the summarizer without holding the session lock, so recalls and
appends continue meanwhile; it then re-checks its plan, and writes its summary only if
the journal still ends where that check read it, decided under the journal's OS lock
(``StoreHandle.append_if``): two processes never both fold the same entries. What it
folds and writes is planned in :mod:`.plan`; a stand-in whose LLM summary finished later
is swapped at the start of the next compaction (:mod:`.finishing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import InputError
from ..._limits import COMPACT_TARGET, KEEP_RECENT, check_range
from ...llm.summarizer import Wait, to_the_end
from ...store.results import JournalChangedError
from ..model import CompactResult
from ..sessions.store import same_state
from ..status import DEFAULT_KEEP_RECENT, DEFAULT_TARGET_TOKENS, session_status
from .finishing import pending_summaries, replacement_records, still_pending
from .plan import (
    entries_extract,
    folded_meanwhile,
    memo_of,
    nothing_folded,
    plan_compaction,
    still_foldable,
    summary_record,
    summary_tokens,
)
from .slices import SliceFile

if TYPE_CHECKING:
    from ...llm.summarizer import Summarizer
    from ..sessions.repository import LoadedSession
    from ..sessions.store import SessionStore

__all__ = ["COMPACT_WRITE_TRIES", "MERGED_NOTE", "CompactionMethods"]

#: Times a compaction re-reads and re-checks after other processes appended meanwhile.
COMPACT_WRITE_TRIES = 20
#: Why a compaction that merges earlier summaries is extractive although an LLM is configured.
MERGED_NOTE = (
    "extractive, decisions first: a compaction that merges earlier summaries is written from all their entries, "
    "which is not asked of the LLM (it would summarize the whole session each time)"
)


class CompactionMethods:
    """Compaction: methods of :class:`~ctxtrio.memory.service.SessionService`."""

    _sessions: SessionStore
    _summarizer: Summarizer

    async def compact(
        self,
        session_id: str,
        *,
        keep_recent: int = DEFAULT_KEEP_RECENT,
        target_tokens: int = DEFAULT_TARGET_TOKENS,
        dry_run: bool = False,
        reason: str | None = None,
        wait: Wait = to_the_end,
    ) -> CompactResult:
        """Fold old live entries into one summary entry (the originals are superseded, not deleted).

        ``wait`` is how the summarizer's work is waited for (the caller's cancel scope
        around it; default: until done): past its deadline the summary is extractive.
        ``dry_run`` only reports what would be folded.

        Cancelled once the fold is queued to the store, it may still land: a later call
        sees it, and a compaction planned before it landed is refused with InputError
        ("the session changed while compacting ...") whose hint is "retry": the hint words the one instruction
        (tools/advice: "call context_compact again", the CLI: "run it again"; the message said "compact again" too).
        """
        check_range("keep_recent", keep_recent, KEEP_RECENT)
        check_range("target_tokens", target_tokens, COMPACT_TARGET)
        with self._sessions.use(session_id) as session:
            return await self._compact(session, keep_recent, target_tokens, dry_run, reason, wait)

    async def _compact(
        self,
        session: LoadedSession,
        keep_recent: int,
        target_tokens: int,
        dry_run: bool,
        reason: str | None,
        wait: Wait,
    ) -> CompactResult:
        waited_from = None
        if session.compact_lock.locked():  # another compaction of this session runs: name what it folds below
            async with session.lock:
                waited_from = len(session.state) if session.state is not None else None
        async with session.compact_lock:
            slices = SliceFile(session.path)
            finished: list[tuple[str, str]] = []
            if not dry_run and self._summarizer.uses_llm:
                await slices.load()
                finished = await self._finish_pending(session, slices)
            async with session.lock:
                state = await self._sessions.sync(session, same_state)
                plan = plan_compaction(state, keep_recent)
                why = reason or (
                    f"requested at {state.live_tokens}/{self._sessions.live.budget_tokens} tokens, keep_recent={keep_recent}"
                )
                if dry_run or not plan.folded:
                    meanwhile = "" if plan.folded or waited_from is None else folded_meanwhile(state, waited_from)
                    nothing = "" if plan.folded else nothing_folded(plan.candidates, keep_recent)
                    told = "; ".join(said for _, said in finished)
                    note = "; ".join(part for part in (meanwhile, nothing, told) if part)
                    return CompactResult(
                        session.session_id,
                        plan.folded,
                        None,
                        plan.tokens_before,
                        0,
                        "none",
                        note,
                        why,
                        dry_run,
                        session_status(state, self._sessions.live),
                        plan.merged,
                    )
            extract = entries_extract(plan, self._sessions.live.tokens.current, memo_of(state))
            merging = bool(plan.merged) and self._summarizer.uses_llm
            if merging:
                # A merge folds every entry the earlier summaries folded: an LLM summary of them all would be
                # a job over the whole session at each compaction. The decisions-first extract instead.
                summary = await self._summarizer.extractive(
                    plan.text, target_tokens=target_tokens, whole_extract=extract, note=MERGED_NOTE
                )
            else:
                summary = await self._summarizer.summarize(
                    plan.text,
                    target_tokens=target_tokens,
                    cache=slices if self._summarizer.uses_llm else None,
                    whole_extract=extract,
                    wait=wait,
                )
            text = summary.text.strip() or plan.text  # an empty summary would lose everything folded
            async with session.lock:
                for _ in range(COMPACT_WRITE_TRIES):
                    state = await self._sessions.sync(session, same_state)
                    if not still_foldable(state, plan):
                        raise InputError(
                            "the session changed while compacting (an entry was pinned, deleted, restored or folded meanwhile)",
                            hint="retry",
                        )
                    tokens_after = summary_tokens(state, plan, text, self._sessions.live.tokens.current)
                    record = summary_record(
                        plan, text=text, method=summary.method, reason=why, tokens_after=tokens_after
                    )
                    try:
                        # Decided on the journal as read up to applied_offset; the store
                        # writes only if no process appended since (checked under its lock).
                        result = await self._sessions.handle.append_if(
                            session.path, [record], expect_end=state.applied_offset
                        )
                    except JournalChangedError:
                        continue  # re-read what another process wrote, and decide again
                    break
                else:
                    raise InputError("other processes kept writing to this session while compacting", hint="retry")
                state = await self._sessions.absorb(session, result)
                item = state.items[result.records[-1].id]
            if summary.method in ("extractive", "llm+extractive") and self._summarizer.uses_llm and not merging:
                await slices.mark_pending(item.id, target_tokens)  # the next compact swaps in the LLM summary
            for summary_id in plan.merged:  # retired: an LLM summary of it would replace nothing now
                if summary_id in slices.pending:
                    await slices.mark_done(summary_id)
            if not slices.pending:
                await slices.clear()
            told = "; ".join(said for summary_id, said in finished if summary_id not in plan.merged)
            note = "; ".join(part for part in (summary.note, told) if part)
            return CompactResult(
                session.session_id,
                item.folds,
                item.snapshot(),
                plan.tokens_before,
                item.tokens,
                summary.method,
                note,
                why,
                False,
                session_status(state, self._sessions.live),
                plan.merged,
            )

    async def _finish_pending(self, session: LoadedSession, slices: SliceFile) -> list[tuple[str, str]]:
        """Swap in the LLM summaries finished since their compactions wrote stand-ins; say which, by stand-in id
        (one this compaction then merges is not said to be swapped in later: it is retired).

        Never waits for the LLM: a summary still being worked on stays pending (and its job
        is queued again if none runs, as after a restart). A summary the LLM could not
        write (answers rejected) waits no more: its stand-in stays, and the note says so.
        """
        if not slices.pending:
            return []  # nothing waits (the common case): no journal sync, the compaction does its own
        store, model = self._sessions.handle, self._sessions.live.tokens.current
        async with session.lock:
            state = await self._sessions.sync(session, same_state)
            found, gone = pending_summaries(state, slices.pending)
        for summary_id in gone:
            await slices.mark_done(summary_id)
        said: list[tuple[str, str]] = []
        for pending in found:
            done = await self._summarizer.resume(pending.plan.text, target_tokens=pending.target_tokens, cache=slices)
            if done is None:  # still going on in the background, or waiting for the LLM to answer again
                # Said: the call that wrote the stand-in said "call again", and a call that then hears only
                # "nothing to fold" reads as if the LLM summary was dropped.
                said.append(
                    (
                        pending.summary_id,
                        f"the LLM summary of {pending.summary_id} is not done yet: compact again later to swap it in",
                    )
                )
                continue
            if done.method == "llm":
                async with session.lock:
                    state = await self._sessions.sync(session, same_state)
                    if still_pending(state, pending):
                        tokens = summary_tokens(state, pending.plan, done.text, model)
                        records = replacement_records(pending, text=done.text, tokens_after=tokens)
                        try:
                            result = await store.append_if(session.path, records, expect_end=state.applied_offset)
                        except JournalChangedError:
                            continue  # another process wrote meanwhile: the next compact tries again
                        await self._sessions.absorb(session, result)
                        replaced = f"the LLM summary of {pending.summary_id} is done and replaced it as {result.records[-1].id}"
                        said.append((pending.summary_id, replaced))
            else:  # the call that wrote the stand-in said "call again to get it": the answer is no
                stays = f"the LLM could not summarize what {pending.summary_id} folds ({done.note}): it stays as it is"
                said.append((pending.summary_id, stays))
            await slices.mark_done(pending.summary_id)
        return said
