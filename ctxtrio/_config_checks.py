"""The range checks behind :meth:`~ctxtrio._config.Config.validated`: every setting out of range, as messages.

They read a :class:`ConfigValues`, the settings they check, which ``Config`` satisfies by its
fields alone. This module does not import ``Config``: ``_config`` imports it, and
``tests/test_layering.py`` forbids the cycle an import back would make (TYPE_CHECKING ones too).
Moved here from ``_config.py`` unchanged (``_problems`` is :func:`out_of_range`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ._limits import BUDGET
from ._setting import is_loopback_host

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

__all__ = ["ConfigValues", "out_of_range"]


class ConfigValues(Protocol):
    """The settings the checks read, read-only (``Config`` is frozen), grouped as the checks are.

    A check that reads a field not named here fails mypy; ``Config.validated`` passing
    ``self`` is where mypy holds ``Config`` to this shape.
    """

    # Reading: the tool profile, the budget, chunking and the token guess.
    @property
    def tools(self) -> str: ...
    @property
    def budget_tokens(self) -> int | None: ...
    @property
    def chunk_tokens(self) -> int: ...
    @property
    def chunk_overlap_tokens(self) -> int: ...
    @property
    def token_ratio(self) -> float: ...

    # The LLM and embedding endpoints, and the ingest size.
    @property
    def llm_timeout_s(self) -> float: ...
    @property
    def llm_deadline_s(self) -> float: ...
    @property
    def llm_concurrency(self) -> int: ...
    @property
    def llm_base_url(self) -> str: ...
    @property
    def embed_base_url(self) -> str: ...
    @property
    def max_ingest_chars(self) -> int: ...

    # The transport and the HTTP listener.
    @property
    def transport(self) -> str: ...
    @property
    def http_port(self) -> int: ...
    @property
    def http_host(self) -> str: ...
    @property
    def allow_remote(self) -> bool: ...
    @property
    def http_token(self) -> str | None: ...
    @property
    def http_body_timeout_s(self) -> float: ...
    @property
    def http_max_sessions(self) -> int: ...
    @property
    def http_session_idle_s(self) -> float: ...

    # The process: shutdown, the store lock, the ingest roots.
    @property
    def shutdown_grace_s(self) -> float: ...
    @property
    def lock_timeout_s(self) -> float: ...
    @property
    def ingest_roots(self) -> tuple[Path, ...]: ...


def out_of_range(config: ConfigValues, given: Mapping[str, str] | None = None) -> list[str]:
    """Every setting that is out of range, in the order the flags are documented, each named by its flag or
    as ``given`` maps it: what the user wrote (the command line passes ``CTX_BUDGET`` for ``--budget`` when
    the variable gave the value; ``open_context`` passes the Config's field names, ``_config.field_names``)."""
    spelled = given or {}

    def named(flag: str) -> str:
        return spelled.get(flag, flag)

    return [
        *_reading_problems(config, named),
        *_endpoint_problems(config, named),
        *_http_problems(config, named),
        *_process_problems(config, named),
    ]


def _reading_problems(config: ConfigValues, named: Callable[[str], str]) -> list[str]:
    """The tool profile, the budget, chunking and the token guess."""
    problems: list[str] = []
    if config.tools not in ("full", "compact"):
        problems.append(f"{named('--tools')} must be full or compact, got {config.tools!r}")
    if config.budget_tokens is not None and config.budget_tokens not in BUDGET:
        problems.append(
            f"{named('--budget')} must be between {BUDGET.low} and {BUDGET.high}, got {config.budget_tokens}"
        )
    if not 50 <= config.chunk_tokens <= 20_000:
        problems.append(f"{named('--chunk-tokens')} must be between 50 and 20000, got {config.chunk_tokens}")
    if config.chunk_overlap_tokens < 0:
        problems.append(f"{named('--chunk-overlap')} must be >= 0, got {config.chunk_overlap_tokens}")
    elif config.chunk_overlap_tokens >= config.chunk_tokens:
        problems.append(
            f"{named('--chunk-overlap')} ({config.chunk_overlap_tokens}) must be smaller than {named('--chunk-tokens')} ({config.chunk_tokens})"
        )
    if not 0.01 <= config.token_ratio <= 4.0:
        problems.append(f"{named('--token-ratio')} must be between 0.01 and 4, got {config.token_ratio}")
    return problems


def _endpoint_problems(config: ConfigValues, named: Callable[[str], str]) -> list[str]:
    """The LLM and embedding endpoints, and the ingest size."""
    problems: list[str] = []
    if not config.llm_timeout_s > 0:  # `not >`: NaN (`--llm-timeout nan` parses as a float) is refused too
        name = named("--llm-timeout")
        if name == "llm_timeout_s":  # a library Config's field is in seconds (the flag and its variable in ms)
            problems.append(f"{name} must be > 0 s, got {config.llm_timeout_s:g}")
        else:
            problems.append(f"{name} must be > 0 ms, got {config.llm_timeout_s * 1000:g}")
    if not config.llm_deadline_s > 0:
        problems.append(f"{named('--llm-deadline')} must be > 0 s, got {config.llm_deadline_s:g}")
    if config.llm_concurrency < 1:
        problems.append(f"{named('--llm-concurrency')} must be >= 1, got {config.llm_concurrency}")
    if not config.llm_base_url.startswith(("http://", "https://")):
        problems.append(f"{named('--llm-base-url')} must start with http:// or https://, got {config.llm_base_url!r}")
    if config.embed_base_url and not config.embed_base_url.startswith(("http://", "https://")):
        problems.append(
            f"{named('--embed-base-url')} must start with http:// or https://, got {config.embed_base_url!r}"
        )
    if config.max_ingest_chars < 1:
        problems.append(f"{named('--max-ingest-chars')} must be >= 1, got {config.max_ingest_chars}")
    return problems


def _http_problems(config: ConfigValues, named: Callable[[str], str]) -> list[str]:
    """The transport, and the HTTP listener: port, exposure, token, body and session limits."""
    problems: list[str] = []
    if config.transport not in ("stdio", "http"):  # (a library's Config: the command line offers the two only)
        problems.append(f"{named('--stdio/--http')} must be stdio or http, got {config.transport!r}")
    if not 0 <= config.http_port <= 65535:
        problems.append(f"{named('--port')} must be between 0 and 65535, got {config.http_port}")
    if not is_loopback_host(config.http_host):
        if not config.allow_remote:
            problems.append(
                f"{named('--host')} {config.http_host} is not loopback; pass --allow-remote with --http-token to expose it"
            )
        elif not config.http_token:
            problems.append(
                f"{named('--allow-remote')} needs --http-token (or CTX_HTTP_TOKEN): a remote bind must authenticate"
            )
    if not config.http_body_timeout_s > 0:
        problems.append(f"{named('--http-body-timeout')} must be > 0 s, got {config.http_body_timeout_s:g}")
    if config.http_max_sessions < 1:
        problems.append(f"{named('--http-max-sessions')} must be >= 1, got {config.http_max_sessions}")
    if not 0 < config.http_session_idle_s < float("inf"):
        problems.append(f"{named('--http-session-idle')} must be > 0 s, got {config.http_session_idle_s:g}")
    if config.http_token is not None and len(config.http_token) < 16:
        problems.append(f"{named('--http-token')} must be at least 16 characters")
    return problems


def _process_problems(config: ConfigValues, named: Callable[[str], str]) -> list[str]:
    """Shutdown, the store lock and the ingest roots."""
    problems: list[str] = []
    if not config.shutdown_grace_s >= 0:  # NaN: SIGTERM crashed in trio ('deadline must not be NaN')
        problems.append(f"{named('--shutdown-grace')} must be >= 0 s, got {config.shutdown_grace_s:g}")
    if not config.lock_timeout_s > 0:
        problems.append(f"lock_timeout_s must be > 0 s, got {config.lock_timeout_s:g}")
    for root in config.ingest_roots:
        if not root.expanduser().is_dir():
            problems.append(f"{named('--ingest-root')} {root} is not a directory")
    return problems
