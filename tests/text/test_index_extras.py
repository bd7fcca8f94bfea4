"""Tests for the extras an ASCII chunk's index text adds: found in two C passes, the common shapes without the rules."""

from __future__ import annotations

import importlib
import random
import re
from pathlib import Path

from ctxtrio.text.terms import ascii_index_extras

# The module itself (``ctxtrio.text.terms`` the attribute is the function of that name).
terms_module = importlib.import_module("ctxtrio.text.terms")

FIXTURES = Path(__file__).parent / "fixtures"
#: The one-pass definition of the runs that can have extras (what ``ascii_index_extras`` used
#: before): every maximal run of word and connector characters holding an upper-case letter
#: or a connector.
_RUNS = re.compile(r"(?<![0-9A-Za-z_\-])[0-9a-z]*+[A-Z_\-][0-9A-Za-z_\-]*+")
_ALPHABET = "aZq09_-bQ x.\n(é"


def _by_rules(text: str) -> str | None:
    """The extras by the rules, run by run, found by the one-pass pattern."""
    if not text.isascii():
        return None
    return " ".join(filter(None, map(terms_module._extras_by_terms, _RUNS.findall(text))))


def _texts() -> list[str]:
    rng = random.Random(23)
    found = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.iterdir())]
    found += ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 60))) for _ in range(3_000)]
    found += [
        "",
        "_",
        "-_-",
        "a",
        "A",
        "_x",
        "x_",
        "is_set",
        "in_to",
        "getUserName",
        "HTTPServer",
        "1A",
        "A1B",
        "utf8Decode",
    ]
    return found


def test_extras_equal_the_rules_over_runs_found_in_one_pass() -> None:
    """Real files and random texts: the two-pass runs and the shortcuts give what the rules give."""
    for text in _texts():
        assert ascii_index_extras(text) == _by_rules(text), text


def test_shortcut_shapes_equal_the_rules() -> None:
    """Every run of the fixtures and of random runs: the shortcut for common shapes equals the rules."""
    rng = random.Random(5)
    runs = {run for path in FIXTURES.iterdir() for run in re.findall(r"[0-9A-Za-z_\-]+", path.read_text("utf-8"))}
    runs |= {"".join(rng.choice("aZ09_-bQ") for _ in range(rng.randint(1, 9))) for _ in range(20_000)}
    runs |= {
        "".join(
            rng.choice(("_", "-", "Ab", "AB", "ab", "a1", "A1", "1", "I", "S", "Is", "aB"))
            for _ in range(rng.randint(1, 5))
        )
        for _ in range(20_000)
    }
    for run in runs:
        assert terms_module._ascii_extras(run) == terms_module._extras_by_terms(run), run
