"""Streamed chat completions: a stream's own deadlines, and a slow first token sent again.

Chat completions are streamed (``"stream": true``): the answer is read token by token
and the response is closed as soon as nobody waits for it (cancelled, abandoned, or
cut by ``abort_if``), which makes llama.cpp, LM Studio and Ollama stop generating it —
a non-streamed request they would finish for nobody. Streaming is also how a slow
server is told from a hung one: the first token may take ``first_token_s`` plus the
prompt's size at ``prompt_tokens_per_s`` (prompt processing; at most ``timeout_s``),
after that a gap of ``stall_s`` without a token is a hang. A server that
ignores ``stream`` and answers with one JSON body is read as before.

**A slow first token is not a failure** (issue 22): a stream whose headers came but whose
first token did not, from a server that has evaluated a prompt for us before (or is
llama-cpp-python), is sent again at once with twice the wait, holding our request slot;
only the retry's outcome is a verdict, and every first token teaches the wait. Why, and
the sources: :mod:`._first_token`.

:class:`ChatStreams` sends every stream through the client's :class:`~._requests.Requests`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import trio

from .._errors import LLMTimeoutError, LLMUnavailableError
from ._first_token import FirstTokenWait, NoFirstTokenError, completed
from ._json import json_object
from ._sse import StreamedAnswer
from ._wire import close_stream, parse_completion

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._json import JSON
    from ._requests import Requests
    from .messages import ChatMessage, Completion, LLMSettings

__all__ = ["ChatStreams", "chat_body"]


def chat_body(
    settings: LLMSettings, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float, stream: bool
) -> JSON:
    """The JSON body of ``POST {base}/chat/completions`` (usage asked for at a stream's end)."""
    body: dict[str, JSON] = {
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if settings.model:
        body["model"] = settings.model
    return body


class ChatStreams:
    """The streamed chats of one client, and the first-token wait they have learnt.

    ``llama_cpp_python()`` says whether the server is known to be llama-cpp-python
    (asked when a first token was missed).
    """

    def __init__(self, requests: Requests, *, llama_cpp_python: Callable[[], bool]) -> None:
        self._requests = requests
        self._settings = requests.settings
        self._llama_cpp_python = llama_cpp_python
        self.in_flight = 0  # chat streams queued or in flight
        self.first = FirstTokenWait()  # how long a stream waits for its first token (learnt)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        abort_if: Callable[[str], str | None] | None,
    ) -> Completion:
        """Stream one chat completion (see :meth:`~.client.LLMClient.complete`)."""
        body = chat_body(self._settings, messages, max_tokens=max_tokens, temperature=temperature, stream=True)
        url = f"{self._settings.base_url}/chat/completions"
        base_s = self._settings.first_token_wait_s(sum(len(message.content) for message in messages))
        self.in_flight += 1
        try:
            return await self._requests.guarded(lambda: self._exchange(url, body, abort_if, base_s))
        finally:
            self.in_flight -= 1

    async def _exchange(
        self, url: str, body: JSON, abort_if: Callable[[str], str | None] | None, base_s: float
    ) -> Completion:
        """A streamed chat, sent again once if its first token is only slow (:mod:`._first_token`).

        ``base_s`` is the settings' first-token wait for this prompt; the stream waits it
        times the learnt stretch, the retry twice that.
        """
        sent_at = trio.current_time()
        first_s = base_s * self.first.stretch
        try:
            return await self._stream(url, body, abort_if, first_s, sent_at=sent_at, base_s=base_s)
        except NoFirstTokenError as missing:
            # raises LLMTimeoutError unless it was only slow
            self.first.judge(missing, llama_cpp_python=self._llama_cpp_python())
        try:
            return await self._stream(url, body, abort_if, first_s * 2.0, sent_at=sent_at, base_s=base_s)
        except NoFirstTokenError as again:
            raise LLMTimeoutError(f"{again} (sent again after {first_s:g} s without one)") from None

    async def _stream(
        self,
        url: str,
        body: JSON,
        abort_if: Callable[[str], str | None] | None,
        first_s: float,
        *,
        sent_at: float,
        base_s: float,
    ) -> Completion:
        """One streamed chat exchange; the response is closed however this ends.

        Until the first chunk the deadline is ``first_s`` from now (headers, pings and
        prompt processing included); after each token it is ``stall_s`` from then. The
        first chunk's delay since ``sent_at`` teaches the next wait (:meth:`FirstTokenWait.learn`).
        """
        timeout_s, stall_s = self._settings.timeout_s, self._settings.stall_s
        answer = StreamedAnswer()
        response: httpx.Response | None = None
        with trio.CancelScope(deadline=trio.current_time() + first_s) as waiting:
            response = await self._requests.send("POST", url, body, stream=True)
            lines = response.aiter_lines()
            try:
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    await response.aread()  # the server ignored "stream": one JSON body
                    return parse_completion(response, require_content=True)
                if response.status_code >= 400:
                    await response.aread()
                    json_object(response, "chat completion")  # raises with the server's message
                async for line in lines:
                    self._requests.heard()  # any byte: the server is alive
                    first = answer.chunks == 0
                    token = answer.feed(line)
                    if first and answer.chunks:
                        self.first.learn(trio.current_time() - sent_at, base_s)
                    if token:
                        waiting.deadline = trio.current_time() + stall_s
                        if abort_if is not None and abort_if(answer.text) is not None:
                            answer.finish_reason = "aborted"
                            break
                    if answer.done:
                        break
            except httpx.HTTPError as exc:
                raise LLMUnavailableError(f"POST {url}: stream broke: {type(exc).__name__}: {exc}") from exc
            finally:
                await close_stream(response, lines)
        return completed(
            url,
            answer,
            silent=waiting.cancelled_caught,
            headers=response is not None,
            first_s=first_s,
            timeout_s=timeout_s,
            stall_s=stall_s,
        )
