"""stress/recall_bench.py's core on a tiny session: the real server, the tools a model calls.

The bench itself runs over this repository's commit messages; here the notes are a small
fixture, so the test does not depend on which commits a clone holds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
from recall_bench import Note, Question, commit_notes, missing_answers, run

if TYPE_CHECKING:
    from recall_bench import Run

FILLER = "\n".join(f"step {n}: the routine rebuild of the cache went as planned, nothing to report" for n in range(60))
NOTES = [
    Note("long", FILLER + "\nDecision: the zebrafish importer keeps its retries at three attempts.\n" + FILLER),
    Note("short", "zebrafish tank cleaned on Monday, water changed"),
    Note("other", "The release notes moved to docs/changes.md; nothing else changed."),
]
QUESTIONS = [
    Question("exact", "zebrafish importer retries", "long", "keeps its retries at three attempts"),
    Question("natural", "where did the release notes move?", "other", "moved to docs/changes.md"),
    # Not "aquarium chores": recall expands "aquarium" to its neighbour "tank" (memory/expansion.py).
    Question("paraphrase", "which pets were fed?", "short", "water changed"),
]


def _run() -> Run:
    return trio.run(lambda: run(NOTES, QUESTIONS, docs=True))


def test_the_bench_ranks_finds_and_classifies() -> None:
    outcomes = {o.question.kind: o for o in _run().outcomes}
    exact, natural, paraphrase = outcomes["exact"], outcomes["natural"], outcomes["paraphrase"]
    assert exact.rank == 1 and natural.rank == 1
    # The long entry (about 1,200 tokens) is shown as its passage: the answer inside at every budget.
    assert exact.found == {250: True, 500: True, 1000: True} and exact.returned[250]
    assert "[...]" in exact.texts[250] and len(exact.texts[250]) < len(NOTES[0].text) / 4
    assert natural.found[1000] and natural.miss[1000] == ""
    # No word of the paraphrase, nor a form or neighbour of one, is in the session: nothing is returned, and
    # the miss says so.
    assert paraphrase.rank is None and not paraphrase.found[1000] and paraphrase.miss[1000] == "not returned"
    assert exact.doc_found[1000] and natural.doc_found[1000]


def test_answers_are_checked_in_their_entries() -> None:
    wrong = Question("exact", "zebrafish", "short", "three attempts")
    assert missing_answers(NOTES, [*QUESTIONS, wrong]) == [wrong]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_commit_notes_reads_whole_messages_oldest_first(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    messages = ["first: the subject\n\nA body line.\nAnother, with | and ; in it.", "second one"]
    for message in messages:
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", message)
    notes = commit_notes(tmp_path, "HEAD")
    assert [note.text for note in notes] == messages
    assert notes[-1].key == git("rev-parse", "HEAD")
