"""A small OpenAI-compatible server for tests, served by hypercorn's trio worker on loopback.

Start it inside the test's nursery::

    server = await open_fake_openai(nursery, FakeServer(tokenize=None))
    settings = LLMSettings(server.base_url, timeout_s=2.0)
    server.model_id = "other-model"      # knobs are plain attributes, changed any time

Token counts follow a linear model that differs per character class the way Gemma 3's
tokenizer does (``shared/token-truth/README.md``: one token per digit, about one per
emoji code point, prose ~0.25 a character, Korean ~0.9, Chinese ~0.45), with its own
character classifier (independent of ``ctxtrio.text.tokens``) and a fixed chat
template overhead of 11 (``rates`` knob; :data:`DENSE_RATES` is a second profile far
from the cold-start guess). Like some real servers it reports ``usage.prompt_tokens``
without the part of the prompt its prefix cache already holds (the template's head
once anything was sent, plus any prefix shared with the previous prompt), which is
what calibration must be robust against.

Tokenize endpoints (``tokenize`` knob), at the paths the real servers serve:

* ``"extras"`` — llama-cpp-python 0.3.x: ``POST /extras/tokenize {"input"}`` at the
  server root (not under ``/v1``), ``{"tokens": [...]}`` with BOS prepended
  (llama_cpp/server/app.py ``tokenize`` calls ``llama.tokenize(..., special=True)``,
  and the model adds BOS). It also refuses a prompt over ``n_ctx`` with HTTP 400 and
  "This model's maximum context length is N tokens" (llama_cpp/server/errors.py,
  ``context_length_exceeded``), and serves no context endpoint.
* ``"llamacpp"`` — llama.cpp ``llama-server``: ``POST /tokenize {"content"}`` →
  ``{"tokens": [...]}``, no BOS unless ``add_special`` (tools/server/README.md).
* ``"vllm"`` — vLLM: ``POST /tokenize {"prompt"}`` → ``{"count", "max_model_len",
  "tokens"}`` (``TokenizeCompletionRequest`` / ``TokenizeResponse``).

Context styles (``context_style``): ``"lmstudio"`` (``GET /api/v0/models``,
``loaded_context_length``), ``"llamacpp"`` (``GET /props``), ``"vllm"``
(``max_model_len`` in ``GET /v1/models``), ``"ollama"`` (``GET /api/ps``, the running
model's ``context_length``, and ``POST /api/show``), None (tells nothing).

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
from typing import TYPE_CHECKING, Final, Literal, cast

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from hypercorn.typing import ASGIFramework
    from starlette.requests import Request

__all__ = [
    "ContextStyle",
    "TokenizeStyle",
    "DENSE_RATES",
    "FakeServer",
    "Mode",
    "TRUE_RATES",
    "closed_port_url",
    "open_fake_openai",
    "true_tokens",
]

Mode = Literal["ok", "http500", "hang", "garbage", "error_body", "zero_usage", "no_usage", "empty_content"]
ContextStyle = Literal["lmstudio", "llamacpp", "vllm", "ollama"] | None
TokenizeStyle = Literal["extras", "llamacpp", "vllm"] | None
Reply = Callable[[list[dict[str, str]]], str]

#: Gemma-like: one token per digit and per emoji/symbol, prose letters cheap, Hangul dense.
TRUE_RATES: Final[Mapping[str, float]] = {
    "digit": 1.0,
    "space": 0.12,
    "letter": 0.22,
    "punct": 0.6,
    "han": 0.45,
    "hangul": 0.9,
    "kana": 0.5,
    "letter_other": 0.35,
    "symbol": 1.0,
}
#: A tokenizer far from the cold-start guess (dense for ASCII, cheap for CJK).
DENSE_RATES: Final[Mapping[str, float]] = {
    "digit": 0.4,
    "space": 0.3,
    "letter": 0.36,
    "punct": 0.7,
    "han": 0.6,
    "hangul": 0.45,
    "kana": 0.5,
    "letter_other": 0.8,
    "symbol": 0.8,
}
TEMPLATE_HEAD_TOKENS: Final = 4
TEMPLATE_TAIL_TOKENS: Final = 7  # head + tail = the fixed overhead of 11


def _script(char: str) -> str:
    point = ord(char)
    if point < 0x80:
        if char.isdigit():
            return "digit"
        if char.isspace():
            return "space"
        return "letter" if char.isalpha() else "punct"
    if 0x4E00 <= point <= 0x9FFF or 0x3400 <= point <= 0x4DBF:
        return "han"
    if 0xAC00 <= point <= 0xD7A3 or 0x1100 <= point <= 0x11FF or 0x3130 <= point <= 0x318F:
        return "hangul"
    if 0x3040 <= point <= 0x30FF:
        return "kana"
    return "letter_other" if char.isalpha() else "symbol"


def _weight(text: str, rates: Mapping[str, float] = TRUE_RATES) -> float:
    """At least 1 for any non-empty text: no tokenizer drops a character (SentencePiece's
    ``--byte_fallback`` turns an unknown one into UTF-8 byte tokens, and byte-level BPE
    starts from bytes), and Gemma 3 counts "a" as 1 (``/extras/tokenize`` answers 2 with BOS)."""
    return max(1.0, sum(rates[_script(char)] for char in text)) if text else 0.0


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
    tokenize: TokenizeStyle = "llamacpp"
    context_style: ContextStyle = "llamacpp"
    n_ctx: int = 8192
    model_id: str = "fake-model-7b"
    #: Ids ``GET /v1/models`` lists before ``model_id``: models a server serves beside it, such as
    #: an embedding model (LM Studio's ``text-embedding-nomic-embed-text-v1.5``, the model key its
    #: docs' "List Downloaded Models" page shows). Chats name no model, so they reach ``model_id``.
    listed_first: tuple[str, ...] = ()
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
            models: list[dict[str, object]] = [{"id": self.model_id, "object": "model"}]
            if self.context_style == "vllm":
                models[0]["max_model_len"] = self.n_ctx
            models[:0] = [{"id": other, "object": "model"} for other in self.listed_first]
            return JSONResponse({"object": "list", "data": models})
        answer = self._tokenize(route, payload) or self._context(route)
        if answer is not None:
            return answer
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
        if self.tokenize == "extras" and prompt_tokens + cached >= self.n_ctx:
            message = (
                f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                f"{prompt_tokens + cached + 1} tokens ({prompt_tokens + cached} in the messages, 1 in the completion). "
                "Please reduce the length of the messages or completion."
            )
            error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
            return JSONResponse({"error": error}, status_code=400)
        text = "" if self.mode == "empty_content" else self.reply(messages)
        answer: dict[str, object] = {
            "id": f"chatcmpl-{len(self.chat_bodies)}",
            "object": "chat.completion",
            "model": self.model_id,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
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

    def _tokenize(self, route: tuple[str, str], payload: dict[str, object]) -> Response | None:
        """The tokenize endpoint of the ``tokenize`` style, if ``route`` is it."""
        if route == ("POST", "/tokenize") and self.tokenize == "llamacpp":
            count = true_tokens(str(payload["content"]), self.rates)
            return JSONResponse({"tokens": list(range(count))})
        if route == ("POST", "/tokenize") and self.tokenize == "vllm":
            count = true_tokens(str(payload["prompt"]), self.rates)
            return JSONResponse({"count": count, "max_model_len": self.n_ctx, "tokens": list(range(count))})
        if route == ("POST", "/extras/tokenize") and self.tokenize == "extras":
            count = 1 + true_tokens(str(payload["input"]), self.rates)  # BOS included
            return JSONResponse({"tokens": list(range(count))})
        return None

    def _context(self, route: tuple[str, str]) -> Response | None:
        if route == ("GET", "/api/v0/models") and self.context_style == "lmstudio":
            return JSONResponse({"object": "list", "data": [
                {"id": "unloaded-big", "state": "not-loaded", "max_context_length": 131072},
                {"id": self.model_id, "state": "loaded", "max_context_length": 32768,
                 "loaded_context_length": self.n_ctx},
            ]})  # fmt: skip
        if route == ("GET", "/props") and self.context_style == "llamacpp":
            return JSONResponse({"default_generation_settings": {"n_ctx": self.n_ctx}})
        if route == ("GET", "/api/ps") and self.context_style == "ollama":
            return JSONResponse({"models": [{"name": self.model_id, "model": self.model_id, "size_vram": 0,
                                             "context_length": self.n_ctx}]})  # fmt: skip
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
