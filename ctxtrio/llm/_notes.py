"""The notes a degraded summary carries: how far the LLM work got, and whether calling again helps.

A small model reads these to decide its next call, so each says what goes on after the call
(a background job, a cached step) and what to do: call again, or nothing. Pure: the
summarizer's control flow decides *what* happened; these only word it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..text.plural import plural

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .jobs import Job, SummaryQueue

__all__ = ["notes_in_one", "one_liner_note", "partial_note", "rejected_note"]

_EXTRACTIVE: Final = "; extractive"  # how a one-liner's note ends its reason
_REJECTED: Final = "LLM answer rejected: "


def rejected_note(why: str) -> str:
    """The note of a one-liner whose LLM answer the checks rejected (:func:`notes_in_one` reads it back)."""
    return f"{_REJECTED}{why}{_EXTRACTIVE}"


def one_liner_note(
    key: str, job: Job | None, put_off: Mapping[str, str], *, later: bool, missing: int, reason: str
) -> str:
    """Why the one-liner of step ``key`` is extractive, and whether calling again helps.

    ``put_off``: step key -> why the last job gave it up to ask again (cut off too often)."""
    if later:
        done = job.steps_done if job is not None else 0
        return (
            f"deadline passed; extractive for now. The LLM one-liners go on in the background "
            f"({done} of {missing} done): call again to get them"
        )
    if key in put_off and job is not None and job.failure is None:
        return f"{put_off[key]}; extractive — call again"
    if reason == "deadline passed":
        return f"{reason}; extractive — call again to continue (done one-liners are cached)"
    return f"{reason}; extractive"


def partial_note(job: Job, queue: SummaryQueue, *, done: int, parts: int) -> str:
    """The note of a summary whose ``job`` is unfinished or failed, ``done`` of ``parts`` parts by the LLM."""
    share = f"{done} of {parts} parts by the LLM, the rest extractive" if done else "extractive"
    again = " — call again to continue (finished parts are kept)" if job.durable else ""
    if job.failure is not None:
        return f"{job.failure}; {share}{again}"
    if not queue.running or not job.durable:  # nothing goes on after this call
        return f"deadline passed; {share}{again}"
    if job.steps_total:
        left = max(1, job.steps_total - job.steps_done)
        eta = f", about {left * job.seconds_per_step:.0f} s of work left" if job.seconds_per_step else ""
        progress = f"{job.steps_done} of {job.steps_total} steps done{eta}"
    else:  # not started: the queue works one job at a time ("0 of 0 steps done" said nothing)
        ahead = queue.ahead(job)
        progress = (
            f"queued behind {plural(ahead, 'other summary', 'other summaries', grouped=False)}" if ahead else "starting"
        )
    return (
        f"deadline passed; {share} for now. The LLM summary goes on in the background "
        f"({progress}): call again to get it"
    )


def notes_in_one(notes: Sequence[str]) -> str:
    """The one-liners' notes (each "reason; extractive" and maybe what to do) as one clause: the reasons, the
    rejections' whys in one parenthesis, then "extractive" once with what to do. An outline said "LLM answer
    rejected: ...; extractive; LLM answer rejected: ...; extractive; deadline passed; extractive for now. ..."
    (user23's sitting): "extractive" once per reason, read long by a small model."""
    whys: list[str] = []
    reasons: list[str] = []
    tails: list[str] = []
    extractive = False
    for note in notes:
        reason, found, tail = note.partition(_EXTRACTIVE)
        extractive = extractive or bool(found)
        if reason.startswith(_REJECTED) and found:
            whys.append(reason.removeprefix(_REJECTED))
        elif reason not in reasons:
            reasons.append(reason)
        if tail.strip() and tail not in tails:
            tails.append(tail)
    if whys:  # in brackets: a why holds commas and semicolons of its own
        reasons.insert(0, f"LLM answer{'s' if len(whys) > 1 else ''} rejected ({'; '.join(whys)})")
    return ", ".join(reasons) + (_EXTRACTIVE + "".join(tails) if extractive else "")
