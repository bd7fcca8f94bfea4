"""A fake ``POST /v1/embeddings`` endpoint for tests, as an ``httpx.MockTransport``.

The request and answer follow the documented shape: OpenAI's API reference, "Create
embeddings" (request ``{"model", "input": [str], "encoding_format": "float"}``; answer
``{"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [float]}],
"model", "usage": {"prompt_tokens", "total_tokens"}}``), which llama.cpp's
``llama-server --embeddings`` (tools/server/README.md, ``POST /v1/embeddings``) and
llama-cpp-python's server (``create_embedding``) also serve. An unknown model gets HTTP
404 with an ``{"error": {"message"}}`` body, as OpenAI answers.

Meaning is imitated: a text's vector is the normalised sum of one pseudo-random vector
per word, where the words of a ``synonyms`` group share one vector, so a paraphrase
made of synonyms lands near its original while sharing no word with it.

Knobs are plain attributes: ``down`` (every request fails to connect, like a killed
server), ``down_after`` (goes down by itself once it has answered that many requests),
``delay_s`` (a slow answer, in trio time), ``seconds_per_token`` (a CPU-bound model: each request
takes this many trio seconds per input token (:func:`bert_tokens`), and requests are answered one
at a time, in the order they came, as llama-cpp-python's server computes them: one model behind
``llama_outer_lock``/``llama_inner_lock``, anyio Locks, which wake waiters in order;
llama_cpp/server/app.py, ``get_llama_proxy``), ``dimension``, ``refuse`` (a request holding
an input that contains one of these strings is refused whole with HTTP 400 and an
``{"error": {"message", "type": "invalid_request_error", "code"}}`` body, as OpenAI answers
an input it will not take (API reference, "Error codes": 400, "invalid encoding, format, or
size of request data") and llama-cpp-python's server one longer than its context
(llama_cpp/server/errors.py, ``context_length_exceeded``); nothing of it is embedded).
``ubatch_tokens`` (a request holding an input of more tokens than this fails whole with
HTTP 500, as llama.cpp's ``llama-server`` answers an input longer than its physical batch,
``--ubatch-size``, 512 by default: :data:`TOO_LARGE`). ``requests`` keeps each answered
request's inputs, so a test can tell what was embedded, and how often; ``refusals`` each
refused request's (400 or 500).

``answers`` (None: every request is answered as it comes; a number: that many requests are
answered in all, later ones wait unanswered until :meth:`answer` or :meth:`release` lets them
on) is an endpoint exactly as slow as the test says, on any machine: a backlog it holds
outlasts whatever the test does meanwhile, where ``delay_s`` on real time races the test's
own pace. A request held longer than the client's ``embed_timeout_s`` fails as any late answer does.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, cast

import httpx
import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from ctxtrio._config import Config
from ctxtrio.llm import embeddings
from ctxtrio.store import vector_batch, vector_task

if TYPE_CHECKING:
    from pathlib import Path

    import pytest
    from hypercorn.typing import ASGIFramework
    from starlette.requests import Request

__all__ = [
    "TOO_LARGE",
    "FakeEmbeddings",
    "bert_tokens",
    "quick_embedders",
    "serve_fake_embeddings",
    "served_config",
    "whole_batches",
]

_WORD = re.compile(r"\w+")
#: llama.cpp's WordPiece words (llama-vocab.cpp, ``llm_tokenizer_wpm_session::preprocess``, vendored in
#: llama-cpp-python 0.3.36's sdist): text is cut at these whitespace code points (unicode.cpp's
#: unicode_set_whitespace, from scripts/gen-unicode-data.py's White_Space list), ...
_WPM_SPACE = frozenset(
    [*range(0x09, 0x0E), *range(0x2000, 0x200B), 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)
#: ... a code point of category C* (control, format such as U+200B, private use) is dropped, and so is a mark
#: (M*: the model strips accents, after NFD), without ending the word it stands in ...
_WPM_DROPPED = ("C", "M")
#: ... and one of these is a word of its own: punctuation (P*), an ASCII symbol, an ideograph (``is_chinese_char``).
_WPM_IDEOGRAPHS = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip
#: llama.cpp's answer to an input of more tokens than the physical batch (``n_ubatch``), vendored in
#: llama-cpp-python 0.3.36's sdist: tools/server/server-context.cpp, ``update_slots`` (an embedding task
#: cannot be split across batches: ``send_error(slot, "input (%d tokens) is too large to process. increase
#: the physical batch size (current batch size: %d)", ERROR_TYPE_SERVER)``), server-common.cpp,
#: ``format_error_response`` (ERROR_TYPE_SERVER: ``{"code": 500, "message", "type": "server_error"}``, the HTTP
#: status being ``code``), under ``{"error": ...}``; the request's other inputs are not answered
#: (``wait_for_all`` returns the first error). Older versions said "input is too large to process. increase
#: the physical batch size" (ggml-org/llama.cpp#12295).
TOO_LARGE = (
    "input ({tokens} tokens) is too large to process. increase the physical batch size (current batch size: {ubatch})"
)


def bert_tokens(text: str) -> int:
    """At most the tokens llama-server makes of ``text`` with a BERT WordPiece model (all-MiniLM-L6-v2), [CLS]
    and [SEP] included: its words, cut as llama.cpp cuts them (the tables above), each of which becomes one
    or more pieces, or one [UNK] when its pieces are not all in the vocabulary (``tokenize``: "discard all").

    Against llama-server's own count (its /tokenize, or its 500's "input (N tokens)"): 522 = 522 for 520
    characters of a psql table's rule, 607 = 607 for 605 Chinese characters, 526 against 528 for the rule led
    by "Quolls › Quoll 7" (WordPiece cuts "quolls" in two); tests/test_testkit.py has text it counts fewer of
    (identifiers) and text the count of every other character took for more (box drawing, emoji, accents).
    """
    words, in_word = 0, False
    for char in unicodedata.normalize("NFD", text):
        point = ord(char)
        if point in _WPM_SPACE:
            in_word = False
            continue
        category = unicodedata.category(char)
        if category.startswith(_WPM_DROPPED) or point in (0, 0xFFFD):
            continue
        alone = category.startswith("P") or (point < 0x7F and category.startswith("S"))
        if alone or any(low <= point <= high for low, high in _WPM_IDEOGRAPHS):
            words, in_word = words + 1, False
        elif not in_word:
            words, in_word = words + 1, True
    return words + 2


@dataclass
class FakeEmbeddings:
    """The fake endpoint; :meth:`transport` is what ``open_llm_client`` takes."""

    model: str = "fake-embed"
    dimension: int = 64
    synonyms: list[set[str]] = field(default_factory=list)
    down: bool = False
    down_after: int | None = None
    delay_s: float = 0.0
    refuse: set[str] = field(default_factory=set)
    ubatch_tokens: int | None = None
    requests: list[list[str]] = field(default_factory=list)
    refusals: list[list[str]] = field(default_factory=list)
    seconds_per_token: float = 0.0
    answers: int | None = None
    _model_lock: trio.Lock = field(default_factory=trio.Lock, repr=False)
    #: Requests that came so far (each takes the next number; ``answers`` lets the first that many on).
    _came: int = field(default=0, repr=False)
    #: Set (and replaced) when a request comes or is answered, or ``answers`` changes: whoever waits looks again.
    _news: trio.Event = field(default_factory=trio.Event, repr=False)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    @property
    def embedded(self) -> list[str]:
        """Every input text embedded so far, in order (repeats included)."""
        return [text for batch in self.requests for text in batch]

    @property
    def answered(self) -> int:
        """Requests answered so far, refused ones included."""
        return len(self.requests) + len(self.refusals)

    async def answer(self, more: int = 1) -> None:
        """Let ``more`` requests past ``answers`` and wait until they came and were answered (a held backlog goes
        on by exactly that many requests)."""
        assert self.answers is not None, "answer() needs answers set: the fake holds nothing"
        target = self.answered + more
        self.answers += more
        self._tell()
        while self.answered < target:
            await self._news.wait()

    async def holding(self) -> None:
        """Wait until a request is held past ``answers``: its sender (a background embedder's pass) waits in the
        fake, so whatever it does before its next request (store the last batch, look at the catalog) is done."""
        while self.answers is None or self._came <= self.answers:
            await self._news.wait()

    def release(self) -> None:
        """Answer every request from now on, those held too."""
        self.answers = None
        self._tell()

    def _tell(self) -> None:
        """Wake whoever waits for news (held requests, :meth:`answer`, :meth:`holding`); later waits take a new event."""
        self._news.set()
        self._news = trio.Event()

    async def _held(self) -> None:
        """Wait while this request is past ``answers``."""
        number, self._came = self._came, self._came + 1
        self._tell()
        while self.answers is not None and number >= self.answers:
            await self._news.wait()

    def vector(self, text: str) -> list[float]:
        """The (unnormalised) vector this fake gives ``text``."""
        total = [0.0] * self.dimension
        for word in _WORD.findall(text.lower()):
            key = next((min(group) for group in self.synonyms if word in group), word)
            seed = hashlib.sha256(key.encode()).digest()
            for i in range(self.dimension):
                byte = seed[i % len(seed)] ^ (i * 37 % 256)
                total[i] += (byte / 255.0) - 0.5
        return total

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.down_after is not None and len(self.requests) >= self.down_after:
            self.down, self.down_after = True, None
        if self.down:
            raise httpx.ConnectError("connection refused (fake endpoint down)", request=request)
        await self._held()
        try:
            return await self._answer(request)
        finally:
            self._tell()  # (answered, or gone: answer() looks again)

    async def _answer(self, request: httpx.Request) -> httpx.Response:
        if self.delay_s:
            await trio.sleep(self.delay_s)
        if request.method != "POST" or not request.url.path.endswith("/embeddings"):
            return httpx.Response(404, json={"error": {"message": f"no route {request.url.path}"}})
        body = json.loads(request.content)
        if body.get("model") not in ("", None, self.model):
            return httpx.Response(404, json={"error": {"message": f"model {body.get('model')!r} not found"}})
        inputs = body["input"]
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        refused = next((text for text in texts for word in self.refuse if word in text), None)
        if refused is not None:
            self.refusals.append(texts)
            message = (
                f"This model's maximum context length is 512 tokens, however you requested more ({refused[:20]}...)"
            )
            error = {
                "message": message,
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
            return httpx.Response(400, json={"error": error})
        too_large = self._too_large(texts)
        if too_large is not None:
            self.refusals.append(texts)
            return httpx.Response(500, json={"error": {"code": 500, "message": too_large, "type": "server_error"}})
        if self.seconds_per_token:
            async with self._model_lock:  # one request computed at a time (trio's Lock is FIFO too)
                await trio.sleep(self.seconds_per_token * sum(map(bert_tokens, texts)))
        self.requests.append(texts)
        data = [{"object": "embedding", "index": i, "embedding": self.vector(t)} for i, t in enumerate(texts)]
        tokens = sum(max(1, math.ceil(len(t) / 4)) for t in texts)
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": self.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _too_large(self, texts: list[str]) -> str | None:
        """llama-server's message for the first input longer than ``ubatch_tokens``, if one is."""
        if self.ubatch_tokens is None:
            return None
        tokens = next((n for n in map(bert_tokens, texts) if n > self.ubatch_tokens), None)
        return None if tokens is None else TOO_LARGE.format(tokens=tokens, ubatch=self.ubatch_tokens)


async def serve_fake_embeddings(nursery: trio.Nursery, fake: FakeEmbeddings) -> str:
    """Serve ``fake`` over HTTP on ``127.0.0.1:<free port>`` in ``nursery``; returns its ``/v1`` base URL."""

    async def endpoint(request: Request) -> Response:
        forwarded = httpx.Request(request.method, str(request.url), content=await request.body())
        answer = await fake._handle(forwarded)
        return Response(answer.content, answer.status_code, media_type="application/json")

    config = HypercornConfig()
    config.bind = ["127.0.0.1:0"]
    config.loglevel = "WARNING"
    config.graceful_timeout = 0.1
    app = cast("ASGIFramework", Starlette(routes=[Route("/{path:path}", endpoint, methods=["GET", "POST"])]))
    binds: list[str] = await nursery.start(partial(serve, app, config, mode="asgi"))
    return binds[0] + "/v1"


def served_config(data_dir: Path, fake: FakeEmbeddings, url: str) -> Config:
    """A server's settings embedding through ``fake`` served at ``url`` (:func:`serve_fake_embeddings`), with
    no LLM and no audit log, and query expansion off: what a test finds, it finds by meaning alone, not by
    word neighbours or the thesaurus (text/neighbours.py)."""
    return Config(
        data_dir=data_dir,
        llm_enabled=False,
        audit=False,
        embed_model=fake.model,
        embed_base_url=url,
        query_expansion=False,
    )


def quick_embedders(
    monkeypatch: pytest.MonkeyPatch, *, poll_s: float, retry_max_s: float | None = None, query_s: float | None = None
) -> None:
    """The background embedders (store/vector_task, their waits in store/vector_batch) retry after 0.05 s and poll every ``poll_s``.

    For tests on real time (the store's worker threads, a loopback endpoint), where the module's
    seconds-long waits would only slow them; ``retry_max_s`` caps the doubling, ``query_s`` gives a
    query's vector a loaded machine's while.
    """
    monkeypatch.setattr(vector_batch, "RETRY_S", 0.05)
    monkeypatch.setattr(vector_task, "POLL_S", poll_s)
    if retry_max_s is not None:
        monkeypatch.setattr(vector_batch, "RETRY_MAX_S", retry_max_s)
    if query_s is not None:
        monkeypatch.setattr(vector_task, "QUERY_S", query_s)


def whole_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch a background embedder sends goes in one request, so a test can count batches by requests
    (``down_after``, :meth:`FakeEmbeddings.answer`). Otherwise ``Embedder.documents`` sends a batch in requests
    sized by the real time the fake's answers took (llm/embeddings.py, BATCH_S and FIRST_TEXTS): a loaded
    machine's pace, not the test's. (With the fake answering in 0.06 s, a batch of 16 texts went in requests of 4
    and 9 texts, then the rest.)
    """
    monkeypatch.setattr(embeddings, "BATCH_S", math.inf)
    monkeypatch.setattr(embeddings, "FIRST_TEXTS", sys.maxsize)
