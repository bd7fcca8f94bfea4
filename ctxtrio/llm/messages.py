"""What talking to an OpenAI-compatible endpoint takes and gives: settings, messages, answers.

Plain frozen values, no I/O; :mod:`.client` sends them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ChatMessage", "Completion", "LLMSettings"]


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where the endpoint is and how to talk to it; ``_app.py`` builds it from Config.

    ``base_url`` is the OpenAI-compatible base (``http://localhost:1234/v1``); an empty
    ``model`` means "whatever is loaded" and is left out of request bodies.
    """

    base_url: str
    model: str = ""
    api_key: str | None = None
    timeout_s: float = 120.0
    concurrency: int = 1
    #: A streamed answer silent this long after its first byte is hung, not slow.
    stall_s: float = 30.0
    #: The wait for a streamed answer's first token: this, plus the prompt's size at
    #: ``prompt_tokens_per_s`` (at most ``timeout_s``). A server that accepted the
    #: request but sends no token by then is hung, not slow (pings do not count).
    first_token_s: float = 20.0
    #: The slowest prompt processing waited for (Gemma 3 270M on 2 loaded cores: ~55/s).
    prompt_tokens_per_s: float = 25.0

    def __post_init__(self) -> None:
        if (
            self.timeout_s <= 0
            or self.concurrency < 1
            or self.stall_s <= 0
            or self.first_token_s <= 0
            or self.prompt_tokens_per_s <= 0
        ):
            raise ValueError(f"need timeout_s > 0 and concurrency >= 1, got {self!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    def first_token_wait_s(self, prompt_chars: int) -> float:
        """How long a prompt of ``prompt_chars`` characters may take to its first token.

        Two characters a token leans high for every script but dense CJK (~0.5 a
        character in Gemma 3), so the allowance errs towards waiting.
        """
        return min(self.timeout_s, self.first_token_s + prompt_chars / 2 / self.prompt_tokens_per_s)

    @property
    def root(self) -> str:
        """The server root: ``base_url`` without a trailing ``/v1``."""
        return self.base_url.removesuffix("/v1")


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    """A chat answer; token counts are None when the server reports no usage."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None = None
