"""Reading a streamed chat completion (Server-Sent Events), one line at a time. Pure.

OpenAI-compatible servers answer ``"stream": true`` with ``text/event-stream``: lines
``data: {json chunk}`` whose ``choices[0].delta.content`` carries the next piece of the
answer, blank lines between events, ``: ...`` comment lines as keep-alives
(sse-starlette, used by llama-cpp-python, pings every 15 s), and ``data: [DONE]`` at the
end (OpenAI, llama.cpp's ``llama-server``, LM Studio, Ollama's ``/v1`` layer). Usage
arrives in a last chunk when ``stream_options.include_usage`` is set (llama.cpp sends it
with ``timings`` regardless). A chunk with an ``error`` object (llama.cpp sends one
mid-stream, e.g. when the context is exceeded) ends the answer as an
:class:`~ctxtrio._errors.LLMResponseError`.
"""

from __future__ import annotations

import json

from .._errors import LLMResponseError
from ._json import as_int, as_object, error_body, snippet, whole_characters

__all__ = ["StreamedAnswer"]


class StreamedAnswer:
    """Feed it the lines of the stream; it keeps the text, usage and finish reason."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.finish_reason: str | None = None
        self.done = False
        self.chunks = 0

    @property
    def text(self) -> str:
        """The answer so far (a character split across two chunks as a UTF-16 pair made whole)."""
        return whole_characters("".join(self._parts))

    def feed(self, line: str) -> bool:
        """Take one line; True when it carried part of the answer (a token arrived)."""
        if not line.startswith("data:"):
            return False  # blank separators, ": ping" comments, "event:" names
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return False
        try:
            decoded: object = json.loads(data)
        except ValueError as exc:
            raise LLMResponseError(f"chat stream: a chunk is not JSON: {snippet(data)!r}") from exc
        chunk = as_object(decoded)
        if chunk is None:
            raise LLMResponseError(f"chat stream: a chunk is not an object: {snippet(data)!r}")
        message = error_body(chunk)
        if message is not None:
            raise LLMResponseError(f"chat stream: error chunk: {snippet(message)}")
        self.chunks += 1
        usage = as_object(chunk.get("usage"))
        if usage is not None:
            self.prompt_tokens = as_int(usage.get("prompt_tokens"))
            self.completion_tokens = as_int(usage.get("completion_tokens"))
        choices = chunk.get("choices")
        first = as_object(choices[0]) if isinstance(choices, list) and choices else None
        if first is None:
            return False
        reason = first.get("finish_reason")
        if isinstance(reason, str):
            self.finish_reason = reason
        delta = as_object(first.get("delta"))
        content = delta.get("content") if delta is not None else None
        if isinstance(content, str) and content:
            self._parts.append(content)
            return True
        return False
