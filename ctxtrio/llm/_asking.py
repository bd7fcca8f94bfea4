"""One summary step asked of the LLM: counted when near the window's limit, streamed,
asked again when the server cuts it off, and checked before it is kept.

Split from :mod:`.summarizer`, which decides *which* steps to ask and keeps the answers;
this module only asks one.
"""

from __future__ import annotations

import logging
import re
from functools import partial
from typing import TYPE_CHECKING, Final

import trio

from .._errors import LLMInterruptedError
from ._keeping import Rejected, checked
from .checks import echo_so_far
from .messages import ChatMessage

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..text.tokens import TokenModel
    from ._plan import Step
    from .client import LLMClient

__all__ = ["ask"]

log = logging.getLogger("ctxtrio.summaries")

#: The chat template around the one user turn (Gemma 3's costs 10 in llama-cpp-python).
_TEMPLATE_TOKENS: Final = 16
#: A prompt is counted exactly before it is sent when its estimate passes this share of
#: the room the window leaves (steps are sized to 90% of it by the estimate).
_COUNT_FROM: Final = 0.8
#: A stream the server cuts off for another request is asked again this many times, after
#: 1 s, 2 s, 4 s; then the step is done extractively for this job only (a later call asks again).
_INTERRUPTED_TRIES: Final = 4
_THINK: Final = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)  # reasoning models


async def ask(
    client: LLMClient,
    step: Step,
    model: TokenModel,
    *,
    window: int | None,
    count_tokens: Callable[[str], Awaitable[int]] | None,
    one_line: bool = False,
) -> str | Rejected:
    """One streamed request for ``step``: the text to keep, checked, or why it was rejected.

    ``window`` is the loaded model's context window (None while unknown: not counted);
    ``count_tokens`` counts a prompt exactly (None: the estimate settles it).
    """
    room = window - _TEMPLATE_TOKENS - step.max_tokens if window is not None else None
    # Counted only near the limit: far below it the estimate (which leans high) settles it.
    if room is not None and count_tokens is not None and model.estimate(step.prompt) > room * _COUNT_FROM:
        prompt_tokens = await count_tokens(step.prompt)
        if prompt_tokens > room:
            return Rejected(
                f"a prompt of {prompt_tokens} tokens leaves no room for a {step.max_tokens}-token answer "
                f"in the model's {window}-token window"
            )
    messages = [ChatMessage("user", step.prompt)]
    for attempt in range(_INTERRUPTED_TRIES):
        try:
            completion = await client.complete(
                messages,
                max_tokens=step.max_tokens,
                abort_if=lambda so_far: echo_so_far(so_far, step.instruction, step.text),
            )
            break
        except LLMInterruptedError as exc:
            log.info("summary step cut off by the server (%s); try %d of %d", exc, attempt + 1, _INTERRUPTED_TRIES)
            if attempt + 1 == _INTERRUPTED_TRIES:
                return Rejected(
                    f"the server cut the answer off {_INTERRUPTED_TRIES} times to serve other requests", retry=True
                )
            await trio.sleep(2.0**attempt)
    answer = _THINK.sub("", completion.text).strip()
    if completion.finish_reason == "aborted":
        return Rejected(echo_so_far(answer, step.instruction, step.text) or "stopped early")
    # The checks stem and scan the whole source: off the event loop, with the fit.
    return await trio.to_thread.run_sync(partial(checked, answer, step, model, one_line=one_line))
