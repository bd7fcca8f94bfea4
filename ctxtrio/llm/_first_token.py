"""How long a streamed answer may take to its first token, and when missing it is slow, not a failure. Pure.

What a local server does before the first token (llama-cpp-python 0.3.36, the server the
issue measured): it answers a streamed chat at once with its headers (an
``EventSourceResponse``, whose pings come every 15 s from their own task), then waits
for the model lock and evaluates the whole prompt in a worker thread before it yields
the first chunk. A client that leaves is noticed only after that chunk
(llama_cpp/server/app.py, ``get_event_publisher``: ``request.is_disconnected()`` is
checked after each chunk), so an abandoned evaluation runs to its end under the lock and
leaves the prompt in the KV cache; the same prompt sent again then starts at once
("full prompt already cached, skipping reset", or "N prefix-match hit": llama_cpp/llama.py,
``Llama.generate``). On a loaded machine the evaluation is what takes long: SmolLM2 on
one thread at load 14-19 missed a 45 s wait, and counting that as a failure opened the
breaker for every summary after it (issue 22).

So, for a stream whose first token did not come within its wait (:class:`NoFirstTokenError`):

* **slow**, when the server took the request (its headers came) and has shown it works:
  it evaluated a prompt for this client before (a first chunk, a one-token count), or it
  is llama-cpp-python (it answered ``/extras/tokenize``, which waits for the same model
  lock as a chat, and it is the server whose abandoned evaluation is documented above to
  finish and be reused). No verdict for the breaker; the client sends the same request
  again at once, with twice the wait, holding its one request slot, so nothing of ours
  comes between the abandoned evaluation and the retry that reuses it;
* **a failure** otherwise, and when the retry misses too. A server that hangs after it
  used to work opens the breaker after three waits instead of one; one that has shown
  nothing, or sends no headers (a stopped process: the kernel accepts, nobody answers),
  opens it at the first wait, as before.

Every first chunk teaches the wait (:meth:`FirstTokenWait.learn`): it is stretched, up to
:attr:`FirstTokenWait.MAX_STRETCH` times the settings' own, to twice the slowest first
token seen against it, so a machine that gets busier waits longer instead of timing
out. The stretch never shrinks (the client's lifetime, like ``stretch_probes``); it
costs only the time a real hang takes to be noticed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from .._errors import LLMInterruptedError, LLMResponseError, LLMTimeoutError, LLMUnavailableError
from ..text.plural import plural
from .messages import Completion

if TYPE_CHECKING:
    from ._sse import StreamedAnswer

__all__ = ["FirstTokenWait", "NoFirstTokenError", "completed"]

log = logging.getLogger("ctxtrio.llm")


class NoFirstTokenError(LLMTimeoutError):
    """No first chunk within the wait; ``headers`` says whether the server had taken the request."""

    def __init__(self, message: str, *, headers: bool) -> None:
        super().__init__(message)
        self.headers = headers


class FirstTokenWait:
    """The learnt stretch of the first-token wait, and the verdict on a missed one."""

    #: The wait is never stretched beyond this many times the settings' own.
    MAX_STRETCH: Final = 8.0

    def __init__(self) -> None:
        self.stretch = 1.0
        #: The server has evaluated a prompt for this client (a first chunk, a one-token count).
        self.evaluates = False

    def learn(self, waited_s: float, base_s: float) -> None:
        """A first chunk came ``waited_s`` after the request whose own wait was ``base_s``."""
        self.evaluates = True
        wanted = 2.0 * waited_s / base_s
        if wanted > self.stretch:
            self.stretch = min(self.MAX_STRETCH, wanted)

    def judge(self, missing: NoFirstTokenError, *, llama_cpp_python: bool) -> None:
        """Return if the miss is only slow (ask again, the wait doubled); else raise LLMTimeoutError.

        ``llama_cpp_python``: the server answered llama-cpp-python's ``/extras/tokenize``.
        """
        if not (missing.headers and (self.evaluates or llama_cpp_python)):
            raise LLMTimeoutError(str(missing)) from None
        self.stretch = min(self.MAX_STRETCH, self.stretch * 2.0)
        log.info("%s, from a server that took it and has evaluated prompts: slow, not hung; sent again", missing)


def completed(
    url: str,
    answer: StreamedAnswer,
    *,
    silent: bool,
    headers: bool,
    first_s: float,
    timeout_s: float,
    stall_s: float,
) -> Completion:
    """What a streamed answer that ended comes to: the completion, or the error that says how it ended.

    ``silent``: the stream's deadline passed (no first token within ``first_s``, or no token
    for ``stall_s``); ``headers``: the server had answered the request before that.
    """
    if silent:
        if answer.chunks == 0 and first_s >= timeout_s:
            raise NoFirstTokenError(f"POST {url}: no answer within {first_s:g} s", headers=headers)
        if answer.chunks == 0:
            raise NoFirstTokenError(f"POST {url}: no first token within {first_s:g} s", headers=headers)
        raise LLMTimeoutError(f"POST {url}: stream silent for {stall_s:g} s after {plural(answer.chunks, 'chunk')}")
    if not answer.done and answer.finish_reason is None:
        # Neither [DONE] nor a finish reason: the server went away mid-answer (a
        # close-delimited body ends "cleanly" when its process dies).
        raise LLMUnavailableError(f"POST {url}: the stream ended mid-answer after {plural(answer.chunks, 'chunk')}")
    if answer.finish_reason is None:
        # [DONE] without a finish reason: cut off for another request (see client's docstring).
        raise LLMInterruptedError(
            f"POST {url}: the server ended the stream without a finish reason after {plural(answer.chunks, 'chunk')} "
            f"({plural(len(answer.text), 'character')}): interrupted by another request"
        )
    text = answer.text.strip()
    if not text:
        raise LLMResponseError("chat completion: empty content")
    return Completion(text, answer.prompt_tokens, answer.completion_tokens, answer.finish_reason)
