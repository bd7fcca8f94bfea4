"""Reading the server-specific endpoints: tokenize and the loaded context length.

Pure parsers over decoded bodies. Every one answers ``None`` when the body does not
have the expected shape: a server that lacks the endpoint answers 404 (llama.cpp,
Ollama) or 200 with ``{"error": "Unexpected endpoint ..."}`` (LM Studio), and both
mean "not this kind of server", not "the server is broken".
"""

from __future__ import annotations

import re
from typing import Final

from ._json import as_int, as_object

__all__ = [
    "OLLAMA_DEFAULT_NUM_CTX",
    "OVERFLOW_PROBE_TOKENS",
    "context_from_error",
    "ollama_ps_context",
    "vllm_context",
    "llamacpp_context",
    "lmstudio_context",
    "ollama_context",
    "token_count",
]

#: Ollama runs a model with this window unless ``num_ctx`` is set (in the Modelfile or
#: the server's environment, which we cannot see). The trained maximum in
#: ``model_info`` is often 128k and would overstate the real window, so it is capped.
OLLAMA_DEFAULT_NUM_CTX: Final = 4096

#: A prompt this long (in one-token words) exceeds any window a local server runs.
OVERFLOW_PROBE_TOKENS: Final = 300_000

_OVERFLOW: Final = re.compile(r"maximum context length is (\d+)")
_NUM_CTX: Final = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def _positive(value: object) -> int | None:
    number = as_int(value)
    return number if number is not None and number > 0 else None


def token_count(body: object) -> int | None:
    """``len(tokens)`` of a llama.cpp ``/tokenize`` or llama-cpp-python ``/extras/tokenize`` body."""
    payload = as_object(body)
    if payload is None:
        return None
    tokens = payload.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


def lmstudio_context(body: object, model: str | None) -> int | None:
    """The window of ``model`` (or of the first loaded model) from LM Studio's ``/api/v0/models``.

    A loaded model's ``loaded_context_length`` wins over its ``max_context_length``.
    """
    payload = as_object(body)
    data = payload.get("data") if payload is not None else None
    if not isinstance(data, list):
        return None
    entries = [entry for entry in map(as_object, data) if entry is not None]
    chosen = [entry for entry in entries if model and entry.get("id") == model]
    if not chosen:
        chosen = [entry for entry in entries if entry.get("state") == "loaded"]
    for entry in chosen:
        found = _positive(entry.get("loaded_context_length")) or _positive(entry.get("max_context_length"))
        if found is not None:
            return found
    return None


def llamacpp_context(body: object) -> int | None:
    """``default_generation_settings.n_ctx`` from llama.cpp's ``/props``."""
    payload = as_object(body)
    settings = as_object(payload.get("default_generation_settings")) if payload else None
    return _positive(settings.get("n_ctx")) if settings is not None else None


def ollama_context(body: object) -> int | None:
    """The window from Ollama's ``/api/show``: ``num_ctx`` if set, else the trained maximum capped.

    Without ``num_ctx`` Ollama runs the model with a small default window, so the
    ``*.context_length`` of ``model_info`` is capped at :data:`OLLAMA_DEFAULT_NUM_CTX`.
    """
    payload = as_object(body)
    if payload is None:
        return None
    parameters = payload.get("parameters")
    if isinstance(parameters, str):
        match = _NUM_CTX.search(parameters)
        if match:
            return _positive(int(match.group(1)))
    info = as_object(payload.get("model_info"))
    if info is None:
        return None
    for key, value in info.items():
        trained = _positive(value) if key.endswith(".context_length") else None
        if trained is not None:
            return min(trained, OLLAMA_DEFAULT_NUM_CTX)
    return None


def context_from_error(message: str) -> int | None:
    """N from an error body saying "maximum context length is N" (llama-cpp-python, vLLM, OpenAI)."""
    match = _OVERFLOW.search(message)
    return _positive(int(match.group(1))) if match else None


def vllm_context(body: object, model: str | None) -> int | None:
    """``max_model_len`` of ``model`` (or of the first model) in vLLM's ``GET /v1/models``."""
    payload = as_object(body)
    data = payload.get("data") if payload is not None else None
    if not isinstance(data, list):
        return None
    entries = [entry for entry in map(as_object, data) if entry is not None]
    chosen = [entry for entry in entries if model and entry.get("id") == model] or entries[:1]
    return _positive(chosen[0].get("max_model_len")) if chosen else None


def ollama_ps_context(body: object, model: str | None) -> int | None:
    """The allocated ``context_length`` of ``model`` (or the first) in Ollama's ``GET /api/ps``."""
    payload = as_object(body)
    models = payload.get("models") if payload is not None else None
    if not isinstance(models, list):
        return None
    entries = [entry for entry in map(as_object, models) if entry is not None]
    chosen = [e for e in entries if model and model in (e.get("name"), e.get("model"))] or entries[:1]
    return _positive(chosen[0].get("context_length")) if chosen else None
