"""Ask a local language model to restate retrieval questions before searching (keywords or HyDE).

Writes ``{question: what the model wrote}`` for ``stress/retrieval_bench.py --rewrites FILE``, which
searches each question with those words added (``--rewrite-to query``) or adds them only to semantic
recall's query (``--rewrite-to meaning``), and judges by the question's own file and answer::

    python stress/query_rewrites.py --venv ~/.cache/ctxtrio-realmodel/venv --model smollm2 --threads 1 \\
        --ask keywords --out /tmp/rw/smollm2-keywords.json \\
        stress/retrieval_questions_python14.json stress/retrieval_questions_python15.json
    python stress/query_rewrites.py --base-url http://127.0.0.1:8080/v1 --served-model NAME --ask hyde ...

``--ask keywords``: the words the Python manual would use on the page that answers the question;
``--ask hyde``: a 2-3 sentence answer as the manual would write it (hypothetical document embeddings).
Temperature 0, so a second run writes the same; a question already in ``--out`` is not asked again,
so a run cut short resumes. An instruction-tuned model (SmolLM2) is asked through
``/v1/chat/completions`` with one example turn; a base model (``--completion``; Gemma 3 270M is
one, and is asked so by default) through ``/v1/completions`` with the examples as a prompt, since
it does not follow instructions. With a single example Gemma copied the example's keywords for
every question; three examples keep it off them (session 23, hyde23). The examples' questions are
of pages none of python14 ... python17 asks about, but for one.

It prints every tenth question with what the model wrote, and at the end the seconds per question
(mean, p50, max) and how many answers were empty or copied an example.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Final

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_server import gguf_for, running_server
from retrieval_questions import load_questions

if TYPE_CHECKING:
    from collections.abc import Collection

    from ctxtrio.docs.embedding import SemanticHits
    from ctxtrio.docs.service import DocumentService

VENV: Final = Path.home() / ".cache" / "ctxtrio-realmodel" / "venv"
#: (question, keywords, answer) of pages the users'-words dev sets (python14 ... python17) do not ask about,
#: but for copy's one question in python17.
EXAMPLES: Final = (
    (
        "how can I tell if two floats are nearly the same?",
        "math.isclose, rel_tol, abs_tol, approximate equality, floating point comparison",
        "math.isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0) returns True if the values a and b are close to each "
        "other and False otherwise. Whether or not two values are considered close is determined according to "
        "given absolute and relative tolerances.",
    ),
    (
        "make a copy of a nested list so changes don't touch the original",
        "copy.deepcopy, deep copy, shallow copy, compound objects, copy module",
        "copy.deepcopy(x) returns a deep copy of x. A deep copy constructs a new compound object and then, "
        "recursively, inserts copies into it of the objects found in the original.",
    ),
    (
        "stop my script if a network call takes too long",
        "socket.settimeout, timeout, socket.timeout, blocking mode, TimeoutError",
        "socket.settimeout(value) sets a timeout on blocking socket operations. If a timeout is set and the "
        "operation does not complete in time, it raises TimeoutError.",
    ),
)
INSTRUCTIONS: Final = {
    "keywords": "Write the keywords the official Python documentation would use on the page that answers this "
    "question: module, function, class, option names and technical terms. Only the keywords, comma-separated.",
    "hyde": "Write 2-3 sentences as the official Python documentation would, answering this question. "
    "Name the module, function or option.",
}
LABELS: Final = {
    "keywords": "Keywords used by the Python documentation",
    "hyde": "Answer from the Python documentation",
}
MAX_TOKENS: Final = {"keywords": 40, "hyde": 100}
#: Words of the examples' answers that a copy of them carries.
COPIED: Final = ("isclose", "rel_tol", "deepcopy", "settimeout")


def _post(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.loads(response.read())
    if not isinstance(answer, dict):
        raise ValueError(f"{url} answered {answer!r}")
    return answer


def _choice(answer: dict[str, object]) -> dict[str, object]:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError(f"no choice in {answer!r}")
    return choices[0]


def chat_messages(ask: str, question: str) -> list[dict[str, str]]:
    """One example turn (the first example), then the question, each with the instruction."""
    example, keywords, answer = EXAMPLES[0]
    instruction = INSTRUCTIONS[ask]
    return [
        {"role": "user", "content": f"{instruction}\n\nQuestion: {example}"},
        {"role": "assistant", "content": keywords if ask == "keywords" else answer},
        {"role": "user", "content": f"{instruction}\n\nQuestion: {question}"},
    ]


def completion_prompt(ask: str, question: str) -> str:
    """The examples as question/answer pairs (all three for keywords, the first for hyde), then the question."""
    label = LABELS[ask]
    shots = EXAMPLES if ask == "keywords" else EXAMPLES[:1]
    pairs = "".join(f"Question: {q}\n{label}: {k if ask == 'keywords' else a}\n\n" for q, k, a in shots)
    return f"{pairs}Question: {question}\n{label}:"


def restate(base_url: str, model: str, ask: str, question: str, *, completion: bool) -> str:
    """What the model writes for ``question``, whitespace runs as one space, code fences dropped."""
    common: dict[str, object] = {"model": model, "temperature": 0, "max_tokens": MAX_TOKENS[ask]}
    if completion:
        body = {**common, "prompt": completion_prompt(ask, question), "stop": ["\n\n", "Question:"]}
        text = _choice(_post(f"{base_url}/completions", body)).get("text")
    else:
        body = {**common, "messages": chat_messages(ask, question)}
        message = _choice(_post(f"{base_url}/chat/completions", body)).get("message")
        text = message.get("content") if isinstance(message, dict) else None
    return " ".join(re.sub(r"```\w*", " ", str(text or "")).split())


def ask_all(base_url: str, model: str, args: argparse.Namespace) -> None:
    out: Path = args.out
    written: dict[str, str] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    questions = list(dict.fromkeys(q.query for path in args.questions for q in load_questions(path)))
    seconds: list[float] = []
    for n, question in enumerate(q for q in questions if q not in written):
        began = time.perf_counter()
        written[question] = restate(base_url, model, args.ask, question, completion=args.completion)
        seconds.append(time.perf_counter() - began)
        if n % 10 == 0:
            out.write_text(json.dumps(written, indent=1) + "\n", encoding="utf-8")
            print(f"{question!r} -> {written[question]!r} ({seconds[-1]:.1f} s)", flush=True)
    out.write_text(json.dumps(written, indent=1) + "\n", encoding="utf-8")
    copied = sum(any(w in text and w not in q for w in COPIED) for q, text in written.items())
    empty = sum(not text for text in written.values())
    timing = (
        f"{statistics.mean(seconds):.2f} s per question (p50 {statistics.median(seconds):.2f}, max {max(seconds):.1f})"
        if seconds
        else "nothing asked"
    )
    print(f"{len(seconds)} asked, {len(written)} in {out}: {timing}; {empty} empty, {copied} copied an example")


def read_rewrites(path: Path | None) -> dict[str, str]:
    """``--rewrites``: {question: words to add}, e.g. a model's keywords or hypothetical answer for it."""
    if path is None:
        return {}
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict) or not all(isinstance(v, str) for v in loaded.values()):
        raise SystemExit(f"{path}: expected a JSON object of question -> added words")
    return {str(k): v for k, v in loaded.items()}


def restate_meaning(documents: DocumentService, added: dict[str, str]) -> None:
    """Semantic recall alone is asked the question with its added words; the keyword side keeps the question.

    For the bench only: doc_search has one query for both sides, so the bench replaces this service's
    ``semantic.nearest`` rather than give the package a second query it would not otherwise use."""
    semantic = documents.semantic
    if semantic is None:
        raise SystemExit("--rewrite-to meaning needs --embed-model")
    nearest = semantic.nearest

    async def restated(query: str, journals: Collection[str] | None, limit: int) -> SemanticHits:
        return await nearest(f"{query} {added[query]}" if added.get(query) else query, journals, limit)

    semantic.nearest = restated  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("questions", type=Path, nargs="+", help="retrieval_questions_*.json files")
    parser.add_argument("--ask", choices=tuple(INSTRUCTIONS), required=True)
    parser.add_argument("--out", type=Path, required=True, help="JSON {question: text}; resumed if present")
    parser.add_argument("--base-url", help="an OpenAI-compatible server already running (else --venv starts one)")
    parser.add_argument("--served-model", default="", help="the model name to send with --base-url")
    parser.add_argument("--completion", action="store_true", help="a base model: /v1/completions with examples")
    parser.add_argument("--venv", type=Path, default=VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--model", default="smollm2", help="gemma, smollm2 or a .gguf path, served from --venv")
    parser.add_argument("--threads", type=int, default=1, help="server threads (1: the machine is shared)")
    args = parser.parse_args()
    if args.base_url:
        ask_all(args.base_url.rstrip("/"), args.served_model, args)
        return 0
    args.completion = args.completion or args.model == "gemma"
    gguf = Path(args.model) if args.model.endswith(".gguf") else gguf_for(args.model, args.venv, args.venv.parent)
    with running_server(args.venv, gguf, n_ctx=2048, n_threads=args.threads) as server:
        ask_all(server.base_url, server.model, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
