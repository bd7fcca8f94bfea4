"""Does the answer land inside the budget? context_recall over a session of real notes, 60 fixed questions.

Run as ``python stress/recall_bench.py`` from the repository root (a clone with its history).
The session-side twin of ``stress/retrieval_bench.py``. The notes are this repository's own
commit messages, the kind of long note a model writes into working memory (decisions,
numbers, file names): every commit from the root to a fixed commit (``last`` in the
question file, so the set stays the same as main grows), each full message one entry,
appended in history order into one session through the real server (``open_wiring`` and the
official SDK's in-memory client, no LLM, as retrieval_bench does). Then each question of
``stress/recall_questions.json`` (20 exact identifiers or file names, 20 natural questions,
20 paraphrases; each names its entry by commit hash and a short answer string copied
verbatim from that message; written before any recall ran over them, never edited) is
asked of ``context_recall`` with its query alone, as a model would. A second set,
``--questions stress/recall_questions2.json`` (60 more, of the same kinds, over 60 other
entries up to 05e17c6, written by another engineer from ``git log`` before any recall ran over
them), was held out through the session that tuned recall on the first, and judged it. A third,
``--questions stress/recall_questions3.json`` (60 entries up to f2f080d, none of the first two
sets' uses, written the same way), was held out through a session that changed no recall rule;
a fourth, ``--questions stress/recall_questions4.json`` (60 entries up to c412aa1, none of the
first three sets' uses), likewise, and a fifth, ``--questions stress/recall_questions5.json``
(60 entries up to b813b34, none of the first three sets' uses; its writer did not read the
fourth), through two sessions, and a sixth, ``--questions stress/recall_questions6.json`` (60
entries up to 54b81b6, none of the first four sets' uses; its writer did not read the fifth),
through one, its natural questions asked as by someone who does not remember the note's words, and
a seventh, ``--questions stress/recall_questions7.json`` (60 entries up to 4732694, none of the
first five sets' uses; its writer did not read the sixth), written the same way, through one, and
an eighth, ``--questions stress/recall_questions8.json`` (60 entries up to 7486b7d, none of the
first six sets' uses; its writer did not read the seventh), written the same way, through one, and
a ninth, ``--questions stress/recall_questions9.json`` (60 entries up to 9a2f615, none of the
first seven sets' uses; its writer did not read the eighth), written the same way, through one, and
a tenth, ``--questions stress/recall_questions10.json`` (60 entries up to 8d0d9fc, none of the
first eight sets' uses; its writer did not read the ninth), written the same way, through one, and
an eleventh, ``--questions stress/recall_questions11.json`` (60 entries up to 2492543, none of the
first nine sets' uses; its writer did not read the tenth), written the same way, through the
session of its writing (committed at its end), and a twelfth, ``--questions
stress/recall_questions12.json`` (60 entries up to b4f139d, none of the first ten sets' uses; its
writer did not read the eleventh; its "about" says each third holds 6-7 questions of each kind, but
the last third holds 8 paraphrases), likewise, and a thirteenth, ``--questions
stress/recall_questions13.json`` (60 entries up to 9b845d0, none of the first eleven sets' uses;
its writer did not read the twelfth; its "about" says it was written 20:13-20:31 UTC, but its
writer's note says the file was written and checked at 20:14:49 UTC: the file is left as checked),
likewise, and a fourteenth, ``--questions stress/recall_questions14.json`` (60 entries up to
0b969f4, 1,073 entries, none of the first twelve sets' uses; its writer did not read the thirteenth;
written 23:08-23:09 UTC on 2026-12-06), likewise:

- once per budget (250, 500, 1,000 tokens): is the answer inside the text returned?
  (whitespace runs compared as one space, case-insensitive); is the entry among those
  returned (the structured ``ids``)?
- for the ranking: the recall lists its entries in session order, not rank order, so the
  rank is read from the tool itself: ``budget_tokens=100000`` with ``limit`` 1, 2, ... 10
  (every match fits; the limit keeps the best ``limit``): the entry's rank is the smallest
  limit that returns it. Right entry in the top 3, MRR@10.

Each miss is classified per budget: *cut* (the entry is returned, cut to a passage that
does not hold the answer), *room* (the entry ranks in the first 10 but was not returned:
no room), *not returned* (not among the first 10). ``--docs`` ingests every message as a
document too (``doc_ingest`` text, one document each) and asks ``doc_search`` the same
questions at the same budgets, to compare how the two pack the same text.
``--json FILE`` writes every question's outcome (``stress/recall_report.py`` reads a run); ``--show KIND`` prints that kind's
1,000-token misses. Answers are deterministic (no embeddings, token estimates only);
latencies (wall, in process) are not.

Semantic recall: ``--embed-model ID --embed-base-url URL`` runs the server with it (e.g.
all-MiniLM-L6-v2 through ``stress/embed_cache.py``'s caching endpoint, which answers a text
it has embedded before from its cache). After the appends it waits until every entry is
embedded (``bench_embed.caught_up``: by a pass that began after the last append), prints how
long that took, and refuses to ask anything when an entry has no vector (the endpoint
refused it): a count over part of the session is not the count. ``--query-wait S`` replaces
how long a recall waits for its query's vector (0.5 s in the server); each answer that went
without semantic recall is counted. Each question's entry is also looked up among the 10
nearest the query in meaning alone (its *meaning rank*), and the misses say how many of
them meaning had found. With ``--docs`` the documents' chunks are embedded too, waited for
the same way, so ``doc_search`` answers with its hybrid ranking.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from bench_embed import RECALL_SKIPPED, SEARCH_SKIPPED, add_embed_arguments, caught_up, set_query_wait
from mcp import Client
from recall_report import BUDGETS, KINDS, RANK_DEPTH, Note, Outcome, Question, Run, as_json, report

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.semantic import entry_of
from testkit.results import text_of

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from ctxtrio._wiring import Wiring

HERE = Path(__file__).resolve().parent
SESSION = "recall-bench"


def normalized(text: str) -> str:
    return " ".join(text.split()).casefold()


def load_questions(path: Path) -> tuple[str, list[Question]]:
    """The question file's ``last`` commit and its questions."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    questions = [Question(q["kind"], q["query"], q["entry"], q["answer"]) for q in raw["questions"]]
    return str(raw["last"]), questions


def commit_notes(repo: Path, last: str) -> list[Note]:
    """Every commit's full message from the root to ``last``, oldest first (one ``git log`` call)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--reverse", "--format=%H%x1f%B%x1e", last],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    notes = []
    for record in out.split("\x1e"):
        key, sep, message = record.strip("\n").partition("\x1f")
        if sep and message.strip():
            notes.append(Note(key, message.strip()))
    return notes


def missing_answers(notes: list[Note], questions: list[Question]) -> list[Question]:
    """Questions whose answer is not verbatim (normalized) in their entry's text, or whose entry is absent."""
    texts = {note.key: normalized(note.text) for note in notes}
    return [q for q in questions if normalized(q.answer) not in texts.get(q.entry, "")]


def _text(result: CallToolResult) -> str:
    if result.is_error:
        raise SystemExit(f"tool error: {text_of(result)}")
    return text_of(result)


def _field(result: CallToolResult, name: str) -> object:
    _text(result)
    return (result.structured_content or {}).get(name)


async def _ids(client: Client, query: str, budget: int, limit: int | None = None) -> tuple[list[str], str]:
    arguments: dict[str, object] = {"session_id": SESSION, "query": query, "budget_tokens": budget}
    if limit is not None:
        arguments["limit"] = limit
    result = await client.call_tool("context_recall", arguments)
    ids = _field(result, "ids")
    assert isinstance(ids, list)
    return [str(one) for one in ids], _text(result)


async def _rank(client: Client, query: str, wanted: str) -> int | None:
    """The entry's rank among the first RANK_DEPTH matches: the smallest limit that returns it."""
    top, _ = await _ids(client, query, 100_000, RANK_DEPTH)
    if wanted not in top:
        return None
    low, high = 1, RANK_DEPTH  # the smallest limit in [low, high] whose answer holds it
    while low < high:
        middle = (low + high) // 2
        got, _ = await _ids(client, query, 100_000, middle)
        low, high = (low, middle) if wanted in got else (middle + 1, high)
    return low


async def _meaning_rank(ctx: Wiring, query: str, wanted: str) -> int | None:
    """The entry's rank among the RANK_DEPTH entries nearest ``query`` in meaning alone (None: not among them)."""
    semantic = ctx.sessions.semantic
    assert semantic is not None
    near = await semantic.nearest(SESSION, query, RANK_DEPTH)
    entries = [entry_of(key) for key in near.keys]
    return entries.index(wanted) + 1 if wanted in entries else None


async def ask(client: Client, outcome: Outcome, wanted: str, latencies: dict[int, list[float]]) -> None:
    question = outcome.question
    outcome.rank = await _rank(client, question.query, wanted)
    answer = normalized(question.answer)
    for budget in BUDGETS:
        began = time.perf_counter()
        ids, text = await _ids(client, question.query, budget)
        latencies[budget].append(time.perf_counter() - began)
        outcome.texts[budget] = text
        outcome.skipped += RECALL_SKIPPED in text
        outcome.found[budget] = answer in normalized(text)
        outcome.returned[budget] = wanted in ids
        if outcome.found[budget]:
            outcome.miss[budget] = ""
        elif outcome.returned[budget]:
            outcome.miss[budget] = "cut"
        else:
            outcome.miss[budget] = "room" if outcome.rank is not None else "not returned"


async def ask_docs(ctx: Wiring, client: Client, notes: list[Note], outcomes: list[Outcome]) -> None:
    """Each note as a document; each question asked of doc_search at the same budgets."""
    began = time.perf_counter()
    for note in notes:
        _text(await client.call_tool("doc_ingest", {"text": note.text, "doc_id": f"c{note.key[:40]}"}))
    if ctx.documents.semantic is not None:
        await caught_up(ctx.documents.semantic)
        status = ctx.documents.semantic.status()
        print(
            f"documents fully embedded {time.perf_counter() - began:.0f} s after their ingest began: "
            f"{status.chunks_embedded} of {status.chunks_total} chunks ({status.chunks_refused} refused)",
            flush=True,
        )
        if status.chunks_embedded < status.chunks_total:
            raise SystemExit("refused: not every chunk has a vector (see the server log)")
    for outcome in outcomes:
        answer = normalized(outcome.question.answer)
        for budget in BUDGETS:
            result = await client.call_tool("doc_search", {"query": outcome.question.query, "budget_tokens": budget})
            text = _text(result)
            outcome.skipped += SEARCH_SKIPPED in text
            outcome.doc_found[budget] = answer in normalized(text)


async def entries_embedded(ctx: Wiring, entries: int, began: float) -> None:
    """Wait until every one of the session's ``entries`` has a vector; refuse the run when one has none."""
    semantic = ctx.sessions.semantic
    assert semantic is not None
    await caught_up(semantic)
    embedded, refused, vectors = semantic.stored
    print(
        f"entries fully embedded {time.perf_counter() - began:.0f} s after the appends began: "
        f"{embedded} of {entries} entries, {vectors} vectors ({refused} refused)",
        flush=True,
    )
    if embedded < entries:
        raise SystemExit(f"refused: {entries - embedded} of {entries} entries have no vector (see the server log)")


async def run(
    notes: list[Note], questions: list[Question], *, docs: bool = False, embed_model: str = "", embed_base_url: str = ""
) -> Run:
    """One session of ``notes`` (in order) through the real server, then every question asked.

    ``embed_model``/``embed_base_url``: the server's semantic recall (none when empty).
    """
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as tmp:
        config = Config(
            data_dir=Path(tmp) / "data",
            llm_enabled=False,
            audit=False,
            embed_model=embed_model,
            embed_base_url=embed_base_url,
        )
        async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
            began = time.perf_counter()
            ids: dict[str, str] = {}
            for note in notes:
                result = await client.call_tool("context_append", {"session_id": SESSION, "text": note.text})
                ids[note.key] = str(_field(result, "id"))  # a repeated message is stored once: its first id
            append_s = time.perf_counter() - began
            if ctx.sessions.semantic is not None:
                await entries_embedded(ctx, len(set(ids.values())), began)
            outcomes = [Outcome(q) for q in questions]
            latencies: dict[int, list[float]] = {budget: [] for budget in BUDGETS}
            for outcome in outcomes:
                wanted = ids[outcome.question.entry]
                await ask(client, outcome, wanted, latencies)
                if ctx.sessions.semantic is not None:
                    outcome.meaning_rank = await _meaning_rank(ctx, outcome.question.query, wanted)
            if docs:
                await ask_docs(ctx, client, notes, outcomes)
    return Run(outcomes, latencies, append_s, semantic=bool(embed_model))


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=HERE / "recall_questions.json")
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="the clone whose history is the session")
    parser.add_argument("--docs", action="store_true", help="also ask doc_search over the messages as documents")
    parser.add_argument("--json", type=Path, help="write every question's outcome here")
    parser.add_argument("--show", choices=KINDS, help="print this kind's 1,000-token misses")
    add_embed_arguments(parser)
    return parser


def main() -> int:
    args = arguments().parse_args()
    last, questions = load_questions(args.questions)
    notes = commit_notes(args.repo, last)
    missing = missing_answers(notes, questions)
    if missing:
        raise SystemExit(f"answers not in their entries: {missing}")
    set_query_wait(args.query_wait)
    found = trio.run(
        lambda: run(
            notes,
            questions,
            docs=args.docs,
            embed_model=args.embed_model or "",
            embed_base_url=args.embed_base_url or "",
        )
    )
    report(found, notes)
    if args.json is not None:
        args.json.write_text(json.dumps([as_json(o) for o in found.outcomes], indent=1) + "\n", encoding="utf-8")
    for outcome in found.outcomes:
        if args.show == outcome.question.kind and not outcome.found[1000]:
            q = outcome.question
            print(
                f"--- {q.query!r} ({q.entry[:10]}, rank {outcome.rank}, meaning rank {outcome.meaning_rank}, "
                f"{outcome.miss[1000]}): {q.answer!r}"
            )
            print(outcome.texts[1000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
