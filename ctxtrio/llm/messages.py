"""What talking to an OpenAI-compatible endpoint takes and gives: settings, messages, answers.

Plain frozen values, no I/O; :mod:`.client` sends them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ChatMessage", "Completion", "LLMSettings", "RequestKind"]

#: What a request is, for its deadline: a chat completion (a summary step), a short
#: probe (model list, tokenize, context length, one-token count), an embeddings batch.
RequestKind = Literal["chat", "probe", "embed"]


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where the endpoint is and how to talk to it; ``_wiring.py`` builds it from Config.

    ``base_url`` is the OpenAI-compatible base (``http://localhost:1234/v1``); an empty
    ``model`` means "whatever is loaded" and is left out of request bodies. The
    per-request deadlines are here, one per :data:`RequestKind`; the client applies
    them (``trio.fail_after``) and translates them to ``LLMTimeoutError``. A caller that
    wants less sets its own cancel scope around the call.
    """

    base_url: str
    model: str = ""
    api_key: str | None = None
    #: A chat completion's deadline (a summary step: in the background, so it may be long).
    timeout_s: float = 120.0
    #: A probe's deadline: model list, tokenize, context length, one-token count. The
    #: calibration's requests are probes; a cold model may take long to load (not the
    #: summaries' ``--llm-deadline``).
    probe_timeout_s: float = 30.0
    #: An embeddings request's deadline (a batch of parts from the background embedder).
    embed_timeout_s: float = 60.0
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
            min(self.timeout_s, self.probe_timeout_s, self.embed_timeout_s) <= 0
            or self.concurrency < 1
            or self.stall_s <= 0
            or self.first_token_s <= 0
            or self.prompt_tokens_per_s <= 0
        ):
            raise ValueError(f"need timeouts > 0 and concurrency >= 1, got {self!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))

    def timeout_for(self, kind: RequestKind) -> float:
        """The deadline of one request of ``kind``, in seconds."""
        return {"chat": self.timeout_s, "probe": self.probe_timeout_s, "embed": self.embed_timeout_s}[kind]

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
