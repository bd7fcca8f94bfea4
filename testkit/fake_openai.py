"""A small OpenAI-compatible server for tests, served by hypercorn's trio worker on loopback.

Start it inside the test's nursery::

    server = await open_fake_openai(nursery, FakeServer(tokenize=None))
    settings = LLMSettings(server.base_url, timeout_s=2.0)
    server.model_id = "other-model"      # knobs are plain attributes, changed any time

Token counts follow a linear model that differs per script class, with its own
character classifier (independent of ``ctxtrio.text.tokens``) and a fixed chat
template overhead: ``11 + 0.25·prose + 0.4·code + 0.9·han + 0.8·hangul + 0.7·kana +
0.5·other``, rounded (``rates`` knob; :data:`DENSE_RATES` is a second profile far
from the cold-start guess). Like some real servers it reports ``usage.prompt_tokens``
without the part of the prompt its prefix cache already holds (the template's head
once anything was sent, plus any prefix shared with the previous prompt), which is
what calibration must be robust against.

Failure modes (``mode``): ``"ok"``, ``"http500"``, ``"hang"`` (never answers),
``"garbage"`` (not JSON), ``"error_body"`` (200 with ``{"error": ...}``),
``"zero_usage"``, ``"no_usage"``, ``"empty_content"``. ``delay_s`` makes every answer
slow but fine. "Refused" is :func:`closed_port_url`. Cancelling the nursery stops it.
"""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Final, Literal, cast

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from hypercorn.typing import ASGIFramework
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

__all__ = [
    "ContextStyle",
    "DENSE_RATES",
    "FakeServer",
    "Mode",
    "TRUE_RATES",
    "closed_port_url",
    "open_fake_openai",
    "true_tokens",
]

Mode = Literal[
    "ok", "http500", "hang", "garbage", "error_body", "zero_usage", "no_usage", "empty_content"
]
ContextStyle = Literal["lmstudio", "llamacpp", "ollama"] | None
Reply = Callable[[list[dict[str, str]]], str]

TRUE_RATES: Final[Mapping[str, float]] = {
    "prose": 0.25,
    "code": 0.4,
    "han": 0.9,
    "hangul": 0.8,
    "kana": 0.7,
    "other": 0.5,
}
#: A tokenizer far from the cold-start guess (dense for ASCII, cheap for CJK).
DENSE_RATES: Final[Mapping[str, float]] = {
    "prose": 0.36,
    "code": 0.7,
    "han": 0.6,
    "hangul": 0.45,
    "kana": 0.5,
    "other": 0.8,
}
TEMPLATE_HEAD_TOKENS: Final = 4
TEMPLATE_TAIL_TOKENS: Final = 7  # head + tail = the fixed overhead of 11
_CODE_SYMBOLS: Final = frozenset("{}[]<>=+*/\\|&^%$#@~`_")


def _script(char: str) -> str:
    point = ord(char)
    if point < 0x80:
        return "code" if char in _CODE_SYMBOLS else "prose"
    if 0x4E00 <= point <= 0x9FFF or 0x3400 <= point <= 0x4DBF:
        return "han"
    if 0xAC00 <= point <= 0xD7A3 or 0x1100 <= point <= 0x11FF or 0x3130 <= point <= 0x318F:
        return "hangul"
    if 0x3040 <= point <= 0x30FF:
        return "kana"
    return "other"


def _weight(text: str, rates: Mapping[str, float] = TRUE_RATES) -> float:
    return sum(rates[_script(char)] for char in text)


def true_tokens(text: str, rates: Mapping[str, float] = TRUE_RATES) -> int:
    """The fake tokenizer's exact count for ``text`` alone (no template) under ``rates``."""
    return round(_weight(text, rates))


def _default_reply(messages: list[dict[str, str]]) -> str:
    last = messages[-1]["content"] if messages else ""
    return f"Summary of {len(last)} characters."


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for left, right in zip(a, b):
        if left != right:
            break
        size += 1
    return size


@dataclass
class FakeServer:
    """The fake's knobs and what it saw. ``base_url`` ends in ``/v1``."""

    mode: Mode = "ok"
    delay_s: float = 0.0
    tokenize: Literal["llamacpp", "extras"] | None = "llamacpp"
    context_style: ContextStyle = "llamacpp"
    n_ctx: int = 8192
    model_id: str = "fake-model-7b"
    reply: Reply = _default_reply
    rates: Mapping[str, float] = field(default_factory=lambda: dict(TRUE_RATES))
    base_url: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)
    chat_bodies: list[dict[str, object]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)  # message contents of each chat, joined
    _last_prompt: str | None = None

    @property
    def chat_count(self) -> int:
        """How many chat completions were requested."""
        return len(self.chat_bodies)

    def app(self) -> Starlette:
        """The ASGI app: one route that dispatches on method and path."""
        return Starlette(routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST"])])

    async def _dispatch(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        self.requests.append((request.method, path))
        body = await request.body()
        if self.delay_s:
            await trio.sleep(self.delay_s)
        if self.mode == "hang":
            await trio.sleep_forever()
        if self.mode == "http500":
            return PlainTextResponse("Internal Server Error", status_code=500)
        if self.mode == "garbage":
            return PlainTextResponse("<html>this is not json", status_code=200)
        if self.mode == "error_body":
            return JSONResponse({"error": {"message": "model crashed"}})
        payload = json.loads(body) if body else {}
        route = (request.method, path)
        if route == ("POST", "/v1/chat/completions"):
            return self._chat(payload)
        if route == ("GET", "/v1/models"):
            models = [{"id": self.model_id, "object": "model"}]
            return JSONResponse({"object": "list", "data": models})
        if route == ("POST", "/tokenize") and self.tokenize == "llamacpp":
            count = true_tokens(payload["content"], self.rates)
            return JSONResponse({"tokens": list(range(count))})
        if route == ("POST", "/v1/extras/tokenize") and self.tokenize == "extras":
            # llama-cpp-python adds a BOS token; the slope cancels it.
            count = 1 + true_tokens(payload["input"], self.rates)
            return JSONResponse({"tokens": list(range(count))})
        context = self._context(route)
        if context is not None:
            return context
        if self.context_style == "lmstudio":
            unexpected = f"Unexpected endpoint or method. ({request.method} {path})"
            return JSONResponse({"error": unexpected})
        return JSONResponse({"detail": "Not Found"}, status_code=404)

    def _chat(self, payload: dict[str, object]) -> Response:
        self.chat_bodies.append(payload)
        raw = payload.get("messages")
        messages = cast("list[dict[str, str]]", raw if isinstance(raw, list) else [])
        prompt = "".join(message["content"] for message in messages)
        self.prompts.append(prompt)
        weight = _weight(prompt, self.rates) + 4 * (len(messages) - 1)
        cached = 0
        if self._last_prompt is not None:  # the prefix cache holds the template head and more
            shared = prompt[: _common_prefix(prompt, self._last_prompt)]
            cached = TEMPLATE_HEAD_TOKENS + math.floor(_weight(shared, self.rates))
        self._last_prompt = prompt
        prompt_tokens = round(TEMPLATE_HEAD_TOKENS + TEMPLATE_TAIL_TOKENS + weight) - cached
        text = "" if self.mode == "empty_content" else self.reply(messages)
        answer: dict[str, object] = {
            "id": f"chatcmpl-{len(self.chat_bodies)}",
            "object": "chat.completion",
            "model": self.model_id,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }],
        }
        if self.mode == "zero_usage":
            answer["usage"] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        elif self.mode != "no_usage":
            completion_tokens = true_tokens(text, self.rates)
            answer["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return JSONResponse(answer)

    def _context(self, route: tuple[str, str]) -> Response | None:
        if route == ("GET", "/api/v0/models") and self.context_style == "lmstudio":
            return JSONResponse({"object": "list", "data": [
                {"id": "unloaded-big", "state": "not-loaded", "max_context_length": 131072},
                {"id": self.model_id, "state": "loaded", "max_context_length": 32768,
                 "loaded_context_length": self.n_ctx},
            ]})  # fmt: skip
        if route == ("GET", "/props") and self.context_style == "llamacpp":
            return JSONResponse({"default_generation_settings": {"n_ctx": self.n_ctx}})
        if route == ("POST", "/api/show") and self.context_style == "ollama":
            return JSONResponse({
                "parameters": f'stop "<end>"\nnum_ctx {self.n_ctx}',
                "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
            })  # fmt: skip
        return None


async def open_fake_openai(nursery: trio.Nursery, server: FakeServer | None = None) -> FakeServer:
    """Serve ``server`` (default knobs if None) on ``127.0.0.1:<free port>`` in ``nursery``.

    Returns once it accepts connections, with ``base_url`` set. It lives until
    ``nursery`` is cancelled.
    """
    server = server if server is not None else FakeServer()
    config = HypercornConfig()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    config.graceful_timeout = 0.1
    app = cast("ASGIFramework", server.app())
    binds: list[str] = await nursery.start(partial(serve, app, config, mode="asgi"))
    server.base_url = binds[0] + "/v1"
    return server


def closed_port_url() -> str:
    """A ``/v1`` base URL on a loopback port nothing listens on (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
