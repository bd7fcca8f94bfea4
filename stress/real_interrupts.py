"""A second client on the same llama-cpp-python server while ctxtrio streams: cut-offs are interrupts, not failures.

Run from the repository root (a venv as ``stress/real_model.py`` builds it)::

    python stress/real_interrupts.py --venv ~/.cache/ctxtrio-realmodel/venv [--model smollm2] [--rounds 3]

llama-cpp-python's server interrupts a stream when another request arrives
(``interrupt_requests``, default ``True``: "Whether to interrupt requests when a new
request is received", llama_cpp/server/settings.py; the streaming loop ends the stream
with ``[DONE]`` and no finish reason once another request waits for the model lock,
llama_cpp/server/app.py ``get_event_publisher``). Short prompts, so the cut falls in
generation even on a loaded machine:

1. ``--rounds`` times: ``LLMClient.complete`` streams an answer of up to 200 tokens; once
   its first characters are in, another client posts a 4-token chat completion. Per
   round: what the stream raised, how many characters had come, the breaker's state.
2. ``Summarizer.one_liners`` over three short texts, the other client posting every
   ``--every`` seconds the whole time: the cut-offs the summarizer logged (each retried
   after 1, 2, 4 s), the breaker's state, and whether every line kept is a text the
   checks passed (not a truncated one: each kept line must pass
   :func:`ctxtrio.llm.checks.rejection` again).

A measurement: the exit code is 1 only when the breaker opened or a kept line fails the
checks.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

STRESS = Path(__file__).resolve().parent
sys.path.insert(0, str(STRESS))

from real_server import gguf_for, model_arguments, running_server  # noqa: E402
from real_summaries import CutOffs  # noqa: E402
from slow_model import load  # noqa: E402

from ctxtrio._errors import LLMError  # noqa: E402
from ctxtrio.llm._outcome import ONE_LINER_TOKENS  # noqa: E402
from ctxtrio.llm._plan import one_liner_step  # noqa: E402
from ctxtrio.llm.checks import rejection  # noqa: E402
from ctxtrio.llm.client import open_llm_client  # noqa: E402
from ctxtrio.llm.messages import ChatMessage, LLMSettings  # noqa: E402
from ctxtrio.llm.summarizer import Summarizer  # noqa: E402
from ctxtrio.text.tokens import TokenModel, TokenModelRef  # noqa: E402

TEXTS = [
    "The backup job copies 42 GB from db-main to the vault every night at 02:00 and keeps 14 copies. "
    "It used to keep 30, but the vault filled up in May. A restore test runs on the first Sunday of "
    "each month; the last one took 3 hours and found no missing files. Alerts go to the on-call channel.",
    "Port 8443 serves the admin console; the public site moved to port 443 after the audit in March. "
    "The old port 8080 is closed at the firewall, and the load balancer sends plain HTTP to 443 with a "
    "redirect. Certificates renew every 60 days through the ACME client on the gateway host.",
    "Build 7731 failed twice on the arm64 runner because the cache key ignored the lockfile. After the "
    "key was changed to include it, builds 7732 to 7740 passed, each in about 11 minutes. The amd64 "
    "runner was never affected, since it does not restore the dependency cache at all.",
]


async def other(root: str) -> float:
    """Another program's short chat completion; returns its wall time."""
    started = time.monotonic()
    async with httpx.AsyncClient(trust_env=False, timeout=None) as client:
        await client.post(
            f"{root}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4},
        )
    return time.monotonic() - started


async def measure(base_url: str, args: argparse.Namespace) -> int:
    root = base_url.removesuffix("/v1")
    bad = 0
    async with open_llm_client(LLMSettings(base_url, timeout_s=600.0)) as client:
        for round_ in range(1, args.rounds + 1):
            seen: list[int] = []
            started = trio.Event()

            def watch(so_far: str, seen: list[int] = seen, started: trio.Event = started) -> None:
                seen.append(len(so_far))
                if len(so_far) >= 20:
                    started.set()

            async with trio.open_nursery() as nursery:

                async def cut_in(started: trio.Event = started) -> None:
                    await started.wait()
                    await other(root)

                nursery.start_soon(cut_in)
                began = time.monotonic()
                try:
                    completion = await client.complete(
                        [ChatMessage("user", "Write a long story about a lighthouse keeper and a storm.")],
                        max_tokens=200,
                        abort_if=watch,
                    )
                    outcome = f"complete ({completion.finish_reason}, {len(completion.text)} chars)"
                except LLMError as exc:
                    outcome = f"{type(exc).__name__}: {exc}"
                started.set()
            breaker = client.breaker_state.value
            bad += breaker != "closed"
            print(
                f"round {round_}: {time.monotonic() - began:.1f} s, {max(seen, default=0)} chars in; {outcome}; "
                f"breaker {breaker}; {load()}",
                flush=True,
            )
        ref = TokenModelRef(TokenModel.cold())
        summarizer = Summarizer(client, ref)
        cut_offs = CutOffs()
        logging.getLogger("ctxtrio.summaries").addHandler(cut_offs)
        logging.getLogger("ctxtrio.summaries").setLevel(logging.INFO)
        sent: list[float] = []
        async with trio.open_nursery() as nursery:

            async def keep_cutting_in() -> None:
                while True:
                    await trio.sleep(args.every)
                    sent.append(await other(root))

            nursery.start_soon(keep_cutting_in)
            began = time.monotonic()
            lines = await summarizer.one_liners(TEXTS)
            nursery.cancel_scope.cancel()
        model = ref.current
        print(f"one-liners: {time.monotonic() - began:.1f} s; other client answered {len(sent)} times; {load()}")
        print(f"cut off by the server and retried: {cut_offs.count}; breaker {client.breaker_state.value}")
        bad += client.breaker_state.value != "closed"
        for text, line in zip(TEXTS, lines, strict=True):
            step = one_liner_step(text, ONE_LINER_TOKENS)
            again = (
                rejection(
                    line.text,
                    source=step.text,
                    instruction=step.instruction,
                    target_tokens=step.target_tokens,
                    model=model,
                )
                if line.method == "llm"
                else None
            )
            bad += again is not None
            print(f"  {line.method:<10} {line.text!r} {('FAILS: ' + again) if again else ''}{line.note}")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    model_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between the other client's requests")
    args = parser.parse_args()
    gguf = gguf_for(args.model, args.venv, args.cache or args.venv.parent)
    print(f"start: {load()}", flush=True)
    with running_server(args.venv, gguf, n_ctx=4096, n_threads=args.threads) as server:
        print(f"llama-cpp-python serving {server.model} at {server.base_url}", flush=True)
        bad = trio.run(measure, server.base_url, args)
    print(f"end: {load()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
