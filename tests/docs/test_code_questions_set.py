"""stress/code_questions.py --questions FILE: a second set in the committed set's format runs its own languages."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
from code_questions import QUESTIONS, TREES, read_questions


def test_the_committed_set_reads_as_twelve_questions_a_language() -> None:
    """The default set: its note left out, the five languages in TREES' order, 12 questions each."""
    questions = read_questions(QUESTIONS)
    assert list(questions) == list(TREES)
    assert {len(rows) for rows in questions.values()} == {12}


def test_a_second_set_runs_the_languages_it_has(tmp_path: Path) -> None:
    """A set with only rust and go questions (in any order) asks those two, in TREES' order."""
    path = tmp_path / "second.json"
    row = ["tokio spawn", "tokio-1.24.2/src/task/spawn.rs", "pub fn spawn<T>"]
    path.write_text(json.dumps({"_about": "two languages", "rust": [row], "go": []}), encoding="utf-8")
    assert read_questions(path) == {"go": [], "rust": [row]}


@pytest.mark.parametrize(
    ("content", "said"),
    [({"csharp": []}, "no tree for csharp"), ({"go": [["only a query"]]}, "go: not [query, file, definition]")],
)
def test_a_set_the_bench_cannot_run_stops_before_any_ingest(tmp_path: Path, content: object, said: str) -> None:
    """An unknown language or a malformed question is said at once, not after minutes of ingest."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(SystemExit, match=said.replace("[", r"\[").replace("]", r"\]")):
        read_questions(path)
