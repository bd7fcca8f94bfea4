"""ctxtrio: an external context buffer for local language models, over MCP, on Trio."""

from __future__ import annotations

from ._app import open_context, serve
from ._config import Config
from ._context import Context
from ._version import __version__
from ._errors import (
    ConfigError,
    CtxError,
    IngestError,
    InputError,
    InvalidIdError,
    LLMError,
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    LockTimeoutError,
    NotFoundError,
    StoreError,
)


__all__ = [
    "Config",
    "ConfigError",
    "Context",
    "CtxError",
    "IngestError",
    "InputError",
    "InvalidIdError",
    "LLMError",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "LockTimeoutError",
    "NotFoundError",
    "StoreError",
    "__version__",
    "open_context",
    "serve",
]
