"""stress/recall_bench.py's core on a tiny session: the real server, the tools a model calls.

The bench itself runs over this repository's commit messages; here the notes are a small
fixture, so the test does not depend on which commits a clone holds. With semantic recall the
endpoint is the fake of testkit/fake_embeddings.py, served on loopback, whose synonym groups
stand in for meaning.
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
from recall_bench import arguments, commit_notes, missing_answers, run
from recall_report import Note, Question

from testkit.fake_embeddings import FakeEmbeddings, quick_embedders, serve_fake_embeddings

if TYPE_CHECKING:
    from recall_report import Run

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


@pytest.fixture
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedders poll and retry quickly; a query's vector may take a loaded machine's while."""
    quick_embedders(monkeypatch, poll_s=0.5, query_s=10.0)


# The paraphrase shares no word with its note; to the fake endpoint "pets" means "zebrafish" and "fed" "cleaned".
MEANING = [{"pets", "zebrafish"}, {"fed", "cleaned"}]


@pytest.mark.usefixtures("quick_polls")
async def test_with_an_embedding_model_meaning_finds_what_the_words_do_not() -> None:
    fake = FakeEmbeddings(synonyms=MEANING)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        args = arguments().parse_args(["--embed-model", fake.model, "--embed-base-url", url, "--docs"])
        found = await run(NOTES, QUESTIONS, docs=args.docs, embed_model=args.embed_model, embed_base_url=url)
        nursery.cancel_scope.cancel()
    paraphrase = next(o for o in found.outcomes if o.question.kind == "paraphrase")
    # Without the model nothing is returned (test_the_bench_ranks_finds_and_classifies); with it, the note
    # is the one nearest in meaning, ranked first by the fused ranking and shown at every budget.
    assert found.semantic and paraphrase.meaning_rank == 1 and paraphrase.rank == 1
    assert paraphrase.found == {250: True, 500: True, 1000: True} and paraphrase.miss[1000] == ""
    assert all(o.skipped == 0 for o in found.outcomes)  # every answer had semantic recall
    # Every entry, and every note as a document, was embedded before the first question.
    asked = {text for batch in fake.requests for text in batch}
    assert all(any(note.text in text or text in note.text for text in asked) for note in NOTES)
