"""retrieval_bench.py --data (stress/bench_data.py): a second run ingests and embeds only what changed.

The bench runs as it does from the command line (its own arguments, the real server in
process, semantic recall over HTTP), on a tiny corpus and the fake embedding endpoint of
tests/docs/test_embedding.py (testkit/fake_embeddings.py, served on loopback).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
import bench_data
import retrieval_bench
from bench_data import data_dir

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.text.embedding import text_parts
from ctxtrio.text.terms import index_text
from testkit.fake_embeddings import FakeEmbeddings, quick_embedders, serve_fake_embeddings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from retrieval_report import Outcome


def _page(name: str, topics: list[str]) -> str:
    """A page of one section per topic, each naming the page (in its heading trail) and its topic."""
    sections = "\n\n".join(
        f"## {topic.title()}\n\nThe {name} page tells how {topic} works, step by step, with an example of {topic} "
        f"and the errors {topic} raises when it is misused."
        for topic in topics
    )
    return f"# {name.title()}\n\n{sections}\n"


PAGES = {
    "alpha.md": _page("alpha", ["sorting", "searching", "hashing", "caching"]),
    "beta.md": _page("beta", ["parsing", "quoting", "escaping", "encoding"]),
    "gamma.md": _page("gamma", ["sockets", "timeouts", "retries", "proxies"]),
}
QUESTIONS = [
    {"kind": "natural", "query": "how does quoting work", "file": "beta.md", "answer": "how quoting works"},
    {"kind": "exact", "query": "timeouts", "file": "gamma.md", "answer": "errors timeouts raises"},
]
QUERIES = {question["query"] for question in QUESTIONS}


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedder polls and retries quickly; a query's vector may take a loaded machine's while."""
    quick_embedders(monkeypatch, poll_s=0.5, query_s=10.0)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (tmp_path / "questions.json").write_text(json.dumps({"questions": QUESTIONS}), encoding="utf-8")
    return folder


class Bench:
    """The bench's runs with ``--data tmp_path/kept`` against one fake endpoint."""

    def __init__(self, tmp_path: Path, corpus: Path, fake: FakeEmbeddings, url: str) -> None:
        self.kept = tmp_path / "kept"
        self._questions, self._corpus, self.fake, self._url = tmp_path / "questions.json", corpus, fake, url

    async def run(self, chunk_tokens: int = 50, more: tuple[str, ...] = ()) -> list[Outcome]:
        args = retrieval_bench.arguments().parse_args(
            ["--sources", str(self._corpus), "--questions", str(self._questions), "--data", str(self.kept)]
            + ["--embed-model", self.fake.model, "--embed-base-url", self._url, "--chunk-tokens", str(chunk_tokens)]
            + list(more)
        )
        return await retrieval_bench.run(args)

    def sent(self, since: int = 0) -> list[str]:
        """The document texts sent to the endpoint since its ``since``-th request (queries left out)."""
        return [text for batch in self.fake.requests[since:] for text in batch if text not in QUERIES]

    def vectors(self) -> set[tuple[str, str, int]]:
        """(journal, chunk, part) of every vector in the vectors file."""
        with sqlite3.connect(data_dir(self.kept) / "vectors.sqlite3") as conn:
            rows = conn.execute("SELECT journal, item, part FROM rows WHERE part >= 0").fetchall()
        return {(str(journal), str(item), int(part)) for journal, item, part in rows}

    def generations(self) -> dict[str, int]:
        """Each generation file of the data dir, and its modification time (ns)."""
        return {str(path): path.stat().st_mtime_ns for path in (data_dir(self.kept) / "docs").rglob("*.jsonl")}


@pytest.fixture
async def bench(tmp_path: Path, corpus: Path) -> AsyncIterator[Bench]:
    fake = FakeEmbeddings()
    async with trio.open_nursery() as nursery:
        yield Bench(tmp_path, corpus, fake, await serve_fake_embeddings(nursery, fake))
        nursery.cancel_scope.cancel()


def _answers(outcomes: list[Outcome]) -> list[tuple[int | None, dict[int, bool], int]]:
    return [(outcome.rank, outcome.found, outcome.skipped) for outcome in outcomes]


async def test_a_second_run_ingests_and_embeds_nothing_again(bench: Bench) -> None:
    """Every vector and generation file is kept; the second run sends no document to the endpoint."""
    first = await bench.run()
    sent, vectors, generations = bench.sent(), bench.vectors(), bench.generations()
    assert len(sent) == len(vectors) > 3  # several chunks per page, each embedded once
    asked = len(bench.fake.requests)
    second = await bench.run()
    assert bench.sent(asked) == []
    assert bench.vectors() == vectors and bench.generations() == generations
    assert _answers(second) == _answers(first)
    assert all(outcome.skipped == 0 for outcome in first + second)  # semantic recall in every search


async def test_a_changed_file_alone_is_ingested_and_embedded_again(bench: Bench, corpus: Path) -> None:
    await bench.run()
    before = bench.vectors()
    (corpus / "beta.md").write_text(PAGES["beta.md"] + "\n## Folding\n\nThe beta page tells how folding works.\n")
    asked = len(bench.fake.requests)
    await bench.run()
    again = bench.sent(asked)
    # Each part is led by its trail; only the new section's texts are sent (the vectors file keeps
    # every text it embedded: beta's unchanged chunks, in a new generation, cost no request).
    assert again and all(text.startswith("Beta") and "olding" in text for text in again)
    after = bench.vectors()
    beta = {row for row in before if row[0].startswith("docs/beta/")}  # journal docs/<doc_id>/<generation>.jsonl
    assert beta and before - after == beta  # alpha's and gamma's vectors kept
    assert len(after - before) > len(again) and all(row[0].startswith("docs/beta/") for row in after - before)


async def test_another_chunking_is_refused_before_any_change(bench: Bench) -> None:
    await bench.run(chunk_tokens=50)
    vectors, generations, asked = bench.vectors(), bench.generations(), len(bench.fake.requests)
    with pytest.raises(SystemExit, match="chunks or indexes 3 of the 3 unchanged files otherwise"):
        await bench.run(chunk_tokens=100)
    assert bench.vectors() == vectors and bench.generations() == generations and bench.sent(asked) == []


async def test_another_index_text_is_refused(bench: Bench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks alike, but this tree gives the index other text for them: the stored index rows are stale."""
    await bench.run()
    monkeypatch.setattr(bench_data, "index_text", lambda text: index_text(text).upper())
    with pytest.raises(SystemExit, match="chunks or indexes 3 of the 3 unchanged files otherwise"):
        await bench.run()


async def test_documents_this_run_does_not_ingest_are_refused(bench: Bench, corpus: Path) -> None:
    await bench.run()
    (corpus / "alpha.md").unlink()
    with pytest.raises(SystemExit, match="holds 1 document this run does not ingest"):
        await bench.run()


def _queries(fake: FakeEmbeddings) -> set[str]:
    """The texts embedded that are no chunk's (a chunk's part is led by its page's title)."""
    return {text for batch in fake.requests for text in batch if not text.startswith(("Alpha", "Beta", "Gamma"))}


async def test_rewrites_go_to_semantic_recall_alone_or_to_the_whole_query(bench: Bench, tmp_path: Path) -> None:
    """--rewrites adds a question's words when it is searched: to the vector side's query alone (meaning),
    or to the query itself, which semantic recall then embeds as it is (query)."""
    rewrites = tmp_path / "rewrites.json"
    rewrites.write_text(json.dumps({"how does quoting work": "escaping and encoding"}), encoding="utf-8")
    await bench.run(more=("--rewrites", str(rewrites), "--rewrite-to", "meaning"))
    assert _queries(bench.fake) == {"how does quoting work escaping and encoding", "timeouts"}
    bench.fake.requests.clear()
    outcomes = await bench.run(more=("--rewrites", str(rewrites)))
    assert _queries(bench.fake) == {"how does quoting work escaping and encoding", "timeouts"}
    assert [outcome.question.query for outcome in outcomes] == [q["query"] for q in QUESTIONS]  # as asked


async def test_rewritten_words_find_what_the_question_alone_does_not(tmp_path: Path, corpus: Path) -> None:
    """Keyword search only: the added words are searched, and the answer judged is the question's own."""
    (tmp_path / "zebra.json").write_text(
        json.dumps({"questions": [{"kind": "paraphrase", "query": "what do zebras eat", "file": "beta.md",
                                   "answer": "how escaping works"}]}),
        encoding="utf-8",
    )  # fmt: skip
    (tmp_path / "rewrites.json").write_text(json.dumps({"what do zebras eat": "escaping"}), encoding="utf-8")
    plain = ["--sources", str(corpus), "--questions", str(tmp_path / "zebra.json"), "--chunk-tokens", "50"]
    (alone,) = await retrieval_bench.run(retrieval_bench.arguments().parse_args(plain))
    rewritten = plain + ["--rewrites", str(tmp_path / "rewrites.json")]
    (restated,) = await retrieval_bench.run(retrieval_bench.arguments().parse_args(rewritten))
    assert not any(alone.found.values())
    assert all(restated.found.values()) and restated.rank == 1


async def test_the_wait_for_embeddings_sees_the_ingest(tmp_path: Path) -> None:
    """A pass over the empty catalog said "caught up"; the wait ends only once the new document is embedded."""
    fake = FakeEmbeddings()
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = Config(
            data_dir=tmp_path / "data", llm_enabled=False, audit=False, embed_model=fake.model, embed_base_url=url
        )
        async with open_wiring(config) as ctx:
            semantic = ctx.documents.semantic
            assert semantic is not None
            while semantic.status().state != "caught up":
                await trio.sleep(0.05)
            result = await ctx.documents.ingest(text=PAGES["alpha.md"], title="alpha")
            await retrieval_bench.embedded(ctx, time.perf_counter(), tmp_path / "data")
            status = semantic.status()
        nursery.cancel_scope.cancel()
    assert status.chunks_embedded == result.doc.chunks > 0


async def test_max_file_parts_asks_only_about_short_files_and_ingests_only_theirs(tmp_path: Path, corpus: Path) -> None:
    """--max-file-parts N --files 0: a question whose file is longer than N embedding parts is not asked,
    and its file is not ingested (the corpus a slow embedder must embed shrinks with the set)."""
    topics = [f"topic{n} handling" for n in range(40)]
    (corpus / "delta.md").write_text(_page("delta", topics), encoding="utf-8")
    longest_short = max(len(text_parts(text)) for text in PAGES.values())
    assert len(text_parts((corpus / "delta.md").read_text(encoding="utf-8"))) > longest_short
    delta = {"kind": "exact", "query": "topic7 handling", "file": "delta.md", "answer": "how topic7 handling works"}
    (tmp_path / "four.json").write_text(json.dumps({"questions": [*QUESTIONS, delta]}), encoding="utf-8")
    kept = tmp_path / "kept"
    args = ["--sources", str(corpus), "--questions", str(tmp_path / "four.json"), "--chunk-tokens", "50"]
    args += ["--files", "0", "--data", str(kept), "--max-file-parts", str(longest_short)]
    outcomes = await retrieval_bench.run(retrieval_bench.arguments().parse_args(args))
    assert [outcome.question.query for outcome in outcomes] == [q["query"] for q in QUESTIONS]
    assert {path.name for path in (data_dir(kept) / "docs").iterdir() if path.is_dir()} == {"beta", "gamma"}
