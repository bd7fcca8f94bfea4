"""What a summary step keeps: the checked text, and the fallback when the LLM did nothing.

:func:`checked` turns an answer into the exact text to keep (fitted to the step's
target; for a one-liner, its first line that says something) and checks both the whole
answer and that text (see :mod:`.checks`): what is cached is what passed. A rejection
that is not the answer's fault (the server cut the stream off) is marked ``retry``.
:func:`as_good_as_extractive` makes a summary whose every LLM step was rejected the
caller's own extractive summary (decisions first for sessions), as ``--no-llm`` gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import trio

from ._outcome import Summary, fit, labelled
from .checks import rejection

if TYPE_CHECKING:
    from ..text.tokens import TokenModel
    from ._plan import Extract, Finished, Step

__all__ = ["Rejected", "as_good_as_extractive", "checked"]

#: A first line that only labels what follows ('Summary:', '**Summary**', '## Summary'): SmolLM2-135M
#: opened an accepted summary so, and the tools show a summary under a head of their own.
_LABEL_LINE: Final = re.compile(
    r"\A\s*(?:#{1,6}[ \t]*)?(?:\*\*)?summary[ \t]*:?[ \t]*(?:\*\*)?[ \t]*:?[ \t]*\r?\n",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Rejected:
    """Why an answer is not kept."""

    reason: str
    retry: bool = False  # not the answer's fault (cut off by the server): ask again on a later call


def checked(answer: str, step: Step, model: TokenModel, *, one_line: bool = False) -> str | Rejected:
    """The text to keep for ``step`` (``answer`` fitted to the target; with ``one_line``, its
    first line that says something), or why it was rejected (see :func:`rejection`).

    Both the whole answer and the text kept are checked: a cut can drop the faithful
    sentence and keep an invented one, and a first line can be "The text is:".
    """

    def why(text: str) -> str | None:
        return rejection(
            text, source=step.text, instruction=step.instruction, target_tokens=step.target_tokens, model=model
        )

    reason = why(answer)
    if reason is not None:
        return Rejected(reason)
    shaped = answer
    if (label := _LABEL_LINE.match(answer)) is not None:
        shaped = answer[label.end() :].lstrip("\n")
    if one_line:
        lines = [line.strip() for line in answer.splitlines() if line.strip()]
        shaped = next((line for line in lines if not line.endswith(":")), lines[0])
        if shaped.endswith((",", ";", ":")):  # "Serving a service on port 8127," (SmolLM2, cached before)
            return Rejected("its one line stops mid-sentence")
    kept = fit(shaped, step.target_tokens, model)
    if kept != answer:
        reason = why(kept)
        if reason is not None:
            return Rejected(f"{reason}, once cut to {step.target_tokens} tokens")
    return kept


async def as_good_as_extractive(found: Finished, text: str, target_tokens: int, whole: Extract) -> Summary:
    """``found`` labelled; when the LLM did none of its steps (every answer rejected), the
    caller's own extractive summary of the whole text instead (sessions rank decisions
    first), never the generic stand-ins of the rejected steps: as good as ``--no-llm``."""
    if found.llm_steps:
        return labelled(found)
    summary = labelled(found)
    return Summary(await trio.to_thread.run_sync(whole, text, target_tokens), summary.method, summary.note)
