"""One settings table: the README's configuration table, ``ctxtrio --help`` and the env mapping agree with it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtrio._config import Config, settings
from ctxtrio.cli.settings import GROUP, build_config, readme_table

README = Path(__file__).resolve().parents[1] / "README.md"
_FLAG = re.compile(r"--[a-z][a-z-]*")
_ENV = re.compile(r"CTX_[A-Z_]+")


def _readme_rows() -> list[str]:
    """The rows of the README's table under '## Configuration' (header and rule line included)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Configuration") :]
    start = section.index("| Flag | Env |")
    return section[start : section.index("\n\n", start)].splitlines()


def _help() -> str:
    result = subprocess.run(
        [sys.executable, "-m", "ctxtrio", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout


def test_readme_table_is_the_generated_one() -> None:
    """The README's configuration table is exactly what the settings table generates (python -m ctxtrio.cli.settings)."""
    assert "\n".join(_readme_rows()) + "\n" == readme_table()


def test_readme_table_names_what_ctxtrio_help_names() -> None:
    """Every flag and variable in ``ctxtrio --help``'s settings is in the README's table, and nothing else is."""
    help_text = _help()
    settings_part = help_text[help_text.index(GROUP) :]
    rows = _readme_rows()[2:]
    readme_flags = {flag for row in rows for flag in _FLAG.findall(row.split(" | ")[0])}
    readme_env = {name for row in rows for name in _ENV.findall(row.split(" | ")[1])}
    help_flags = set(_FLAG.findall(settings_part.split("\ncommands (")[0])) - {"--help"}
    assert readme_flags == help_flags
    assert readme_env == set(_ENV.findall(help_text))


def test_every_row_is_a_flag_and_a_variable() -> None:
    """Each setting's variable (and flag, when it has one) sets its field, and flags and variables are unique."""
    rows = settings()
    assert len({row.env for row in rows}) == len(rows)
    assert len({row.flag for row in rows if row.flag}) == len([row for row in rows if row.flag])
    assert {"shutdown_grace_s", "http_body_timeout_s", "warm_start"} <= {row.name for row in rows}


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["--shutdown-grace", "30"], {"CTX_SHUTDOWN_GRACE_S": "2"}, 30.0),
        ([], {"CTX_SHUTDOWN_GRACE_S": "2.5"}, 2.5),
        ([], {"CTX_SHUTDOWN_GRACE_S": ""}, Config().shutdown_grace_s),
    ],
)
def test_shutdown_grace_is_a_setting(argv: list[str], env: dict[str, str], expected: float) -> None:
    """The shutdown grace comes from --shutdown-grace, else CTX_SHUTDOWN_GRACE_S, else the default."""
    assert build_config(argv, env).shutdown_grace_s == expected


def test_switches_and_their_variables() -> None:
    """Bools take --X/--no-X and true/false variables; the transport takes --stdio/--http and a variable."""
    assert build_config(["--no-warm-start"], {}).warm_start is False
    assert build_config(["--warm-start"], {"CTX_WARM_START": "false"}).warm_start is True
    assert build_config([], {"CTX_WARM_START": "off"}).warm_start is False
    assert build_config(["--no-llm"], {}).llm_enabled is False
    assert build_config(["--http"], {"CTX_TRANSPORT": "stdio"}).transport == "http"
    assert build_config([], {"CTX_TOOLS": "compact"}).tools == "compact"
    assert build_config([], {"CTX_LLM_API_KEY": "k"}).llm_api_key == "k"
