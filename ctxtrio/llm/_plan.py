"""The steps of one LLM summary, their prompts, and what is ready so far. Pure.

A text within ``single_pass_tokens`` is one step. A longer one is cut into slices of
``slice_tokens`` (:func:`~ctxtrio.llm._slices.slice_text`), each a step, and the slice
summaries, joined in order, are summarized again the same way until one step covers
them (the merge). Every step has a cache key (sha256 of purpose, target and text), so
the same text always needs the same steps and a finished step is found again by the
next call, or after a restart.

:func:`walk` follows the steps through ``lookup`` (key → a finished answer) and
returns the first step still to do, or the :class:`Finished` summary when none is left.
:func:`stand_in` builds what a caller can have now: finished slice summaries, an
extractive summary for each missing one, the whole cut to the target extractively.

Prompts: one user turn, instructions before and a reminder after the text. Gemma's
chat template (``--chat_format gemma`` in llama-cpp-python) drops system messages, so
instructions sent as one never reached the model (issue 10); every template keeps the
user turn.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ._slices import slice_text

if TYPE_CHECKING:
    from ..text.tokens import TokenModel

__all__ = ["Answer", "Extract", "Finished", "Limits", "Step", "cache_key", "one_liner_step", "stand_in", "walk"]

#: Tokens of a prompt besides the text: instructions, reminder, chat template.
PROMPT_OVERHEAD_TOKENS: Final = 160
_RULES: Final = (
    "Keep names, numbers, units, file paths, identifiers and decisions exactly as written. "
    "Do not add anything that is not in the text. Use your own words; do not copy whole sentences. "
    "Answer with the summary only."
)


def cache_key(purpose: str, target_tokens: int, text: str) -> str:
    """The cache key of an LLM result: sha256 over purpose, target and text."""
    return hashlib.sha256(f"{purpose}\0{target_tokens}\0{text}".encode()).hexdigest()


def words_for(target_tokens: int) -> int:
    """The word count to ask for: about three words per four tokens."""
    return max(1, target_tokens * 3 // 4)


@dataclass(frozen=True, slots=True)
class Step:
    """One LLM request: summarize ``text`` to ``target_tokens`` following ``instruction``."""

    purpose: str
    instruction: str
    text: str
    target_tokens: int

    @property
    def key(self) -> str:
        return cache_key(self.purpose, self.target_tokens, self.text)

    @property
    def max_tokens(self) -> int:
        """Room to answer: the target plus a margin (estimates and models both wander)."""
        return self.target_tokens + max(64, self.target_tokens // 4)

    @property
    def prompt(self) -> str:
        """The user turn: instruction, the text between plain markers, a reminder."""
        reminder = f"Now write the summary of the text above, at most {words_for(self.target_tokens)} words."
        return f"{self.instruction}\n\nTEXT:\n{self.text}\nEND OF TEXT\n\n{reminder}"


@dataclass(frozen=True, slots=True)
class Answer:
    """A finished step: its text, and whether the LLM wrote it (else an extractive fallback)."""

    text: str
    by_llm: bool
    why: str = ""  # why the LLM's answer was rejected, for a fallback


@dataclass(frozen=True, slots=True)
class Finished:
    """The summary, with how many of its steps the LLM did, how many there were, and why not."""

    text: str
    llm_steps: int
    steps: int
    why: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Limits:
    """How much text one request may carry, for the detected context window."""

    single_pass_tokens: int
    slice_tokens: int

    @classmethod
    def fitting(cls, context_tokens: int, target_tokens: int, *, single_pass: int, slice_: int) -> Limits:
        """Limits whose prompts fit ``context_tokens`` with room for the answer (10% spare)."""
        answer = target_tokens + max(64, target_tokens // 4)
        room = int((context_tokens - PROMPT_OVERHEAD_TOKENS - answer) * 0.9)
        single = max(200, min(single_pass, room))
        return cls(single, max(100, min(slice_, single)))


Lookup = Callable[[str], Answer | None]
Extract = Callable[[str, int], str]


def _single(text: str, target_tokens: int, level: int) -> Step:
    if level == 0:
        instruction = f"Summarize the text below in at most {words_for(target_tokens)} words. {_RULES}"
        return Step("summary/v2", instruction, text, target_tokens)
    instruction = (
        "Below are summaries of consecutive parts of one text, in order. Summarize them as one "
        f"text of at most {words_for(target_tokens)} words, keeping their order and dropping "
        f"repetition. {_RULES}"
    )
    return Step("merge/v2", instruction, text, target_tokens)


def one_liner_step(text: str, target_tokens: int) -> Step:
    """The request for one sentence about ``text`` (an outline's line for a chunk)."""
    instruction = "Summarize the text below in one sentence of at most 30 words. Keep names and numbers exactly."
    return Step("one-liner/v2", instruction, text, target_tokens)


_SLICED: OrderedDict[tuple[str, int, tuple[float, ...]], list[str]] = OrderedDict()
_SLICED_LOCK = threading.Lock()


def _pieces(text: str, max_tokens: int, model: TokenModel) -> list[str]:
    """``slice_text``, remembered for the last few texts (a job walks its steps many times)."""
    key = (text, max_tokens, tuple(model.rates.values()))
    with _SLICED_LOCK:
        found = _SLICED.get(key)
    if found is None:
        found = slice_text(text, max_tokens=max_tokens, model=model)
        with _SLICED_LOCK:
            _SLICED[key] = found
            while len(_SLICED) > 16:
                _SLICED.popitem(last=False)
    return found


def _slice_steps(text: str, target_tokens: int, limits: Limits, model: TokenModel) -> list[Step]:
    pieces = _pieces(text, limits.slice_tokens, model)
    count = len(pieces)
    share = math.ceil(2 * target_tokens / count)
    part = max(min(target_tokens, 100), min(limits.slice_tokens // 4, share))
    steps = []
    for index, piece in enumerate(pieces, start=1):
        instruction = (
            f"The text below is part {index} of {count} of a longer text. Summarize this part in at "
            f"most {words_for(part)} words. {_RULES}"
        )
        steps.append(Step("slice/v2", instruction, piece, part))
    return steps


def walk(text: str, target_tokens: int, limits: Limits, model: TokenModel, lookup: Lookup) -> Step | Finished:
    """The first step not yet in ``lookup``, or the final summary if every step is there."""
    current, level, llm_steps, steps = text, 0, 0, 0
    why: list[str] = []
    while True:
        if model.estimate(current) <= limits.single_pass_tokens or level >= 4:
            step = _single(current, target_tokens, level)
            found = lookup(step.key)
            if found is None:
                return step
            why.extend([found.why] if found.why else [])
            return Finished(found.text, llm_steps + found.by_llm, steps + 1, tuple(dict.fromkeys(why)))
        parts = []
        for step in _slice_steps(current, target_tokens, limits, model):
            found = lookup(step.key)
            if found is None:
                return step
            parts.append(found.text)
            llm_steps += found.by_llm
            steps += 1
            why.extend([found.why] if found.why else [])
        current, level = "\n\n".join(parts), level + 1


def step_count(text: str, target_tokens: int, limits: Limits, model: TokenModel) -> int:
    """How many steps the first level takes, plus one merge when sliced."""
    if model.estimate(text) <= limits.single_pass_tokens:
        return 1
    return len(_slice_steps(text, target_tokens, limits, model)) + 1


def stand_in(
    text: str, target_tokens: int, limits: Limits, model: TokenModel, lookup: Lookup, extract: Extract
) -> tuple[str, int, int]:
    """(summary now, slices the LLM did, slices): finished slice summaries, the rest extractive."""
    if model.estimate(text) <= limits.single_pass_tokens:
        return extract(text, target_tokens), 0, 1
    steps = _slice_steps(text, target_tokens, limits, model)
    parts, done = [], 0
    for step in steps:
        found = lookup(step.key)
        if found is not None and found.by_llm:
            parts.append(found.text)
            done += 1
        else:
            parts.append(extract(step.text, step.target_tokens))
    joined = "\n\n".join(parts)
    if model.estimate(joined) <= target_tokens:
        return joined, done, len(steps)
    return extract(joined, target_tokens), done, len(steps)
