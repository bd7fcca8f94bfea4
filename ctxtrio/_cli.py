"""The ``ctxtrio`` command: argv and environment → :class:`Config` → ``trio.run(serve)``.

Precedence is flag > environment variable > default. Exit codes: 0 after a clean
shutdown (stdin EOF, SIGTERM, SIGINT), 2 for a bad flag, value or data dir (one line on
stderr), 1 for a crash (traceback on stderr).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeVar

from ._config import Config
from ._errors import ConfigError, StoreError
from ._platform import require_posix
from ._version import __version__

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["build_config", "config_from_args", "main", "parser"]

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ctxtrio: error: {message} (see ctxtrio --help)\n")


def parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The serving flags; subcommands (:mod:`ctxtrio.cli`) take them too (``add_help=False``)."""
    p = _Parser(
        add_help=add_help,
        prog="ctxtrio",
        description="An MCP server that gives a local model durable session memory and paged documents.",
        epilog="Every flag has an environment variable; a flag wins over its variable. Without a subcommand "
        "ctxtrio serves; with one it shows and manages the data dir: sessions, show, export, import, delete, "
        "restore, prune, docs, ingest, search, doctor (ctxtrio COMMAND --help).",
    )
    p.add_argument("--version", action="version", version=f"ctxtrio {__version__}")
    a = p.add_argument
    a("--data-dir", metavar="DIR", help="where state lives [CTX_DATA_DIR; default: the platform user data dir]")
    a("--ingest-root", metavar="DIR", action="append", dest="ingest_roots",
      help="let doc_ingest read files under DIR; repeatable [CTX_INGEST_ROOTS, a path list "
      "separated by ':'; default: none, inline text only]")
    a("--llm-base-url", metavar="URL", help="OpenAI-compatible endpoint [CTX_LLM_BASE_URL; http://localhost:1234/v1]")
    a("--llm-model", metavar="ID", help="model id; empty uses whatever is loaded [CTX_LLM_MODEL]")
    a("--llm-timeout", metavar="MS", help="per-request LLM timeout in ms [CTX_LLM_TIMEOUT_MS; 120000]")
    a("--llm-deadline", metavar="S", help="seconds a summarizing tool call may spend on the LLM before "
      "finishing extractively [CTX_LLM_DEADLINE_S; 45]")
    a("--llm-concurrency", metavar="N", help="LLM requests at once [CTX_LLM_CONCURRENCY; 1]")
    a("--no-llm", action="store_true", default=None, help="extractive summaries only [CTX_LLM_ENABLED=false]")
    a("--budget", metavar="TOKENS", help="default recall/window budget [CTX_BUDGET; half the loaded model's "
      "context when detected, else 4000]")
    a("--chunk-tokens", metavar="TOKENS", help="target chunk size [CTX_CHUNK_TOKENS; 800]")
    a("--chunk-overlap", metavar="TOKENS", help="overlap between chunks [CTX_CHUNK_OVERLAP; 80]")
    a("--token-ratio", metavar="R", help="cold-start tokens per character [CTX_TOKEN_RATIO; 0.27]")
    a("--max-ingest-chars", metavar="N", help="largest document accepted [CTX_MAX_INGEST_CHARS; 20000000]")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--stdio", dest="transport", action="store_const", const="stdio",
                       help="serve over stdin/stdout [CTX_TRANSPORT=stdio; the default]")
    group.add_argument("--http", dest="transport", action="store_const", const="http",
                       help="serve Streamable HTTP [CTX_TRANSPORT=http]")
    a("--host", metavar="HOST", help="HTTP bind address [CTX_HTTP_HOST; 127.0.0.1]")
    a("--port", metavar="PORT", help="HTTP port, 0 for any free one [CTX_HTTP_PORT; 3001]")
    a("--allow-remote", action="store_true", default=None,
      help="allow a non-loopback --host (needs --http-token) [CTX_ALLOW_REMOTE]")
    a("--http-token", metavar="TOKEN", help="require 'Authorization: Bearer TOKEN' over HTTP [CTX_HTTP_TOKEN]")
    a("--http-body-timeout", metavar="S", help="seconds an HTTP request body may pause before the request is "
      "refused with 408 [CTX_HTTP_BODY_TIMEOUT_S; 10]")
    a("--tools", metavar="PROFILE", help="full: every tool; compact: five combined tools for 4k-8k windows, "
      "tools/list under 3,000 characters [CTX_TOOLS; full]")
    audit = p.add_mutually_exclusive_group()
    audit.add_argument("--audit", dest="audit", action="store_true", default=None,
                       help="one JSON line per tool call on stderr [CTX_AUDIT; on]")
    audit.add_argument("--no-audit", dest="audit", action="store_false", help="no audit lines")
    a("--no-warm-start", dest="warm_start", action="store_false", default=None,
      help="do not answer the first requests from answers an earlier start recorded, nor record them "
      "[CTX_WARM_START=false]")
    return p


def _number(kind: Callable[[str], T], name: str) -> Callable[[str], T]:
    def convert(text: str) -> T:
        try:
            return kind(text.strip())
        except ValueError:
            raise ConfigError(f"{name} must be a number, got {text!r}") from None

    return convert


def _boolean(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, got {text!r}")


def build_config(argv: Sequence[str], env: Mapping[str, str]) -> Config:
    """The validated Config for ``argv`` and ``env``; raises ConfigError (or exits 2 on a bad flag)."""
    return config_from_args(parser().parse_args(list(argv)), env)


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> Config:
    """The validated Config for parsed serving flags and ``env`` (flag > variable > default)."""

    def pick(flag: object, var: str) -> str | None:
        if flag is not None:
            return str(flag)
        value = env.get(var)
        return value if value not in (None, "") else None

    changes: dict[str, object] = {}
    if (value := pick(args.data_dir, "CTX_DATA_DIR")) is not None:
        changes["data_dir"] = Path(value)
    if args.ingest_roots:
        changes["ingest_roots"] = tuple(Path(root) for root in args.ingest_roots)
    elif roots := env.get("CTX_INGEST_ROOTS"):
        changes["ingest_roots"] = tuple(Path(root) for root in roots.split(os.pathsep) if root)
    if (value := pick(args.llm_base_url, "CTX_LLM_BASE_URL")) is not None:
        changes["llm_base_url"] = value
    if args.llm_model is not None:
        changes["llm_model"] = args.llm_model
    elif "CTX_LLM_MODEL" in env:
        changes["llm_model"] = env["CTX_LLM_MODEL"]
    if key := env.get("CTX_LLM_API_KEY"):
        changes["llm_api_key"] = key
    if (value := pick(args.llm_timeout, "CTX_LLM_TIMEOUT_MS")) is not None:
        changes["llm_timeout_s"] = _number(float, "--llm-timeout")(value) / 1000
    if (value := pick(args.llm_deadline, "CTX_LLM_DEADLINE_S")) is not None:
        changes["llm_deadline_s"] = _number(float, "--llm-deadline")(value)
    if (value := pick(args.llm_concurrency, "CTX_LLM_CONCURRENCY")) is not None:
        changes["llm_concurrency"] = _number(int, "--llm-concurrency")(value)
    if args.no_llm:
        changes["llm_enabled"] = False
    elif (value := env.get("CTX_LLM_ENABLED")) not in (None, ""):
        changes["llm_enabled"] = _boolean(str(value), "CTX_LLM_ENABLED")
    for flag, var, field, kind in (
        (args.budget, "CTX_BUDGET", "budget_tokens", int),
        (args.chunk_tokens, "CTX_CHUNK_TOKENS", "chunk_tokens", int),
        (args.chunk_overlap, "CTX_CHUNK_OVERLAP", "chunk_overlap_tokens", int),
        (args.max_ingest_chars, "CTX_MAX_INGEST_CHARS", "max_ingest_chars", int),
        (args.port, "CTX_HTTP_PORT", "http_port", int),
        (args.token_ratio, "CTX_TOKEN_RATIO", "token_ratio", float),
    ):
        if (value := pick(flag, var)) is not None:
            name = f"--{field.replace('_tokens', '').replace('_', '-')}" if flag is not None else var
            changes[field] = _number(kind, name)(value)
    if (value := pick(args.transport, "CTX_TRANSPORT")) is not None:
        if value not in ("stdio", "http"):
            raise ConfigError(f"CTX_TRANSPORT must be stdio or http, got {value!r}")
        changes["transport"] = value
    if (value := pick(args.host, "CTX_HTTP_HOST")) is not None:
        changes["http_host"] = value
    if args.allow_remote:
        changes["allow_remote"] = True
    elif (value := env.get("CTX_ALLOW_REMOTE")) not in (None, ""):
        changes["allow_remote"] = _boolean(str(value), "CTX_ALLOW_REMOTE")
    if (value := pick(args.http_token, "CTX_HTTP_TOKEN")) is not None:
        changes["http_token"] = value
    if (value := pick(args.http_body_timeout, "CTX_HTTP_BODY_TIMEOUT_S")) is not None:
        changes["http_body_timeout_s"] = _number(float, "--http-body-timeout")(value)
    if args.warm_start is not None:
        changes["warm_start"] = args.warm_start
    elif (value := env.get("CTX_WARM_START")) not in (None, ""):
        changes["warm_start"] = _boolean(str(value), "CTX_WARM_START")
    if (value := pick(args.tools, "CTX_TOOLS")) is not None:
        changes["tools"] = value
    if args.audit is not None:
        changes["audit"] = args.audit
    elif (value := env.get("CTX_AUDIT")) not in (None, ""):
        changes["audit"] = _boolean(str(value), "CTX_AUDIT")
    return Config().replace(**changes).validated()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ctxtrio`` command; returns the process exit code."""
    try:
        require_posix()  # before anything imports the store (fcntl) or the transports
    except ConfigError as exc:
        sys.stderr.write(f"ctxtrio: error: {exc}\n")
        return 2
    args = list(sys.argv[1:] if argv is None else argv)
    from .cli.commands import find_subcommand

    if (found := find_subcommand(args)) is not None:  # a subcommand; serving is the default
        from .cli import run

        return run(*found)
    try:
        config = build_config(args, os.environ)
        from .store.layout import prepare_data_dir

        prepare_data_dir(config.data_dir)
    except (ConfigError, StoreError) as exc:
        sys.stderr.write(f"ctxtrio: error: {exc}\n")
        return 2
    from .transport.warm_start import WarmStart, begin_warm_start

    warm: WarmStart | None = None
    if config.transport == "stdio" and config.warm_start:
        # Answer the host's first requests from recorded answers while the rest imports.
        warm = begin_warm_start(config.answer_settings)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="ctxtrio %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM request is noise
    import trio

    from ._app import serve
    from ._sdk import import_sdk

    import_sdk()
    # Process-wide settings belong to the command, not to the library's serve(). What
    # exists now (the SDK's protocol models, our modules) lives as long as the process:
    # hide it from the collector, whose full passes over ~100k permanent objects took
    # ~95 ms here and stalled every call in flight.
    gc.collect()
    gc.freeze()
    if config.transport == "http":
        # Many clients ingesting at once keep worker threads busy chunking and indexing; a
        # shorter GIL switch interval lets the event loop (and a context_status between
        # ingests) get the GIL back sooner. Measured: status p50 62 -> 32 ms under a storm.
        sys.setswitchinterval(0.001)

    try:
        trio.run(partial(serve, config, warm=warm))
    except (ConfigError, StoreError) as exc:  # the data dir or its index is unusable
        sys.stderr.write(f"ctxtrio: error: {exc}\n")
        return 2
    return 0
