"""The client of an OpenAI-compatible endpoint (LM Studio, Ollama, llama.cpp, vLLM).

This module and its wire helpers (:mod:`._wire`) are the only ones of ctxtrio that import
httpx; the values it takes and returns are in :mod:`.messages`. Every request goes the
same way::

    breaker.check()            fail fast while the breaker is open (before queueing)
    async with limiter:        one request at a time by default; waiting is a checkpoint,
                               so the caller's own cancel scope covers the queue too
        breaker.admit()        re-checked now; in half-open only one caller probes
        fail_after(...)        the settings' deadline for the kind of request (chat, probe,
                               embed), translated to LLMTimeoutError here
        httpx request          transport errors translated once to the LLMError family

Chat completions are streamed (``"stream": true``): the answer is read token by token
and the response is closed as soon as nobody waits for it (cancelled, abandoned, or
cut by ``abort_if``), which makes llama.cpp, LM Studio and Ollama stop generating it —
a non-streamed request they would finish for nobody. Streaming is also how a slow
server is told from a hung one: the first token may take ``first_token_s`` plus the
prompt's size at ``prompt_tokens_per_s`` (prompt processing; at most ``timeout_s``),
after that a gap of ``stall_s`` without a token is a hang. A server that
ignores ``stream`` and answers with one JSON body is read as before.

Errors, all :class:`~ctxtrio._errors.LLMError`:

* ``LLMUnavailableError`` — refused, unreachable, connection dropped (a stream that ends
  with neither ``[DONE]`` nor a finish reason included), or breaker open;
* ``LLMTimeoutError`` — no answer within the settings' deadline for the request (``timeout_s``
  for a chat, ``probe_timeout_s``, ``embed_timeout_s``), or a stream silent for ``stall_s``;
* ``LLMResponseError`` — HTTP error status, a body that is not JSON, an ``error`` body,
  a chat answer without content;
* ``LLMInterruptedError`` — a stream that ends with ``[DONE]`` but no finish reason: the
  server cut it off to serve another request (llama-cpp-python with its default
  ``interrupt_requests=True`` sends ``[DONE]`` and stops as soon as another request waits
  for the model, any request: another client's chat, a tokenize; llama_cpp/server/app.py,
  ``get_event_publisher``). Before the first token that is a role chunk and ``[DONE]``
  (no content at all); later, a truncated answer. Neither is complete.

Each of them but the last counts as a failure for the breaker: an interrupted stream
came from a server that works, and counts as an answer.

**A slow first token is not a failure** (issue 22): a stream whose headers came but whose
first token did not, from a server that has evaluated a prompt for us before (or is
llama-cpp-python), is sent
again at once with twice the wait, holding our request slot; only the retry's outcome is
a verdict, and every first token teaches the wait. Why, and the sources: :mod:`._first_token`. A call cancelled by its caller (a
``move_on_at`` around it) gives no verdict: the breaker stays as it was. The optional
endpoints (tokenize, context length) answer ``None`` for "this server has no such
endpoint" and only fail on transport errors.

:func:`open_llm_client` owns one ``httpx.AsyncClient``; leaving it closes the
connections. It starts no tasks.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

import httpx
import trio

from .._errors import LLMError, LLMInterruptedError, LLMResponseError, LLMTimeoutError, LLMUnavailableError
from ._first_token import FirstTokenWait, NoFirstTokenError, completed
from ._json import JSON, json_object
from ._probes import (
    OVERFLOW_PROBE_TOKENS,
    context_from_error,
    llamacpp_context,
    lmstudio_context,
    ollama_context,
    ollama_ps_context,
    token_count,
    vllm_context,
)
from ._sse import StreamedAnswer
from ._wire import OneChunk, close_stream, optional, parse_completion, parse_embeddings, parse_model_ids
from .breaker import Breaker, BreakerState
from .messages import ChatMessage, Completion, LLMSettings, RequestKind

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

__all__ = ["LLMClient", "open_llm_client"]

_T = TypeVar("_T")


class LLMClient:
    """Requests to one endpoint, behind a circuit breaker and a capacity limiter.

    Build it with :func:`open_llm_client`. Safe to share between tasks.
    """

    #: An abandoned request that waited this long without any answer counts as a failure.
    UNANSWERED_FAILURE_S = 5.0

    def __init__(
        self,
        http: httpx.AsyncClient,
        settings: LLMSettings,
        breaker: Breaker,
        limiter: trio.CapacityLimiter,
    ) -> None:
        self._http = http
        self._settings = settings
        self._breaker = breaker
        self._limiter = limiter
        self._tokenize_url: str | None = None  # the style that answered last time
        self._answered_at: float | None = None  # when the endpoint last answered usably
        self._streams = 0  # chat streams queued or in flight
        self._probe_stretch = 1.0  # probes wait this many times probe_timeout_s
        self._first = FirstTokenWait()  # how long a stream waits for its first token (learnt)

    @property
    def streaming(self) -> int:
        """Chat completions of ours queued or streaming right now (counting does not wait behind them)."""
        return self._streams

    @property
    def settings(self) -> LLMSettings:
        """The settings this client was opened with."""
        return self._settings

    def stretch_probes(self, factor: float) -> None:
        """Probes wait ``factor`` times the settings' ``probe_timeout_s`` from now on.

        For a server that turned out slower than that (calibration after a timeout:
        llama-cpp-python goes on evaluating a request its client gave up on, so the next
        one waits behind it). A caller that wants less still sets its own cancel scope.
        """
        if factor < 1.0:
            raise ValueError(f"need factor >= 1, got {factor!r}")
        self._probe_stretch = factor

    @property
    def first_token_stretch(self) -> float:
        """How many times the settings' first-token wait a stream waits now (learnt; at least 1)."""
        return self._first.stretch

    @property
    def breaker_state(self) -> BreakerState:
        """The circuit breaker's state right now."""
        return self._breaker.state

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.2,
        abort_if: Callable[[str], str | None] | None = None,
    ) -> Completion:
        """Stream one chat completion; raise LLMResponseError if the answer has no content.

        ``abort_if(answer_so_far)`` is asked after each token; a reason (not None) closes
        the stream at once, so the server stops generating (an echo of the prompt need
        not be generated to the end), and the answer so far is returned with
        ``finish_reason="aborted"``. The server did answer: that is no failure for the
        breaker. Cancelling the call closes the stream too.
        """
        body = self._chat_body(messages, max_tokens=max_tokens, temperature=temperature, stream=True)
        url = f"{self._settings.base_url}/chat/completions"
        base_s = self._settings.first_token_wait_s(sum(len(message.content) for message in messages))
        self._streams += 1
        try:
            return await self._guarded(lambda: self._chat_exchange(url, body, abort_if, base_s))
        finally:
            self._streams -= 1

    async def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int | None:
        """Send ``messages`` with ``max_tokens: 1``; return ``usage.prompt_tokens`` (None if absent).

        The content of the one-token answer does not matter and may be empty. A probe
        (``probe_timeout_s``).
        """
        body = self._chat_body(messages, max_tokens=1, temperature=0.0, stream=False)
        completion = await self._call(
            "POST",
            f"{self._settings.base_url}/chat/completions",
            body,
            lambda response: parse_completion(response, require_content=False),
            kind="probe",
        )
        self._first.evaluates = True  # a prompt was evaluated: a later slow first token is slow, not hung
        return completion.prompt_tokens

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One ``POST {base}/embeddings`` for ``texts`` (a batch): their vectors, in order.

        Through the breaker and the queue like every request, within ``embed_timeout_s``.
        See :func:`._wire.parse_embeddings` for the shape.
        """
        body: JSON = {"input": list(texts), "encoding_format": "float", "model": self._settings.model}
        url = f"{self._settings.base_url}/embeddings"
        return await self._call("POST", url, body, lambda r: parse_embeddings(r, len(texts)), kind="embed")

    async def list_models(self) -> list[str]:
        """The model ids of ``GET {base}/models``."""
        return await self._call("GET", f"{self._settings.base_url}/models", None, parse_model_ids)

    async def loaded_model(self) -> str | None:
        """The configured model, else the first one the server lists (None if it lists none)."""
        if self._settings.model:
            return self._settings.model
        models = await self.list_models()
        return models[0] if models else None

    async def tokenize(self, text: str) -> int | None:
        """The exact token count of ``text`` from the server's tokenizer, or None if it has none.

        ``{root}`` is the base URL without ``/v1``. Tries, the style that answered last
        time first:

        * llama-cpp-python: ``POST {root}/extras/tokenize {"input": text}`` →
          ``{"tokens": [...]}``, BOS included (llama_cpp/server/app.py, ``tokenize``);
        * llama.cpp ``llama-server`` and vLLM: ``POST {root}/tokenize`` with
          ``{"content": text}`` (llama.cpp, tools/server/README.md) and ``{"prompt": text}``
          (vLLM, ``TokenizeCompletionRequest``) in one body → ``{"tokens": [...]}``.

        LM Studio and Ollama have no tokenize endpoint (404, or 200 with an ``error``):
        None. Each request is a probe (``probe_timeout_s``); counting sets a shorter
        deadline around the call.
        """
        model: dict[str, JSON] = {"model": self._settings.model} if self._settings.model else {}
        styles: dict[str, JSON] = {
            f"{self._settings.root}/extras/tokenize": {"input": text, **model},
            f"{self._settings.root}/tokenize": {"content": text, "prompt": text, **model},
        }
        urls = sorted(styles, key=lambda url: url != self._tokenize_url)
        for url in urls:
            count = await self._call("POST", url, styles[url], optional(token_count))
            if count is not None:
                self._tokenize_url = url
                return count
        return None

    @property
    def tokenize_style(self) -> str | None:
        """``"llama-cpp-python"``, ``"llama.cpp/vLLM"``, or None before a tokenize answered."""
        if self._tokenize_url is None:
            return None
        return "llama-cpp-python" if self._tokenize_url.endswith("/extras/tokenize") else "llama.cpp/vLLM"

    async def context_length(self, model: str | None) -> int | None:
        """The loaded context window of ``model`` in tokens, or None if no known endpoint tells.

        Asks, in order: LM Studio (``GET {root}/api/v0/models``: ``loaded_context_length``),
        llama.cpp (``GET {root}/props``: ``default_generation_settings.n_ctx``), vLLM
        (``GET {base}/models``: ``max_model_len``), Ollama (``GET {root}/api/ps``: the
        running model's ``context_length``, then ``POST {root}/api/show``). A
        llama-cpp-python server tells none of these: see :meth:`context_from_overflow`.
        """
        root, base = self._settings.root, self._settings.base_url
        found = await self._call("GET", f"{root}/api/v0/models", None, optional(lambda b: lmstudio_context(b, model)))
        if found is None:
            found = await self._call("GET", f"{root}/props", None, optional(llamacpp_context))
        if found is None:
            found = await self._call("GET", f"{base}/models", None, optional(lambda b: vllm_context(b, model)))
        if found is None:
            found = await self._call("GET", f"{root}/api/ps", None, optional(lambda b: ollama_ps_context(b, model)))
        if found is None and model:
            body: JSON = {"model": model, "name": model}
            found = await self._call("POST", f"{root}/api/show", body, optional(ollama_context))
        return found

    async def context_from_overflow(self) -> int | None:
        """Learn the window of a llama-cpp-python server from its own overflow error, or None.

        Sends one chat whose prompt (``OVERFLOW_PROBE_TOKENS`` one-token words) exceeds any
        window it can run; llama-cpp-python refuses it before evaluating anything, with
        HTTP 400 "This model's maximum context length is N tokens"
        (llama_cpp/server/errors.py, ``context_length_exceeded``). Only call this on a
        server that answered ``/extras/tokenize``: another server might evaluate it.
        """
        body = self._chat_body(
            [ChatMessage("user", " x" * OVERFLOW_PROBE_TOKENS)], max_tokens=1, temperature=0.0, stream=False
        )

        def judge(response: httpx.Response) -> int | None:
            return context_from_error(response.text) if response.status_code >= 400 else None

        return await self._call("POST", f"{self._settings.base_url}/chat/completions", body, judge)

    def _chat_body(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float, stream: bool) -> JSON:
        body: dict[str, JSON] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if self._settings.model:
            body["model"] = self._settings.model
        return body

    async def _call(
        self,
        method: str,
        url: str,
        body: JSON,
        judge: Callable[[httpx.Response], _T],
        *,
        kind: RequestKind = "probe",
    ) -> _T:
        """One plain request: queue, pass the breaker, send within the deadline of ``kind``, judge the answer."""

        async def exchange() -> _T:
            return judge(await self._send(method, url, body, kind=kind))

        return await self._guarded(exchange)

    async def _guarded(self, exchange: Callable[[], Awaitable[_T]]) -> _T:
        """Queue, pass the breaker, run ``exchange``; record the verdict.

        A request its caller abandons (a tool call's deadline) after waiting at least
        :attr:`UNANSWERED_FAILURE_S`, from an endpoint that had sent nothing in that
        long before it was sent and nothing since, counts as a failure: without this a
        hung server would never open the breaker and every later call would wait out
        its whole deadline. An endpoint that answered recently, or whose stream is
        still delivering tokens, is slow, not hung: cutting it is no verdict, and the
        next call resumes with it.
        """
        self._breaker.check()
        async with self._limiter:
            ticket = self._breaker.admit()
            sent_at = trio.current_time()
            judged = False
            try:
                result = await exchange()
            except LLMInterruptedError:
                judged = True
                self._answered_at = trio.current_time()
                self._breaker.succeeded(ticket)
                raise
            except LLMError:
                judged = True
                self._breaker.failed(ticket)
                raise
            else:
                judged = True
                self._answered_at = trio.current_time()
                self._breaker.succeeded(ticket)
                return result
            finally:
                if not judged and self._looks_hung(sent_at):
                    self._breaker.failed(ticket)
                self._breaker.release(ticket)

    async def _chat_exchange(
        self, url: str, body: JSON, abort_if: Callable[[str], str | None] | None, base_s: float
    ) -> Completion:
        """A streamed chat, sent again once if its first token is only slow (:mod:`._first_token`).

        ``base_s`` is the settings' first-token wait for this prompt; the stream waits it
        times the learnt stretch, the retry twice that.
        """
        sent_at = trio.current_time()
        first_s = base_s * self._first.stretch
        try:
            return await self._stream_chat(url, body, abort_if, first_s, sent_at=sent_at, base_s=base_s)
        except NoFirstTokenError as missing:
            # raises LLMTimeoutError unless it was only slow
            self._first.judge(missing, llama_cpp_python=self.tokenize_style == "llama-cpp-python")
        try:
            return await self._stream_chat(url, body, abort_if, first_s * 2.0, sent_at=sent_at, base_s=base_s)
        except NoFirstTokenError as again:
            raise LLMTimeoutError(f"{again} (sent again after {first_s:g} s without one)") from None

    async def _stream_chat(
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
            response = await self._send("POST", url, body, stream=True)
            lines = response.aiter_lines()
            try:
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    await response.aread()  # the server ignored "stream": one JSON body
                    return parse_completion(response, require_content=True)
                if response.status_code >= 400:
                    await response.aread()
                    json_object(response, "chat completion")  # raises with the server's message
                async for line in lines:
                    self._answered_at = trio.current_time()  # any byte: the server is alive
                    first = answer.chunks == 0
                    token = answer.feed(line)
                    if first and answer.chunks:
                        self._first.learn(trio.current_time() - sent_at, base_s)
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

    def _looks_hung(self, sent_at: float) -> bool:
        """An abandoned request waited long, and the endpoint was silent before it too."""
        waited = trio.current_time() - sent_at
        silent = self._answered_at is None or self._answered_at < sent_at - self.UNANSWERED_FAILURE_S
        return waited >= self.UNANSWERED_FAILURE_S and silent

    async def _send(
        self, method: str, url: str, body: JSON, *, stream: bool = False, kind: RequestKind = "chat"
    ) -> httpx.Response:
        """One HTTP exchange under the settings' deadline for ``kind``; foreign errors translated here.

        With ``stream`` it returns once the headers are in, and the caller's own cancel
        scope is the deadline (the body is read, and closed, by the caller).
        """
        seconds = self._settings.timeout_for(kind) * (self._probe_stretch if kind == "probe" else 1.0)
        try:
            request = self._http.build_request(method, url, json=body)
            request.stream = OneChunk(request.content)
            if stream:
                return await self._http.send(request, stream=True)
            with trio.fail_after(seconds):
                return await self._http.send(request)
        except trio.TooSlowError as exc:
            raise LLMTimeoutError(f"{method} {url}: no answer within {seconds:g} s") from exc
        except httpx.TimeoutException as exc:
            raise LLMTimeoutError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
        except httpx.ConnectError as exc:
            raise LLMUnavailableError(f"{method} {url}: cannot connect: {exc}") from exc
        except httpx.TransportError as exc:
            raise LLMUnavailableError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
        except httpx.InvalidURL as exc:
            raise LLMUnavailableError(f"{method} {url}: invalid URL: {exc}") from exc
        except httpx.HTTPError as exc:
            raise LLMResponseError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc


@asynccontextmanager
async def open_llm_client(
    settings: LLMSettings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Callable[[], float] | None = None,
) -> AsyncIterator[LLMClient]:
    """Open a client for ``settings``; leaving the block closes its connections.

    ``transport`` replaces the network (``httpx.MockTransport`` in tests); ``clock``
    drives the breaker (default ``trio.current_time``). httpx's own timeouts are off:
    the deadline is a trio cancel scope per request. Proxy variables of the
    environment are ignored, since the endpoint is normally on this machine.
    """
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    async with httpx.AsyncClient(transport=transport, timeout=None, headers=headers, trust_env=False) as http:
        yield LLMClient(
            http,
            settings,
            Breaker(clock if clock is not None else trio.current_time),
            trio.CapacityLimiter(settings.concurrency),
        )
