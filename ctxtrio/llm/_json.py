"""Reading the JSON bodies of OpenAI-compatible servers without trusting their shape.

Pure helpers: a response body is ``object`` until an ``isinstance`` check says
otherwise. Shape errors of the chat endpoint become :class:`LLMResponseError`; the
optional endpoints (tokenize, context length) answer ``None`` instead.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .._errors import LLMResponseError
from .._json import JSON

if TYPE_CHECKING:
    import httpx

__all__ = [
    "JSON",
    "as_int",
    "as_object",
    "error_body",
    "json_object",
    "parse_json",
    "snippet",
    "status_message",
    "whole_characters",
]


_HALF = re.compile("[\ud800-\udfff]")


def snippet(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def whole_characters(text: str) -> str:
    """``text`` with each UTF-16 surrogate pair made the one character it encodes, and a half alone made U+FFFD.

    JSON writes a character beyond U+FFFF as two ``\\u`` escapes (RFC 8259, section 7), and a server whose
    strings are UTF-16 (JavaScript's, as in LM Studio) can send the two halves in two stream chunks, or a half
    alone (``JSON.stringify`` escapes a lone one). ``json.loads`` keeps a lone half as is, and joining two
    halves gives two code points, not the character: such a text has no UTF-8 form, so a summary holding one
    could not be stored (a journal line is UTF-8). Text without halves is returned as it came.
    """
    if _HALF.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def parse_json(response: httpx.Response) -> object | None:
    """The decoded body, or None when it is not JSON."""
    try:
        decoded: object = json.loads(response.content)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return None
    return decoded


def as_object(value: object) -> dict[str, object] | None:
    """``value`` if it is a JSON object, else None."""
    if isinstance(value, dict):
        return {str(key): item for key, item in value.items()}
    return None


def as_int(value: object) -> int | None:
    """``value`` if it is an integer (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def error_body(payload: dict[str, object]) -> str | None:
    """The message of an ``{"error": ...}`` body, or None if there is no error."""
    error = payload.get("error")
    if error is None or error is False or error == "":
        return None
    detail = as_object(error)
    if detail is not None and isinstance(detail.get("message"), str):
        return str(detail["message"])
    return str(error)


def status_message(response: httpx.Response, what: str) -> str:
    """What a ``what`` call answered with an HTTP error status says: the status and the server's message."""
    payload = as_object(parse_json(response))
    message = error_body(payload) if payload is not None else None
    return f"{what}: HTTP {response.status_code}: {snippet(message or response.text)}"


def json_object(response: httpx.Response, what: str) -> dict[str, object]:
    """The JSON object a successful ``what`` call returned, or LLMResponseError saying why not."""
    if response.status_code >= 400:
        raise LLMResponseError(status_message(response, what))
    payload = as_object(parse_json(response))
    if payload is None:
        raise LLMResponseError(f"{what}: answer is not a JSON object: {snippet(response.text)!r}")
    message = error_body(payload)
    if message is not None:
        raise LLMResponseError(f"{what}: error body: {snippet(message)}")
    return payload
