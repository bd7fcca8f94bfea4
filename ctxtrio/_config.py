"""The frozen configuration every component receives from ``_app.py``.

Built once by ``_cli.py`` (flags > environment > defaults) or directly by library users.
Nothing reads the environment after that; nothing mutates it.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

import platformdirs

from ._errors import ConfigError
from ._limits import BUDGET

__all__ = ["Config", "StrPath", "Transport", "default_data_dir", "is_loopback_host"]

Transport = Literal["stdio", "http"]
ToolProfile = Literal["full", "compact"]
#: What a path setting accepts; :class:`Config` stores it as a :class:`~pathlib.Path`.
StrPath: TypeAlias = "str | os.PathLike[str]"



def default_data_dir() -> Path:
    """The platform's per-user data directory for ctxtrio (``~/.local/share/ctxtrio`` on Linux)."""
    return Path(platformdirs.user_data_dir("ctxtrio", appauthor=False))


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and every address in 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting of one ctxtrio instance. Construct it, then call :meth:`validated`.

    ``data_dir`` and ``ingest_roots`` accept strings or any ``os.PathLike`` and are
    stored as :class:`~pathlib.Path` (``Config(data_dir="state").data_dir`` is a Path).
    """

    data_dir: Path = field(default_factory=default_data_dir)
    ingest_roots: tuple[Path, ...] = ()
    llm_enabled: bool = True
    llm_base_url: str = "http://localhost:1234/v1"
    llm_model: str = ""
    llm_api_key: str | None = None
    llm_timeout_s: float = 120.0
    llm_deadline_s: float = 45.0
    llm_concurrency: int = 1
    #: None means "not given": the default budget then follows the loaded model's context.
    budget_tokens: int | None = None
    chunk_tokens: int = 800
    chunk_overlap_tokens: int = 80
    token_ratio: float = 0.27
    max_ingest_chars: int = 20_000_000
    transport: Transport = "stdio"
    #: Which tools the server lists: the full table, or five combined ones for 4k-8k windows.
    tools: ToolProfile = "full"
    http_host: str = "127.0.0.1"
    http_port: int = 3001
    allow_remote: bool = False
    http_token: str | None = None
    #: Longest wait for the next part of an HTTP request body before answering 408.
    http_body_timeout_s: float = 10.0
    audit: bool = True
    #: Answer a host's first requests from answers recorded by an earlier start (stdio).
    warm_start: bool = True
    #: Grace period for in-flight calls at shutdown, and how long an append waits for
    #: another process's journal lock before it fails with LockTimeoutError.
    shutdown_grace_s: float = 1.0
    lock_timeout_s: float = 10.0

    if TYPE_CHECKING:
        # What the generated __init__ accepts: path settings as str or PathLike, normalised
        # by __post_init__. tests/test_config_types.py keeps this in step with the fields.
        def __init__(
            self,
            data_dir: StrPath = ...,
            ingest_roots: Iterable[StrPath] = (),
            llm_enabled: bool = True,
            llm_base_url: str = "http://localhost:1234/v1",
            llm_model: str = "",
            llm_api_key: str | None = None,
            llm_timeout_s: float = 120.0,
            llm_deadline_s: float = 45.0,
            llm_concurrency: int = 1,
            budget_tokens: int | None = None,
            chunk_tokens: int = 800,
            chunk_overlap_tokens: int = 80,
            token_ratio: float = 0.27,
            max_ingest_chars: int = 20_000_000,
            transport: Transport = "stdio",
            tools: ToolProfile = "full",
            http_host: str = "127.0.0.1",
            http_port: int = 3001,
            allow_remote: bool = False,
            http_token: str | None = None,
            http_body_timeout_s: float = 10.0,
            audit: bool = True,
            warm_start: bool = True,
            shutdown_grace_s: float = 1.0,
            lock_timeout_s: float = 10.0,
        ) -> None: ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        object.__setattr__(self, "ingest_roots", _paths(self.ingest_roots))

    @property
    def answer_settings(self) -> str:
        """The settings a protocol answer could depend on (no paths of state, no secrets)."""
        return repr((self.transport, self.llm_enabled, self.budget_tokens, self.chunk_tokens, self.chunk_overlap_tokens,
                     self.tools))

    @property
    def default_budget_tokens(self) -> int:
        """The budget used when a tool call gives none and no model context is known."""
        return self.budget_tokens if self.budget_tokens is not None else 4000

    def replace(self, **changes: object) -> Config:
        """A copy with ``changes`` applied (not validated)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]  # kwargs are checked by validated()

    def validated(self) -> Config:
        """Return self with paths made absolute, or raise ConfigError naming the bad value."""
        problems = list(_problems(self))
        if problems:
            raise ConfigError(problems[0])
        return dataclasses.replace(
            self,
            data_dir=Path(self.data_dir).expanduser().absolute(),
            ingest_roots=tuple(Path(root).expanduser().absolute() for root in self.ingest_roots),
            llm_base_url=self.llm_base_url.rstrip("/"),
        )


def _paths(roots: object) -> tuple[Path, ...]:
    """``roots`` as a tuple of Paths; a single str or PathLike is one root, not its characters."""
    if isinstance(roots, (str, os.PathLike)):
        return (Path(roots),)
    if not isinstance(roots, Iterable):
        raise ConfigError(f"ingest_roots must be paths, got {roots!r}")
    return tuple(Path(root) for root in roots)


def _problems(config: Config) -> list[str]:
    problems: list[str] = []
    if config.tools not in ("full", "compact"):
        problems.append(f"--tools must be full or compact, got {config.tools!r}")
    if config.budget_tokens is not None and config.budget_tokens not in BUDGET:
        problems.append(f"--budget must be between {BUDGET.low} and {BUDGET.high}, got {config.budget_tokens}")
    if not 50 <= config.chunk_tokens <= 20_000:
        problems.append(f"--chunk-tokens must be between 50 and 20000, got {config.chunk_tokens}")
    if config.chunk_overlap_tokens < 0:
        problems.append(f"--chunk-overlap must be >= 0, got {config.chunk_overlap_tokens}")
    elif config.chunk_overlap_tokens >= config.chunk_tokens:
        problems.append(
            f"--chunk-overlap ({config.chunk_overlap_tokens}) must be smaller than --chunk-tokens ({config.chunk_tokens})"
        )
    if not 0.01 <= config.token_ratio <= 4.0:
        problems.append(f"--token-ratio must be between 0.01 and 4, got {config.token_ratio}")
    if config.llm_timeout_s <= 0:
        problems.append(f"--llm-timeout must be > 0 ms, got {config.llm_timeout_s * 1000:g}")
    if config.llm_deadline_s <= 0:
        problems.append(f"--llm-deadline must be > 0 s, got {config.llm_deadline_s:g}")
    if config.llm_concurrency < 1:
        problems.append(f"--llm-concurrency must be >= 1, got {config.llm_concurrency}")
    if not config.llm_base_url.startswith(("http://", "https://")):
        problems.append(f"--llm-base-url must start with http:// or https://, got {config.llm_base_url!r}")
    if config.max_ingest_chars < 1:
        problems.append(f"--max-ingest-chars must be >= 1, got {config.max_ingest_chars}")
    if not 0 <= config.http_port <= 65535:
        problems.append(f"--port must be between 0 and 65535, got {config.http_port}")
    if not is_loopback_host(config.http_host):
        if not config.allow_remote:
            problems.append(
                f"--host {config.http_host} is not loopback; pass --allow-remote with --http-token to expose it"
            )
        elif not config.http_token:
            problems.append("--allow-remote needs --http-token (or CTX_HTTP_TOKEN): a remote bind must authenticate")
    if config.http_body_timeout_s <= 0:
        problems.append(f"--http-body-timeout must be > 0 s, got {config.http_body_timeout_s:g}")
    if config.http_token is not None and len(config.http_token) < 16:
        problems.append("--http-token must be at least 16 characters")
    if config.shutdown_grace_s < 0 or config.lock_timeout_s <= 0:
        problems.append("grace and lock timeouts must be positive")
    for root in config.ingest_roots:
        if not root.expanduser().is_dir():
            problems.append(f"--ingest-root {root} is not a directory")
    return problems
