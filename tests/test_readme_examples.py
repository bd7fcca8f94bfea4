"""The README's worked examples are real output: what ``python stress/readme_examples.py`` prints today."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("## How a session actually goes", "## How a document goes")


def _readme_block(title: str) -> str:
    """The first ```text block under ``title`` in the README, without its fences."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(title) :]
    start = section.index("```text\n") + len("```text\n")
    return section[start : section.index("\n```", start)]


def test_readme_transcripts_are_what_the_tools_answer_now() -> None:
    """Each transcript is the script's output for its section, byte for byte (reword a tool: rerun the script)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "stress" / "readme_examples.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    printed = result.stdout.split("\n== ")
    assert [part.split("\n", 1)[0].removeprefix("== ") for part in printed] == [s.removeprefix("## ") for s in SECTIONS]
    for title, part in zip(SECTIONS, printed, strict=True):
        assert _readme_block(title) == part.split("\n", 1)[1].rstrip("\n"), title
