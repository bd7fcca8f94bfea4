"""A slow small model behind a llama.cpp-style OpenAI-compatible server, for tests and stress.

A raw HTTP/1.1 server on trio sockets (not an ASGI app, so it sees exactly when the
client's connection goes away). What it models, and where the behaviour is documented:

* **One slot, slow generation.** Requests wait for the one slot (llama-server's default
  ``--parallel 1``); the prompt is processed at ``prompt_rate`` tokens/s with nothing
  sent, then the answer is generated at ``gen_rate`` tokens/s. The defaults (60 and 16)
  are what issue 10 measured for Gemma 3 270M under llama-cpp-python on CPU.
* **Streaming.** ``"stream": true`` answers ``text/event-stream`` with one
  ``data: {"choices":[{"delta":{"content":…}}]}`` event per token, a last chunk with
  ``finish_reason`` and ``usage``, then ``data: [DONE]``: the OpenAI chat-completion
  chunk format (``chat.completion.chunk``; ``stream_options.include_usage`` adds the
  usage chunk "before the ``data: [DONE]`` message", OpenAI API reference) that
  llama.cpp's server implements, ``[DONE]`` included (ikawrakow/ik_llama.cpp#467 cites
  ggml-org/llama.cpp ``tools/server/server.cpp`` sending it).
* **Keeps generating for nobody.** A non-streamed request is generated to the end even
  when its client has gone (continuedev/continue#764, ggml-org/llama.cpp#24496: "the
  server continues to generate the full response"); a streamed one stops at the first
  write that fails, as closing the stream stopped llama-server ("Killing the connection
  to the server usually stops it", ggml-org/llama.cpp#4911; #11720). Each request
  records when the client went away and how many tokens were generated after that.
* **Drops the system message.** With ``drops_system`` (default) the chat template keeps
  only user and assistant turns, as llama-cpp-python's ``--chat_format gemma`` does
  (issue 10): instructions sent as a system message never reach the model.
* **Behaviours** (``behaviour``): ``"obey"`` — if the rendered prompt holds an
  instruction to summarize, a short summary of its own wording that keeps the figures
  and identifiers; otherwise (the instruction was dropped) it continues by repeating
  the text, as the real small model did; ``"echo"`` — repeats the whole prompt,
  instructions included; ``"invent"`` — a summary with every number changed;
  ``"empty"`` — an empty answer; ``"silent"`` — a generation stuck before its first
  token: the stream's headers go out and then only ``: ping`` comments every
  ``ping_s`` (llama-cpp-python answers through sse-starlette's ``EventSourceResponse``,
  whose ``DEFAULT_PING_INTERVAL`` is 15 s and whose pings come from their own task, so
  they keep coming while the generation thread is stuck); a non-streamed one never
  answers.
* **Dies mid-answer.** With ``drop_after`` set, the connection is closed after that
  many tokens with no final chunk and no ``[DONE]``, as when the server process
  crashes or is killed while streaming (abetlen/llama-cpp-python#897: a second
  concurrent stream broke the first mid-body; ggml-org/llama.cpp#22847: a crashing
  router server).

* **Interrupts a stream for any other request** (``interrupt_requests``, llama-cpp-python's
  server default, documented as "Whether to interrupt requests when a new request is
  received", ``default=True``: llama_cpp/server/settings.py, ``ServerSettings``). Every request waits for the one model lock (llama_cpp/server/app.py:
  ``get_llama_proxy``, a double lock, is a dependency of the chat *and* the
  ``/extras/tokenize`` routes); the streaming loop, after sending each chunk, ends the
  stream with ``data: [DONE]`` and no final chunk when another request is waiting for
  the lock (``get_event_publisher``: ``if interrupt_requests and
  llama_outer_lock.locked()``). Its first chunk is the role delta
  (``{"delta": {"role": "assistant"}}``, llama_chat_format.py,
  ``_convert_text_completion_chunks_to_chat``), sent once the prompt is evaluated and the
  first token is out: interrupted during prompt evaluation, a stream carries no content.
  In this mode ``POST /extras/tokenize`` answers (BOS included), also under the lock.

* **Keeps the last prompt evaluated** (``prompt_cache``): llama-cpp-python's ``Llama``
  keeps the KV cache of the last prompt and evaluates only what a new prompt adds past
  their common prefix ("Llama.generate: N prefix-match hit, remaining M prompt tokens to
  eval", or "full prompt already cached, skipping reset": llama_cpp/llama.py,
  ``Llama.generate``). An abandoned request's evaluation still runs to its end (the
  server notices the client left only after the first chunk, ``get_event_publisher``), so
  the same prompt sent again after a first-token timeout starts at once.

``GET /props`` tells the context (llama.cpp's ``default_generation_settings.n_ctx``),
``POST /tokenize`` counts tokens, ``GET /v1/models`` lists one model. Connections are
closed after each response. Cancelling the nursery stops the server.
"""

from __future__ import annotations

import json
import math
import os
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Final, Literal

import trio

from testkit.fake_openai import true_tokens

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["Behaviour", "FakeModel", "Served", "open_fake_model"]

Behaviour = Literal["obey", "echo", "invent", "empty", "silent"]

_INSTRUCTION: Final = re.compile(r"\bsummari[sz]e\b", re.IGNORECASE)
#: Paragraphs that talk about the task rather than the text: an obedient model does not quote them.
_ABOUT_THE_TASK: Final = re.compile(r"summar|\bwords?\b|answer with", re.IGNORECASE)
_FIGURE: Final = re.compile(r"[\w./:-]*\d[\w./:-]*|\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+[A-Z]\w*\b")
_NUMBER: Final = re.compile(r"\d+")
_WORDS_PER_POINT: Final = 4


@dataclass
class Served:
    """One chat request as the fake saw it."""

    stream: bool
    prompt: str  # what the template kept: user and assistant turns (and system, if kept)
    max_tokens: int
    planned: int  # tokens of the whole answer it meant to give
    received_at: float
    generated: int = 0
    gone_at: float | None = None  # when the client closed its connection
    generated_after_gone: int = 0
    finished_at: float | None = None
    left: trio.Event = field(default_factory=trio.Event)  # set when the client closed its end


@dataclass
class FakeModel:
    """The knobs (plain attributes, change them any time) and the requests served."""

    gen_rate: float = 16.0
    prompt_rate: float = 60.0
    tokens_per_event: int = 1  # more per event: fewer sleeps (tests under a MockClock)
    behaviour: Behaviour = "obey"
    drops_system: bool = True
    n_ctx: int = 8192
    ping_s: float | None = 15.0
    drop_after: int | None = None
    interrupt_requests: bool = False
    prompt_cache: bool = False
    model_id: str = "gemma-3-270m-fake"
    base_url: str = ""
    served: list[Served] = field(default_factory=list)
    interrupted: int = 0  # streams ended for another request
    _slot: trio.Lock = field(default_factory=trio.Lock)
    _waiting: int = 0  # requests waiting for the slot (llama-cpp-python's outer lock held)
    _evaluated: str = ""  # the last prompt evaluated (its KV cache, with prompt_cache)
    _streamed: trio.Event = field(default_factory=trio.Event)

    async def next_event(self) -> None:
        """Wait until a stream sends its next event (a test's second client times its request by it)."""
        await self._streamed.wait()

    @property
    def waiting(self) -> int:
        """Requests waiting for the model right now (each one interrupts a stream at its next event)."""
        return self._waiting

    @property
    def generating(self) -> int:
        """Requests still generating right now."""
        return sum(1 for item in self.served if item.finished_at is None)

    async def handle(self, stream: trio.SocketStream) -> None:
        """Serve one request on ``stream``, then close it."""
        try:
            request = await _read_request(stream)
            if request is None:
                return
            method, path, body = request
            if (method, path) == ("POST", "/v1/chat/completions"):
                await self._chat(stream, json.loads(body))
            elif (method, path) == ("GET", "/props"):
                await _send_json(stream, {"default_generation_settings": {"n_ctx": self.n_ctx}})
            elif (method, path) == ("GET", "/v1/models"):
                await _send_json(stream, {"object": "list", "data": [{"id": self.model_id}]})
            elif (method, path) == ("POST", "/tokenize"):
                count = true_tokens(json.loads(body)["content"])
                await _send_json(stream, {"tokens": list(range(count))})
            elif (method, path) == ("POST", "/extras/tokenize") and self.interrupt_requests:
                async with self._model_lock():
                    count = 1 + true_tokens(json.loads(body)["input"])
                await _send_json(stream, {"tokens": list(range(count))})
            else:
                await _send_json(stream, {"error": {"message": "not found"}}, status="404 Not Found")
        except trio.BrokenResourceError:
            pass
        finally:
            await stream.aclose()

    async def _chat(self, stream: trio.SocketStream, body: dict[str, object]) -> None:
        messages = body.get("messages")
        assert isinstance(messages, list)
        kept = [m for m in messages if not (self.drops_system and m["role"] == "system")]
        prompt = "\n\n".join(str(m["content"]) for m in kept)
        max_tokens = body.get("max_tokens")
        assert isinstance(max_tokens, int)
        words = self._answer(prompt).split()
        planned = min(len(words), max_tokens)
        served = Served(bool(body.get("stream")), prompt, max_tokens, planned, trio.current_time())
        self.served.append(served)
        prompt_tokens = true_tokens(prompt) + 11
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_close, stream, served, nursery.cancel_scope)
            if served.stream:
                await stream.send_all(_head("200 OK", "text/event-stream"))
            async with self._model_lock():
                await trio.sleep(self._to_evaluate(prompt, prompt_tokens) / self.prompt_rate)
                if self.behaviour == "silent":
                    await self._stuck(stream, served)
                elif served.stream:
                    await self._stream_tokens(stream, served, words[:planned], prompt_tokens)
                else:
                    await self._generate_then_send(stream, served, words[:planned], prompt_tokens)
            nursery.cancel_scope.cancel()

    def _to_evaluate(self, prompt: str, prompt_tokens: int) -> int:
        """Tokens of ``prompt`` to evaluate: all of them, or with ``prompt_cache`` those past the cached prefix."""
        if not self.prompt_cache:
            return prompt_tokens
        cached, self._evaluated = self._evaluated, prompt
        if cached == prompt:
            return 0
        common = len(os.path.commonprefix([cached, prompt]))
        return prompt_tokens if common == 0 else true_tokens(prompt[common:])

    @asynccontextmanager
    async def _model_lock(self) -> AsyncIterator[None]:
        """The slot; while waiting for it, a request counts as waiting (and interrupts a stream)."""
        self._waiting += 1
        try:
            await self._slot.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._slot.release()

    async def _cut_off(self, stream: trio.SocketStream) -> bool:
        """llama-cpp-python after each chunk: another request waits, so ``[DONE]`` and stop."""
        if not (self.interrupt_requests and self._waiting):
            return False
        self.interrupted += 1
        await stream.send_all(b"data: [DONE]\n\n")
        return True

    async def _stream_tokens(
        self, stream: trio.SocketStream, served: Served, words: list[str], prompt_tokens: int
    ) -> None:
        try:
            step = max(1, self.tokens_per_event)
            if self.interrupt_requests:
                await stream.send_all(_event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}))
                if await self._cut_off(stream):
                    return
            for index in range(0, len(words), step):
                if self.drop_after is not None and index >= self.drop_after:
                    await stream.aclose()  # the process died: no last chunk, no [DONE]
                    return
                batch = words[index : index + step]
                await trio.sleep(len(batch) / self.gen_rate)
                for _ in batch:
                    self._count(served)
                piece = (" " if index else "") + " ".join(batch)
                await stream.send_all(_event({"choices": [{"index": 0, "delta": {"content": piece}}]}))
                self._streamed.set()
                self._streamed = trio.Event()
                if await self._cut_off(stream):
                    return
            reason = "length" if served.planned == served.max_tokens else "stop"
            last = {
                "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(words)},
            }
            await stream.send_all(_event(last) + b"data: [DONE]\n\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # llama.cpp: a failed write cancels the task
        finally:
            served.finished_at = trio.current_time()

    async def _stuck(self, stream: trio.SocketStream, served: Served) -> None:
        """Never a token; pings (streamed) until the client goes; then the slot is free again."""
        try:
            while not served.left.is_set():
                with trio.move_on_after(self.ping_s if served.stream and self.ping_s is not None else math.inf):
                    await served.left.wait()
                if not served.left.is_set():
                    await stream.send_all(b": ping\n\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            served.finished_at = trio.current_time()

    async def _generate_then_send(
        self, stream: trio.SocketStream, served: Served, words: list[str], prompt_tokens: int
    ) -> None:
        with trio.CancelScope(shield=True):  # generation does not notice the client leaving
            for _ in words:
                await trio.sleep(1 / self.gen_rate)
                self._count(served)
            served.finished_at = trio.current_time()
        answer = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": " ".join(words)}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(words)},
        }
        await _send_json(stream, answer)

    def _count(self, served: Served) -> None:
        served.generated += 1
        if served.gone_at is not None:
            served.generated_after_gone += 1

    def _answer(self, prompt: str) -> str:
        if self.behaviour == "empty":
            return ""
        if self.behaviour == "echo":
            return prompt
        if self.behaviour == "obey" and not _INSTRUCTION.search(prompt):
            return prompt  # no instruction reached the model: it carries on with the text
        summary = _summary(prompt)
        if self.behaviour == "invent":
            summary = _NUMBER.sub(lambda m: str(int(m.group()) + 8), summary)
        return summary


def _summary(prompt: str) -> str:
    """A summary in the fake's own words: a few words per paragraph, then every figure."""
    paragraphs = [p for p in re.split(r"\n\s*\n", prompt) if p.strip() and not _ABOUT_THE_TASK.search(p)]
    points = [" ".join(p.split()[:_WORDS_PER_POINT]) for p in paragraphs[:12]]
    figures = list(dict.fromkeys(_FIGURE.findall("\n".join(paragraphs))))[:24]
    text = "In short: " + "; ".join(points) + "."
    if figures:
        text += " Figures: " + ", ".join(figures) + "."
    return text


async def _watch_close(stream: trio.SocketStream, served: Served, scope: trio.CancelScope) -> None:
    """Note when the client closes its end (a read sees EOF or a reset)."""
    try:
        while await stream.receive_some(4096):
            pass
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    if served.finished_at is None:
        served.gone_at = trio.current_time()
    served.left.set()


async def _read_request(stream: trio.SocketStream) -> tuple[str, str, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        more = await stream.receive_some(65536)
        if not more:
            return None
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        more = await stream.receive_some(65536)
        if not more:
            return None
        body += more
    return method, path, body


def _head(status: str, content_type: str, length: int | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _event(payload: object) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


async def _send_json(stream: trio.SocketStream, payload: object, *, status: str = "200 OK") -> None:
    data = json.dumps(payload).encode()
    await stream.send_all(_head(status, "application/json", len(data)) + data)


async def open_fake_model(nursery: trio.Nursery, model: FakeModel | None = None) -> FakeModel:
    """Serve ``model`` on 127.0.0.1 (a free port) in ``nursery``; sets ``model.base_url``."""
    model = model if model is not None else FakeModel()
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    model.base_url = f"http://127.0.0.1:{port}/v1"
    await nursery.start(partial(trio.serve_listeners, model.handle, listeners))
    return model
