"""The frozen configuration every component receives from ``_wiring.py`` (the component tree).

Built once by ``_cli.py`` (flags > environment > defaults) or directly by library users.
Nothing reads the environment after that; nothing mutates it. The range checks that
:meth:`Config.validated` applies are in ``_config_checks.py``; each field's flag, variable
and help text is a row of ``_setting.py``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from ._config_checks import out_of_range
from ._errors import ConfigError
from ._setting import Setting, default_data_dir, setting

__all__ = ["EMPTY_PATH_ADVICE", "Config", "StrPath", "Transport", "settings"]

#: What a refusal of an empty path setting says to do instead (the library's and the command line's).
EMPTY_PATH_ADVICE = "give a directory ('.' is the current one)"

Transport = Literal["stdio", "http"]
ToolProfile = Literal["full", "compact"]
#: What a path setting accepts; :class:`Config` stores it as a :class:`~pathlib.Path`.
StrPath: TypeAlias = "str | os.PathLike[str]"


def settings() -> tuple[Setting, ...]:
    """The settings table: every :class:`Config` field that a flag or variable sets, in field order."""
    return tuple(
        dataclasses.replace(cast(Setting, f.metadata["setting"]), name=f.name)
        for f in dataclasses.fields(Config)
        if "setting" in f.metadata
    )


def field_names() -> dict[str, str]:
    """Each flag as the library's :class:`Config` spells it (``--budget`` -> ``budget_tokens``): what
    :meth:`Config.validated` names in a refusal of a Config a program built, not a flag it never typed."""
    return {row.flag: row.name for row in settings() if row.flag}


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting of one ctxtrio instance. Construct it, then call :meth:`validated`.

    ``data_dir`` and ``ingest_roots`` accept strings or any ``os.PathLike`` and are
    stored as :class:`~pathlib.Path` (``Config(data_dir="state").data_dir`` is a Path).
    """

    data_dir: Path = setting(
        default_data_dir,
        "--data-dir",
        "CTX_DATA_DIR",
        "DIR",
        "Where state lives (created mode 0700)",
        shown="platform user data dir (`~/.local/share/ctxtrio`)",
        factory=True,
    )
    ingest_roots: tuple[Path, ...] = setting(
        (),
        "--ingest-root",
        "CTX_INGEST_ROOTS",
        "DIR",
        "Let `doc_ingest` read files under DIR; repeatable (the variable is a `:`-separated list)",
        shown="none: inline text only",
    )
    llm_enabled: bool = setting(
        True,
        "--llm",
        "CTX_LLM_ENABLED",
        "",
        "Summaries and token calibration through the LLM endpoint (a session's compaction asks it only while no "
        "earlier summary is live: one that merges earlier summaries is extractive); `--no-llm`: extractive "
        "summaries only, no calibration",
    )
    llm_base_url: str = setting(
        "http://localhost:1234/v1", "--llm-base-url", "CTX_LLM_BASE_URL", "URL", "OpenAI-compatible endpoint"
    )
    llm_model: str = setting(
        "",
        "--llm-model",
        "CTX_LLM_MODEL",
        "ID",
        "Model id sent to the endpoint",
        shown="empty: the loaded model (calibration takes the first model the server lists whose id does not hold `embed`)",
    )
    llm_api_key: str | None = setting(
        None, None, "CTX_LLM_API_KEY", "KEY", "Sent as `Authorization: Bearer` to the endpoint", secret=True
    )
    llm_timeout_s: float = setting(
        120.0,
        "--llm-timeout",
        "CTX_LLM_TIMEOUT_MS",
        "MS",
        "Longest wait in ms for a summary request's first token (less for a short prompt; stretched up to 8× "
        "once the server has shown it is slower). A background request, not bounded by the deadline",
        unit=0.001,
    )
    llm_deadline_s: float = setting(
        45.0,
        "--llm-deadline",
        "CTX_LLM_DEADLINE_S",
        "S",
        "Seconds one summarizing tool call may spend on the LLM; the rest is done extractively",
    )
    llm_concurrency: int = setting(
        1,
        "--llm-concurrency",
        "CTX_LLM_CONCURRENCY",
        "N",
        "LLM requests at once (a local server runs one generation at a time)",
    )
    #: Opt-in hybrid search: the embedding model asked at ``{embed_url}/embeddings``.
    embed_model: str = setting(
        "",
        "--embed-model",
        "CTX_EMBED_MODEL",
        "ID",
        "Embedding model for hybrid search "
        "(keyword + meaning), asked in the background at `{embed base URL}/embeddings`",
        shown="none: keyword search only",
    )
    embed_base_url: str = setting(
        "",
        "--embed-base-url",
        "CTX_EMBED_BASE_URL",
        "URL",
        "OpenAI-compatible endpoint serving `--embed-model`",
        shown="the `--llm-base-url`",
    )
    #: Plain words the corpus seldom says also search for their neighbours, and every plain
    #: word for its other forms and its thesaurus words the corpus says more (docs/search.py,
    #: text/neighbours.py, text/thesaurus.py); a session's entries likewise (memory/expansion.py).
    query_expansion: bool = setting(
        True,
        "--query-expansion",
        "CTX_QUERY_EXPANSION",
        "",
        "`doc_search` and `context_recall`: a plain English word the documents (the session's entries) seldom "
        "use also searches for its neighbours in meaning that they use more (a shipped word table), and every "
        "plain word for its other forms and the documentation's words for it in a programming thesaurus that "
        "they use more",
    )
    #: None means "not given": the default budget then follows the loaded model's context.
    budget_tokens: int | None = setting(
        None,
        "--budget",
        "CTX_BUDGET",
        "TOKENS",
        "Default recall/window/search budget in tokens",
        shown="half the loaded model's context, else `4000`",
    )
    chunk_tokens: int = setting(800, "--chunk-tokens", "CTX_CHUNK_TOKENS", "TOKENS", "Target chunk size")
    chunk_overlap_tokens: int = setting(
        80, "--chunk-overlap", "CTX_CHUNK_OVERLAP", "TOKENS", "Overlap between chunks (whole trailing blocks)"
    )
    token_ratio: float = setting(
        0.27, "--token-ratio", "CTX_TOKEN_RATIO", "R", "Cold-start tokens per character for Latin and other scripts"
    )
    max_ingest_chars: int = setting(
        20_000_000,
        "--max-ingest-chars",
        "CTX_MAX_INGEST_CHARS",
        "N",
        "Largest document (characters; a file's bytes are checked before reading)",
    )
    transport: Transport = setting(
        "stdio",
        "--stdio/--http",
        "CTX_TRANSPORT",
        "",
        "Transport: `--stdio` or `--http` (Streamable HTTP)",
        choices_as_flags=True,
    )
    #: Which tools the server lists: the full table, or five combined ones for 4k-8k windows.
    tools: ToolProfile = setting(
        "full",
        "--tools",
        "CTX_TOOLS",
        "PROFILE",
        "`full`: every tool; `compact`: five combined tools for 4k-8k windows, tools/list under 3,000 characters",
    )
    http_host: str = setting("127.0.0.1", "--host", "CTX_HTTP_HOST", "HOST", "HTTP bind address")
    http_port: int = setting(3001, "--port", "CTX_HTTP_PORT", "PORT", "HTTP port; `0`: any free port")
    allow_remote: bool = setting(
        False, "--allow-remote", "CTX_ALLOW_REMOTE", "", "Allow a non-loopback `--host`; requires a token"
    )
    http_token: str | None = setting(
        None,
        "--http-token",
        "CTX_HTTP_TOKEN",
        "TOKEN",
        "Require `Authorization: Bearer TOKEN` on every HTTP request (16+ characters)",
        secret=True,
    )
    #: Longest wait for the next part of an HTTP request body before answering 408.
    http_body_timeout_s: float = setting(
        10.0,
        "--http-body-timeout",
        "CTX_HTTP_BODY_TIMEOUT_S",
        "S",
        "Seconds an HTTP request body may pause before the request is refused "
        "with 408; after them it must keep arriving at 256 KB/s on average",
    )
    #: HTTP sessions open at once; at the cap a new one closes the session idle longest.
    http_max_sessions: int = setting(
        1000,
        "--http-max-sessions",
        "CTX_HTTP_MAX_SESSIONS",
        "N",
        "HTTP sessions kept at once (~40 KB each); at the cap a new session closes the one idle longest (logged)",
    )
    #: Seconds an HTTP session may go without a request before it is closed.
    http_session_idle_s: float = setting(
        1800.0,
        "--http-session-idle",
        "CTX_HTTP_SESSION_IDLE_S",
        "S",
        "Seconds an HTTP session may go without a request before it is closed (its client then initializes again)",
    )
    audit: bool = setting(
        True,
        "--audit",
        "CTX_AUDIT",
        "",
        "One JSON line per tool call on stderr: time, tool, outcome, duration, ids; never the text",
    )
    #: Answer a host's first requests from answers recorded by an earlier start (stdio).
    warm_start: bool = setting(
        True,
        "--warm-start",
        "CTX_WARM_START",
        "",
        "Answer a host's first requests from answers an earlier start recorded (stdio), and record them",
    )
    #: How long calls in flight at shutdown (stdin EOF, SIGTERM, SIGINT) may take to finish.
    shutdown_grace_s: float = setting(
        5.0,
        "--shutdown-grace",
        "CTX_SHUTDOWN_GRACE_S",
        "S",
        "Seconds calls in "
        "flight at shutdown (stdin closed, SIGTERM) may take to finish and be "
        "answered before they are cancelled",
    )
    #: How long an append waits for another process's journal lock before LockTimeoutError.
    lock_timeout_s: float = 10.0

    if TYPE_CHECKING:
        # What the generated __init__ accepts: path settings as str or PathLike, normalised
        # by __post_init__. tests/test_public_api.py keeps this in step with the fields.
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
            embed_model: str = "",
            embed_base_url: str = "",
            query_expansion: bool = True,
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
            http_max_sessions: int = 1000,
            http_session_idle_s: float = 1800.0,
            audit: bool = True,
            warm_start: bool = True,
            shutdown_grace_s: float = 5.0,
            lock_timeout_s: float = 10.0,
        ) -> None: ...

    def __post_init__(self) -> None:
        # Path("") is Path("."): an empty string (a variable read with "" for unset) would make the
        # working directory the data dir, silently; '.' says so on purpose and is kept.
        if os.fspath(self.data_dir) == "":
            raise ConfigError(f"data_dir is an empty path: {EMPTY_PATH_ADVICE}, or leave it out for the default")
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        object.__setattr__(self, "ingest_roots", _paths(self.ingest_roots))

    @property
    def answer_settings(self) -> str:
        """The settings a protocol answer could depend on (no paths of state, no secrets)."""
        return repr(
            (
                self.transport,
                self.llm_enabled,
                self.budget_tokens,
                self.chunk_tokens,
                self.chunk_overlap_tokens,
                self.tools,
            )
        )

    @property
    def embed_url(self) -> str:
        """Where embeddings are asked for: ``embed_base_url``, else the LLM base URL."""
        return (self.embed_base_url or self.llm_base_url).rstrip("/")

    @property
    def default_budget_tokens(self) -> int:
        """The budget used when a tool call gives none and no model context is known."""
        return self.budget_tokens if self.budget_tokens is not None else 4000

    def replace(self, **changes: object) -> Config:
        """A copy with ``changes`` applied (not validated)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]  # kwargs are checked by validated()

    def validated(self, *, given: Mapping[str, str] | None = None) -> Config:
        """Return self with paths made absolute, or raise ConfigError naming the bad value by its flag, or as
        ``given`` spells it (the command line maps ``--budget`` to ``CTX_BUDGET`` when that variable gave it)."""
        found = out_of_range(self, given)
        if found:
            raise ConfigError(found[0])
        return dataclasses.replace(
            self,
            data_dir=Path(self.data_dir).expanduser().absolute(),
            ingest_roots=tuple(Path(root).expanduser().absolute() for root in self.ingest_roots),
            llm_base_url=self.llm_base_url.rstrip("/"),
            embed_model=self.embed_model.strip(),
            embed_base_url=self.embed_base_url.rstrip("/"),
        )


def _paths(roots: object) -> tuple[Path, ...]:
    """``roots`` as a tuple of Paths; a single str or PathLike is one root, not its characters."""
    if isinstance(roots, (str, os.PathLike)):
        roots = (roots,)
    if not isinstance(roots, Iterable):
        raise ConfigError(f"ingest_roots must be paths, got {roots!r}")
    paths = tuple(roots)
    if any(os.fspath(root) == "" for root in paths):  # Path("") would open the working directory to reads
        raise ConfigError(f"ingest_roots holds an empty path: {EMPTY_PATH_ADVICE}")
    return tuple(Path(root) for root in paths)
