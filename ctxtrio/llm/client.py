"""The client of an OpenAI-compatible endpoint (LM Studio, Ollama, llama.cpp, vLLM).

This module, the request path (:mod:`._requests`), the streamed chats (:mod:`._chat`) and
the wire helpers (:mod:`._wire`) are the only ones of ctxtrio that import httpx; the values
it takes and returns are in :mod:`.messages`. Every request goes through
:class:`~._requests.Requests`: breaker check, queue, the settings' deadline for its kind,
errors translated once. Chat completions are streamed; a slow server is told from a hung
one by the stream, and a slow first token is sent again once (:mod:`._chat`).

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
came from a server that works, and counts as an answer. So does an embeddings request
refused for its input (HTTP 400, 413, 422, or 500 again when sent once more after a one-word
input was embedded: ``_wire.InputRefusedError``, an LLMResponseError): one text the model will
not take is not the endpoint being down. A call cancelled by its caller (a ``move_on_at``
around it) gives no verdict: the breaker stays as it was. The optional
endpoints (tokenize, context length) answer ``None`` for "this server has no such
endpoint" and only fail on transport errors.

:func:`open_llm_client` owns one ``httpx.AsyncClient``; leaving it closes the
connections. It starts no tasks.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import httpx
import trio

from .._errors import LLMError, LLMResponseError
from ._chat import ChatStreams, chat_body
from ._json import status_message
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
from ._requests import Requests
from ._wire import InputRefusedError, optional, parse_completion, parse_embeddings, parse_model_ids
from .breaker import Breaker, BreakerState
from .messages import ChatMessage, Completion, LLMSettings
from .models import chat_model_among

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from ._json import JSON

__all__ = ["EMBED_PROBE", "JUDGED_BY_PROBE", "LLMClient", "open_llm_client"]

#: The status of an embeddings answer judged by a probe (:meth:`LLMClient.embed`): 500, what llama.cpp's
#: llama-server answers for an input longer than its physical batch, and for a server failing everything.
#: Not 502/503/504 (a proxy without its upstream, a model still loading: llama-server's 503
#: ``unavailable_error``) nor 501 (no embeddings served): the server is down or unusable, probe or not.
JUDGED_BY_PROBE: Final = 500
#: The one-word input sent to tell a refused input from a failing server (a word every tokenizer takes).
EMBED_PROBE: Final = "probe"


class LLMClient:
    """Requests to one endpoint, behind a circuit breaker and a capacity limiter.

    Build it with :func:`open_llm_client`. Safe to share between tasks.
    """

    def __init__(self, requests: Requests) -> None:
        self._settings = requests.settings
        self._requests = requests
        self._tokenize_url: str | None = None  # the style that answered last time
        self._chats = ChatStreams(requests, llama_cpp_python=lambda: self.tokenize_style == "llama-cpp-python")

    @property
    def streaming(self) -> int:
        """Chat completions of ours queued or streaming right now (counting does not wait behind them)."""
        return self._chats.in_flight

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
        self._requests.probe_stretch = factor

    @property
    def first_token_stretch(self) -> float:
        """How many times the settings' first-token wait a stream waits now (learnt; at least 1)."""
        return self._chats.first.stretch

    @property
    def breaker_state(self) -> BreakerState:
        """The circuit breaker's state right now."""
        return self._requests.breaker.state

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
        return await self._chats.complete(messages, max_tokens=max_tokens, temperature=temperature, abort_if=abort_if)

    async def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int | None:
        """Send ``messages`` with ``max_tokens: 1``; return ``usage.prompt_tokens`` (None if absent).

        The content of the one-token answer does not matter and may be empty. A probe
        (``probe_timeout_s``).
        """
        body = chat_body(self._settings, messages, max_tokens=1, temperature=0.0, stream=False)
        completion = await self._requests.call(
            "POST",
            f"{self._settings.base_url}/chat/completions",
            body,
            lambda response: parse_completion(response, require_content=False),
            kind="probe",
        )
        self._chats.first.evaluates = True  # a prompt was evaluated: a later slow first token is slow, not hung
        return completion.prompt_tokens

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One ``POST {base}/embeddings`` for ``texts`` (a batch): their vectors, in order.

        Through the breaker and the queue like every request, within ``embed_timeout_s``.
        See :func:`._wire.parse_embeddings` for the shape.
        """
        url = f"{self._settings.base_url}/embeddings"

        async def exchange() -> list[list[float]]:
            response = await self._requests.send("POST", url, self._embeddings_body(texts), kind="embed")
            if response.status_code == JUDGED_BY_PROBE:
                response = await self._judge_server_error(url, texts, response)
            return parse_embeddings(response, len(texts))

        return await self._requests.guarded(exchange)

    async def _judge_server_error(self, url: str, texts: Sequence[str], failed: httpx.Response) -> httpx.Response:
        """An embeddings request answered HTTP 500: the input's fault, or the server's? A probe tells.

        llama.cpp's ``llama-server`` answers an input of more tokens than its physical batch
        (``--ubatch-size``, 512 by default) with HTTP 500 ``{"error": {"code": 500, "message":
        "input (N tokens) is too large to process. increase the physical batch size (current
        batch size: 512)", "type": "server_error"}}`` (tools/server/server-context.cpp,
        ``update_slots``, ``ERROR_TYPE_SERVER``; server-common.cpp, ``format_error_response``;
        ggml-org/llama.cpp#12295), and one input's error fails the whole request
        (``wait_for_all``). The status, type and wording are those of a server that fails every
        input (a model that cannot run), and the wording changed across versions, so the body
        is not trusted: one input of a single word (:data:`EMBED_PROBE`) is sent at once, inside
        the same admission. Not embedded: the 500's LLMResponseError, a failure that opens the
        breaker, as before. Embedded: the server works, and ``texts`` are sent once more, as a 500
        of a moment (a server busy or restarting) and the word answered right after it would
        otherwise mark a good input refused for good: a 500 again is the input refused
        (:class:`~._wire.InputRefusedError`, an answer for the breaker; the background embedders
        then send the inputs one by one and record the one refused alone); any other answer is
        the request's own (returned).
        """
        refusal = status_message(failed, "embeddings")
        try:
            parse_embeddings(
                await self._requests.send("POST", url, self._embeddings_body([EMBED_PROBE]), kind="embed"), 1
            )
        except LLMError as exc:
            raise LLMResponseError(f"{refusal} (and a one-word input failed too: {exc})") from exc
        again = await self._requests.send("POST", url, self._embeddings_body(texts), kind="embed")
        if again.status_code != JUDGED_BY_PROBE:
            return again
        twice = status_message(again, "embeddings")
        raise InputRefusedError(f"{twice} (twice, while a one-word input is embedded: this input is refused)")

    def _embeddings_body(self, texts: Sequence[str]) -> JSON:
        return {"input": list(texts), "encoding_format": "float", "model": self._settings.model}

    async def list_models(self) -> list[str]:
        """The model ids of ``GET {base}/models``."""
        return await self._requests.call("GET", f"{self._settings.base_url}/models", None, parse_model_ids)

    async def loaded_model(self) -> str | None:
        """The configured model, else the first language model the server lists (None if it
        lists none; see :func:`.models.chat_model_among`)."""
        if self._settings.model:
            return self._settings.model
        return chat_model_among(await self.list_models())

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
            count = await self._requests.call("POST", url, styles[url], optional(token_count))
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
        found = await self._requests.call(
            "GET", f"{root}/api/v0/models", None, optional(lambda b: lmstudio_context(b, model))
        )
        if found is None:
            found = await self._requests.call("GET", f"{root}/props", None, optional(llamacpp_context))
        if found is None:
            found = await self._requests.call("GET", f"{base}/models", None, optional(lambda b: vllm_context(b, model)))
        if found is None:
            found = await self._requests.call(
                "GET", f"{root}/api/ps", None, optional(lambda b: ollama_ps_context(b, model))
            )
        if found is None and model:
            body: JSON = {"model": model, "name": model}
            found = await self._requests.call("POST", f"{root}/api/show", body, optional(ollama_context))
        return found

    async def context_from_overflow(self) -> int | None:
        """Learn the window of a llama-cpp-python server from its own overflow error, or None.

        Sends one chat whose prompt (``OVERFLOW_PROBE_TOKENS`` one-token words) exceeds any
        window it can run; llama-cpp-python refuses it before evaluating anything, with
        HTTP 400 "This model's maximum context length is N tokens"
        (llama_cpp/server/errors.py, ``context_length_exceeded``). Only call this on a
        server that answered ``/extras/tokenize``: another server might evaluate it.
        """
        probe = [ChatMessage("user", " x" * OVERFLOW_PROBE_TOKENS)]
        body = chat_body(self._settings, probe, max_tokens=1, temperature=0.0, stream=False)

        def judge(response: httpx.Response) -> int | None:
            return context_from_error(response.text) if response.status_code >= 400 else None

        return await self._requests.call("POST", f"{self._settings.base_url}/chat/completions", body, judge)


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
        breaker = Breaker(clock if clock is not None else trio.current_time)
        yield LLMClient(Requests(http, settings, breaker, trio.CapacityLimiter(settings.concurrency)))
