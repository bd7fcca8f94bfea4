"""The HTTP side of :mod:`.client`: request bodies, stream closing, and judging answers.

With :mod:`.client`, the only modules of ctxtrio that import httpx. The judges turn an
``httpx.Response`` into a value or an :class:`~ctxtrio._errors.LLMResponseError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import httpcore
import httpx
import trio

from .._errors import LLMResponseError
from ._json import as_int, as_object, json_object, parse_json, status_message, whole_characters
from .messages import Completion

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

__all__ = [
    "InputRefusedError",
    "OneChunk",
    "close_stream",
    "optional",
    "parse_completion",
    "parse_embeddings",
    "parse_model_ids",
]

_T = TypeVar("_T")

#: Statuses an embeddings endpoint answers for an input it will not take: 400, as OpenAI's API ("Error
#: codes": 400 BadRequestError, "invalid encoding, format, or size of request data"), Voyage's ("number of
#: tokens in an example exceeds the context length") and llama-cpp-python's server (a text longer than the
#: context: llama_cpp/server/errors.py, ``context_length_exceeded``) answer; 413, a body too large; 422, the
#: validation error of FastAPI-based servers. Not 404 (no such model: the endpoint is unusable), not
#: 408/429 (come back later), not 5xx: llama.cpp's llama-server answers 500 "input (N tokens) is too large
#: to process" (ggml-org/llama.cpp#12295), as it answers a failure of its own, so a 500 is judged by a
#: one-word input sent right after it (``client.LLMClient.embed``), and is this error only if that is embedded
#: and the same request, sent once more, is answered 500 again (a 500 of a moment is not a refusal).
_INPUT_REFUSED = frozenset({400, 413, 422})


class InputRefusedError(LLMResponseError):
    """The embeddings endpoint answered that it will not take these inputs (:data:`_INPUT_REFUSED`, or a
    500 twice while it embeds a one-word input: ``client.LLMClient.embed``).

    The server is up and answered: the breaker counts it as an answer (:mod:`._requests`), so
    the background embedders can send the inputs again one by one and learn which is refused
    (``store/vector_task``) instead of finding the breaker open.
    """


class OneChunk(httpx.AsyncByteStream):
    """A request body that is an iterator object, not an async generator.

    httpx's own ``ByteStream.__aiter__`` is an async generator; when a request is
    cancelled while its body is being sent, trio warns that the generator was
    garbage-collected unexhausted (encode/httpx#3686). This stream has nothing to close.
    """

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __aiter__(self) -> AsyncIterator[bytes]:
        return Once(self._data)


class Once:
    """An async iterator over exactly one chunk."""

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data

    def __aiter__(self) -> Once:
        return self

    async def __anext__(self) -> bytes:
        data, self._data = self._data, None
        if data is None:
            raise StopAsyncIteration
        return data


async def close_stream(response: httpx.Response, lines: AsyncIterator[str]) -> None:
    """Close ``response`` (an unfinished one closes its connection: the server stops).

    httpx reads a stream through a chain of async generators; leaving one suspended
    would have trio warn when it is collected (encode/httpx#3686), so after the close
    the chain is run to its end: reading a closed connection ends it at once.
    """
    with trio.CancelScope(shield=True) as closing:
        closing.deadline = trio.current_time() + 2.0
        await response.aclose()
        try:
            async for _ in lines:
                pass
        except (httpx.HTTPError, httpcore.ReadError, trio.ClosedResourceError):
            pass


def optional(parse: Callable[[object], _T | None]) -> Callable[[httpx.Response], _T | None]:
    """Judge for an endpoint the server may lack: any HTTP answer is fine, odd shapes are None."""

    def judge(response: httpx.Response) -> _T | None:
        if response.status_code >= 300:
            return None
        return parse(parse_json(response))

    return judge


def parse_completion(response: httpx.Response, *, require_content: bool) -> Completion:
    payload = json_object(response, "chat completion")
    choices = payload.get("choices")
    first = as_object(choices[0]) if isinstance(choices, list) and choices else None
    message = as_object(first.get("message")) if first is not None else None
    content = message.get("content") if message is not None else None
    if not isinstance(content, str):
        content = None
    if require_content and (content is None or not content.strip()):
        raise LLMResponseError("chat completion: empty content")
    if first is None and not require_content:
        raise LLMResponseError("chat completion: no choices")
    usage = as_object(payload.get("usage"))
    return Completion(
        text=whole_characters(content or "").strip(),
        prompt_tokens=as_int(usage.get("prompt_tokens")) if usage is not None else None,
        completion_tokens=as_int(usage.get("completion_tokens")) if usage is not None else None,
    )


def parse_model_ids(response: httpx.Response) -> list[str]:
    payload = json_object(response, "model list")
    data = payload.get("data")
    if not isinstance(data, list):
        raise LLMResponseError("model list: no 'data' array")
    ids = [entry.get("id") for entry in map(as_object, data) if entry is not None]
    return [model_id for model_id in ids if isinstance(model_id, str) and model_id]


def parse_embeddings(response: httpx.Response, count: int) -> list[list[float]]:
    """The vectors of a ``POST /embeddings`` answer, in input order.

    The shape is OpenAI's (API reference, "Create embeddings": ``{"object": "list",
    "data": [{"object": "embedding", "index": i, "embedding": [floats]}], "model",
    "usage"}``), which llama.cpp's ``llama-server --embeddings`` (tools/server/README.md,
    ``POST /v1/embeddings``) and llama-cpp-python's server (``create_embedding``) follow.
    Items are put in order by ``index`` where given. Anything else (a count that differs
    from ``count``, vectors of different lengths, non-numbers) is LLMResponseError; an input
    refused (HTTP 400, 413, 422) is its :class:`InputRefusedError`.
    """
    if response.status_code in _INPUT_REFUSED:
        raise InputRefusedError(status_message(response, "embeddings"))
    payload = json_object(response, "embeddings")
    data = payload.get("data")
    if not isinstance(data, list) or len(data) != count:
        raise LLMResponseError(
            f"embeddings: expected {count} vectors, got {len(data) if isinstance(data, list) else 'none'}"
        )
    vectors: list[list[float] | None] = [None] * count
    for position, raw in enumerate(data):
        item = as_object(raw)
        vector = item.get("embedding") if item is not None else None
        index = as_int(item.get("index")) if item is not None else None
        slot = index if index is not None and 0 <= index < count else position
        if not isinstance(vector, list) or not vector or not all(isinstance(x, (int, float)) for x in vector):
            raise LLMResponseError("embeddings: an item has no list of numbers as 'embedding'")
        vectors[slot] = [float(x) for x in vector]
    found = [vector for vector in vectors if vector is not None]
    if len(found) != count or len({len(vector) for vector in found}) != 1:
        raise LLMResponseError("embeddings: indices repeat or vectors differ in length")
    return found
