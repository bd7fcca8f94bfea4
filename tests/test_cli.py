"""Flags, environment variables and defaults become one validated Config."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from ctxtrio._config import Config
from ctxtrio._errors import ConfigError
from ctxtrio._setting import yes_no
from ctxtrio.cli.settings import build_config

if TYPE_CHECKING:
    from pathlib import Path


def test_defaults_match_the_original(tmp_path: Path) -> None:
    """Without flags or env, the defaults are the original server's."""
    config = build_config([], {})
    assert config.ingest_roots == ()
    assert config.llm_base_url == "http://localhost:1234/v1"
    assert config.llm_model == ""
    assert config.llm_timeout_s == 120.0
    assert config.llm_enabled is True
    assert config.budget_tokens is None and config.default_budget_tokens == 4000
    assert (config.chunk_tokens, config.chunk_overlap_tokens) == (800, 80)
    assert config.token_ratio == 0.27
    assert config.transport == "stdio"
    assert (config.http_host, config.http_port) == ("127.0.0.1", 3001)
    assert config.audit is True
    assert config.max_ingest_chars == 20_000_000
    assert config.data_dir.name == "ctxtrio"


def test_flag_beats_env_beats_default(tmp_path: Path) -> None:
    """Each setting takes the flag when given, else the environment variable, else the default."""
    env = {
        "CTX_DATA_DIR": str(tmp_path / "env"),
        "CTX_BUDGET": "3000",
        "CTX_CHUNK_TOKENS": "600",
        "CTX_LLM_TIMEOUT_MS": "5000",
        "CTX_LLM_ENABLED": "false",
        "CTX_AUDIT": "off",
        "CTX_TRANSPORT": "http",
        "CTX_HTTP_PORT": "4000",
        "CTX_LLM_MODEL": "qwen",
        "CTX_TOKEN_RATIO": "0.3",
    }
    config = build_config(["--data-dir", str(tmp_path / "flag"), "--budget", "2000", "--stdio", "--audit"], env)
    assert config.data_dir == tmp_path / "flag"
    assert config.budget_tokens == 2000
    assert config.transport == "stdio"
    assert config.audit is True
    assert config.chunk_tokens == 600
    assert config.llm_timeout_s == 5.0
    assert config.llm_enabled is False
    assert config.http_port == 4000
    assert config.llm_model == "qwen"
    assert config.token_ratio == 0.3


def test_ingest_roots_repeatable_and_path_list(tmp_path: Path) -> None:
    """--ingest-root repeats; CTX_INGEST_ROOTS is a ':'-separated list; the flag wins."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    assert build_config([], {"CTX_INGEST_ROOTS": f"{one}:{two}"}).ingest_roots == (one, two)
    assert build_config(
        ["--ingest-root", str(two), "--ingest-root", str(one)], {"CTX_INGEST_ROOTS": str(one)}
    ).ingest_roots == (two, one)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--budget", "-5"], {}, "--budget must be between"),
        (["--budget", "abc"], {}, "must be a number"),
        ([], {"CTX_BUDGET": "1000000"}, "CTX_BUDGET must be between"),
        (["--chunk-overlap", "800"], {}, "must be smaller than --chunk-tokens"),
        (["--chunk-overlap", "-1"], {}, "--chunk-overlap must be >= 0"),
        (["--chunk-tokens", "10"], {}, "--chunk-tokens must be between"),
        (["--port", "70000"], {}, "--port must be between"),
        (["--port", "-1"], {}, "--port must be between"),
        (["--token-ratio", "0"], {}, "--token-ratio must be between"),
        (["--llm-timeout", "0"], {}, "--llm-timeout must be > 0"),
        (["--llm-deadline", "-1"], {}, "--llm-deadline must be > 0"),
        (["--llm-base-url", "ftp://x"], {}, "must start with http"),
        (["--embed-base-url", "ftp://x"], {}, "--embed-base-url must start with http"),
        (["--host", "0.0.0.0"], {}, "is not loopback"),
        (["--host", "0.0.0.0", "--allow-remote"], {}, "needs --http-token"),
        (["--http-token", "short"], {}, "at least 16 characters"),
        ([], {"CTX_LLM_ENABLED": "maybe"}, "must be true or false"),
        ([], {"CTX_TRANSPORT": "carrier-pigeon"}, "must be stdio or http"),
        (["--ingest-root", "/definitely/not/here"], {}, "is not a directory"),
        (["--shutdown-grace", "-1"], {}, "--shutdown-grace must be >= 0"),
        # NaN parses as a float and passed every `<= 0` check: a SIGTERM then crashed ("deadline must not be NaN").
        (["--shutdown-grace", "nan"], {}, "--shutdown-grace must be >= 0 s, got nan"),
        (["--llm-deadline", "nan"], {}, "--llm-deadline must be > 0 s, got nan"),
        ([], {"CTX_LLM_TIMEOUT_MS": "NaN"}, "CTX_LLM_TIMEOUT_MS must be > 0 ms, got nan"),
        (["--http-body-timeout", "nan"], {}, "--http-body-timeout must be > 0 s, got nan"),
        ([], {"CTX_TOOLS": "tiny"}, "CTX_TOOLS must be full or compact"),
        (["--data-dir", ""], {}, "--data-dir is an empty path"),
        (["--ingest-root", ""], {}, "--ingest-root is an empty path"),
    ],
)
def test_bad_values_are_config_errors(argv: list[str], env: dict[str, str], message: str) -> None:
    """Every invalid value is rejected with a message naming it."""
    with pytest.raises(ConfigError, match=message):
        build_config(argv, env)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        ([], {"CTX_LLM_TIMEOUT_MS": "0"}, "CTX_LLM_TIMEOUT_MS must be > 0 ms, got 0"),
        ([], {"CTX_CHUNK_OVERLAP": "900"}, "CTX_CHUNK_OVERLAP (900) must be smaller than --chunk-tokens (800)"),
        (
            ["--chunk-overlap", "300"],
            {"CTX_CHUNK_TOKENS": "200"},
            "--chunk-overlap (300) must be smaller than CTX_CHUNK_TOKENS (200)",
        ),
        ([], {"CTX_HTTP_PORT": "70000"}, "CTX_HTTP_PORT must be between 0 and 65535, got 70000"),
        ([], {"CTX_INGEST_ROOTS": "/definitely/not/here"}, "CTX_INGEST_ROOTS /definitely/not/here is not a directory"),
        (
            [],
            {"CTX_HTTP_HOST": "0.0.0.0", "CTX_ALLOW_REMOTE": "true"},
            "CTX_ALLOW_REMOTE needs --http-token (or CTX_HTTP_TOKEN)",
        ),
        (["--budget", "10"], {"CTX_BUDGET": "10"}, "--budget must be between"),
        # The value is echoed as given: the message was rewritten as a whole, value and all.
        (
            [],
            {"CTX_LLM_BASE_URL": "localhost:1234/--llm-base-url"},
            "CTX_LLM_BASE_URL must start with http:// or https://, got 'localhost:1234/--llm-base-url'",
        ),
    ],
)
def test_a_bad_value_is_named_as_it_was_given(argv: list[str], env: dict[str, str], message: str) -> None:
    """A value out of range is named by the variable that gave it (a host's "env" block), by its flag when the
    flag gave it. Every range check named the flag: CTX_LLM_TIMEOUT_MS=0 said "--llm-timeout must be > 0 ms"."""
    with pytest.raises(ConfigError) as caught:
        build_config(argv, env)
    assert str(caught.value).startswith(message), str(caught.value)


def test_yes_no_reads_the_four_spellings_either_way() -> None:
    """yes_no: 1/true/yes/on and 0/false/no/off in any case and padding; anything else is None."""
    assert [yes_no(word) for word in ("1", " TRUE ", "Yes", "on")] == [True] * 4
    assert [yes_no(word) for word in ("0", "False", "NO ", "off")] == [False] * 4
    assert [yes_no(word) for word in ("", "maybe", "y", "2")] == [None] * 4


def test_embeddings_are_off_unless_a_model_is_named() -> None:
    """No embedding model by default; CTX_EMBED_MODEL or --embed-model names one, served at the LLM URL unless told."""
    assert build_config([], {}).embed_model == ""
    config = build_config(["--llm-base-url", "http://127.0.0.1:9/v1/"], {"CTX_EMBED_MODEL": "all-minilm"})
    assert (config.embed_model, config.embed_url) == ("all-minilm", "http://127.0.0.1:9/v1")
    config = build_config(["--embed-model", "nomic", "--embed-base-url", "http://e:1/v1/"], {"CTX_EMBED_MODEL": "x"})
    assert (config.embed_model, config.embed_url) == ("nomic", "http://e:1/v1")


def test_remote_bind_allowed_with_token() -> None:
    """A non-loopback host is accepted with --allow-remote and a token."""
    config = build_config(["--host", "0.0.0.0", "--allow-remote", "--http-token", "x" * 20], {})
    assert config.http_host == "0.0.0.0" and config.http_token == "x" * 20


def _run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxtrio", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_bad_value_exits_2_with_one_line() -> None:
    """The command prints one clear line on stderr and exits 2 for a bad value."""
    result = _run_cli("--budget", "-1", "--data-dir", "/tmp/unused-ctxtrio")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert "--budget must be between" in result.stderr


def test_unknown_flag_exits_2() -> None:
    """An unknown flag exits 2 with one line, like the original."""
    result = _run_cli("--frobnicate")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "unrecognized arguments" in result.stderr


def test_unwritable_data_dir_exits_2(tmp_path: Path) -> None:
    """A data dir that cannot be created is reported in one line, exit 2."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = _run_cli("--data-dir", str(blocker / "data"))
    assert result.returncode == 2
    assert "is not usable" in result.stderr and result.stderr.strip().count("\n") == 0


def test_help_lists_every_flag_and_variable() -> None:
    """--help names every flag and its environment variable."""
    result = _run_cli("--help")
    assert result.returncode == 0
    for word in (
        "--data-dir",
        "CTX_DATA_DIR",
        "--ingest-root",
        "CTX_INGEST_ROOTS",
        "--llm-base-url",
        "CTX_LLM_BASE_URL",
        "--llm-model",
        "CTX_LLM_MODEL",
        "--llm-timeout",
        "CTX_LLM_TIMEOUT_MS",
        "--no-llm",
        "CTX_LLM_ENABLED",
        "--budget",
        "CTX_BUDGET",
        "--chunk-tokens",
        "CTX_CHUNK_TOKENS",
        "--chunk-overlap",
        "CTX_CHUNK_OVERLAP",
        "--token-ratio",
        "CTX_TOKEN_RATIO",
        "--stdio",
        "--http",
        "CTX_TRANSPORT",
        "--host",
        "CTX_HTTP_HOST",
        "--port",
        "CTX_HTTP_PORT",
        "--audit",
        "--no-audit",
        "CTX_AUDIT",
        "--llm-deadline",
        "CTX_LLM_DEADLINE_S",
        "--http-token",
        "CTX_HTTP_TOKEN",
        "--allow-remote",
        "--embed-model",
        "CTX_EMBED_MODEL",
        "--embed-base-url",
        "CTX_EMBED_BASE_URL",
    ):
        assert word in result.stdout, word


def test_config_is_frozen() -> None:
    """Config cannot be changed after it is built."""
    config = Config()
    with pytest.raises(AttributeError):
        config.audit = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"data_dir": ""}, "data_dir is an empty path"),
        ({"ingest_roots": ""}, "ingest_roots holds an empty path"),
        ({"ingest_roots": ["/tmp", ""]}, "ingest_roots holds an empty path"),
    ],
)
def test_an_empty_path_is_refused_not_taken_as_the_current_directory(changes: dict[str, str], message: str) -> None:
    """A library Config with data_dir="" (an unset variable read with a default of "") is refused: Path("") is
    ".", so the data dir was the working directory and docs/, sessions/ and index.sqlite3 landed there; an
    empty ingest root let doc_ingest read every file under it. '.' itself still means the current one."""
    with pytest.raises(ConfigError, match=message):
        Config(**changes)  # type: ignore[arg-type]  # the keyword arguments of one field each
    assert str(Config(data_dir=".", ingest_roots=["."]).data_dir) == "."


def test_an_unusable_index_turns_document_search_off_with_one_warning(tmp_path: Path) -> None:
    """An index that cannot be opened (here a directory in its place; a full disk alike) is one warning
    naming the search index, and the server serves on (sessions need no index); before: exit 2."""
    data = tmp_path / "data"
    (data / "index.sqlite3").mkdir(parents=True)
    result = _run_cli("--data-dir", str(data), "--no-llm")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "search index" in warnings[0] and "cannot be opened" in warnings[0], result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "env", "named"),
    [
        (["--ingest-root", "."], {}, "--ingest-root '.'"),
        (["--data-dir", "state"], {}, "--data-dir 'state'"),
        ([], {"CTX_INGEST_ROOTS": "/usr:docs"}, "CTX_INGEST_ROOTS 'docs'"),
        ([], {"CTX_DATA_DIR": "ctxtrio-state"}, "CTX_DATA_DIR 'ctxtrio-state'"),
    ],
)
def test_relative_paths_are_refused_in_the_filesystem_root(
    argv: list[str], env: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host may start the server in / (an SDK stdio client without cwd passes on its own): there
    '--ingest-root .' opened every file of the machine to doc_ingest and '--data-dir state' wrote /state,
    silently (the ready line and context_guide showed them). Such a relative path is refused, naming it."""
    monkeypatch.chdir("/")
    with pytest.raises(ConfigError, match="relative path and the working directory is /") as raised:
        build_config(argv, env)
    assert named in str(raised.value) and "give an absolute path" in str(raised.value)


def test_relative_paths_elsewhere_and_absolute_ones_in_the_root_still_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a directory of one's own (the quick start's 'ctxtrio --ingest-root ./'), relative paths resolve
    against it as before; in / absolute paths and '~' are fine."""
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    config = build_config(["--ingest-root", "./docs", "--data-dir", "state"], {})
    assert config.ingest_roots == (tmp_path / "docs",) and config.data_dir == tmp_path / "state"
    monkeypatch.chdir("/")
    config = build_config(["--ingest-root", str(tmp_path), "--data-dir", "~/ctxtrio-state"], {})
    assert config.ingest_roots == (tmp_path,) and config.data_dir.is_absolute()


def test_in_the_root_one_path_is_read_whole_as_the_server_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """In /, the refusal reads each setting as the server does: CTX_DATA_DIR is one path, ':' and all (it was split
    like CTX_INGEST_ROOTS's list, and '/srv/ctx:2' refused for a relative '2' the server would never use); a list
    is still split, and its relative part refused."""
    monkeypatch.chdir("/")
    assert str(build_config([], {"CTX_DATA_DIR": "/srv/ctx:2"}).data_dir) == "/srv/ctx:2"
    with pytest.raises(ConfigError, match="CTX_INGEST_ROOTS 'docs' is a relative path"):
        build_config([], {"CTX_INGEST_ROOTS": "/usr:docs"})
