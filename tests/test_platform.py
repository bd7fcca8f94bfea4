"""On a system that is not POSIX, the CLI and the library's entry give one clear error, not an ImportError."""

from __future__ import annotations

import importlib
import os

import pytest

import ctxtrio
from ctxtrio import _platform
from ctxtrio._cli import main
from ctxtrio._config import Config
from ctxtrio._errors import ConfigError

MESSAGE = "ctxtrio runs on POSIX (Linux, macOS); on Windows use WSL or Docker"


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The platform check answers as on Windows."""
    monkeypatch.setattr(_platform, "on_posix", lambda: False)


@pytest.fixture
def no_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any module imported through importlib.import_module (the library's lazy names) fails the test."""

    def refuse(name: str, package: str | None = None) -> object:
        raise AssertionError(f"imported {name} on a non-POSIX system")

    monkeypatch.setattr(importlib, "import_module", refuse)


def test_the_check_reads_os_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where os.name is "nt" (Windows), require_posix raises ConfigError with the one message."""
    monkeypatch.setattr(os, "name", "nt")  # read by on_posix() at call time; undone before pytest runs on
    posix = _platform.on_posix()
    with pytest.raises(ConfigError) as caught:
        _platform.require_posix()
    monkeypatch.undo()
    assert not posix and str(caught.value) == MESSAGE


def test_cli_says_posix_only_and_exits_2(windows: None, capsys: pytest.CaptureFixture[str]) -> None:
    """The ctxtrio command prints the message on stderr and exits 2, before it parses or imports anything."""
    assert main(["--stdio"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"ctxtrio: error: {MESSAGE}\n" and captured.out == ""


@pytest.mark.parametrize("name", ["open_context", "serve", "SessionService", "Context"])
def test_library_entry_says_posix_only(windows: None, no_imports: None, name: str) -> None:
    """ctxtrio.open_context and the other names that reach the store raise the message before importing anything."""
    with pytest.raises(ConfigError, match="on Windows use WSL or Docker"):
        ctxtrio.__getattr__(name)


def test_config_and_errors_stay_usable_everywhere(windows: None) -> None:
    """Config and the error tree import nothing POSIX-only, so they are handed out on any system."""
    assert ctxtrio.__getattr__("ConfigError") is ConfigError
    assert ctxtrio.__getattr__("Config") is Config


def test_this_system_passes() -> None:
    """The suite runs on POSIX, where the check lets everything through."""
    assert _platform.on_posix()
    _platform.require_posix()
