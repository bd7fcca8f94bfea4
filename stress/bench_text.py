"""Throughput of the pure text functions: token estimates, terms, chunking, summaries.

Run as ``python stress/bench_text.py`` from the repository root (``PYTHONPATH=.``).
Prints MB/s (UTF-8 bytes of input per second, best of three runs) per function and
corpus. The corpora are the test fixtures repeated to a few MB, plus synthetic ASCII
and mixed-script text.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

from ctxtrio.text.chunking import chunk_document
from ctxtrio.text.extractive import summarize_extractive
from ctxtrio.text.terms import terms
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    from collections.abc import Callable

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "text" / "fixtures"
MODEL = TokenModel.cold()
TARGET_BYTES = 4_000_000

_ASCII = "The quick brown fox jumps over the lazy dog; def f(x): return x[0] + {a: b}.\n"
_MIXED = (
    "Deploy notes: café Müller, Привет мир. 회의에서 결정했다. 数据库连接失败，请重试。"
    "カタカナとひらがな。 getUserName() -> retry_policy 🎉\n"
)


def corpus(base: str, target_bytes: int = TARGET_BYTES) -> str:
    """Repeat ``base`` to about ``target_bytes`` of UTF-8."""
    return base * max(1, target_bytes // len(base.encode()))


def random_english(target_bytes: int = TARGET_BYTES) -> str:
    """Prose from a 20,000-word vocabulary with some identifiers: little exact repetition."""
    rng = random.Random(1)
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(20_000)]
    out: list[str] = []
    size = 0
    while size < target_bytes:
        words = rng.choices(vocabulary, k=rng.randint(6, 20))
        if rng.random() < 0.3:
            words.append(f"{rng.choice(vocabulary)}_{rng.choice(vocabulary)}{rng.randint(0, 99)}")
        if rng.random() < 0.2:
            words.append(rng.choice(vocabulary) + rng.choice(vocabulary).capitalize())
        sentence = " ".join(words).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)


def random_korean(target_bytes: int = TARGET_BYTES) -> str:
    """Words of two to five random Hangul syllables: almost every word unique."""
    rng = random.Random(2)
    out: list[str] = []
    size = 0
    while size < target_bytes:
        word = "".join(chr(rng.randint(0xAC00, 0xD7A3)) for _ in range(rng.randint(2, 5)))
        out.append(word + (". " if rng.random() < 0.1 else " "))
        size += 3 * len(word) + 1
    return "".join(out)


def best_rate(run: Callable[[], object], size_bytes: int, repeat: int = 3) -> float:
    """Return the best throughput of ``run`` in MB/s over ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return size_bytes / best / 1e6


def main() -> int:
    corpora = {
        "ascii": corpus(_ASCII),
        "mixed": corpus(_MIXED),
        "manual.md": corpus((FIXTURES / "manual.md").read_text(encoding="utf-8")),
        "app.log": corpus((FIXTURES / "app.log").read_text(encoding="utf-8")),
        "sample.py": corpus((FIXTURES / "sample.py.txt").read_text(encoding="utf-8")),
        "korean": corpus((FIXTURES / "korean.txt").read_text(encoding="utf-8")),
        "chinese": corpus((FIXTURES / "chinese.txt").read_text(encoding="utf-8")),
        "rand-en": random_english(),
        "rand-ko": random_korean(),
    }
    summary_input = {name: text[:200_000] for name, text in corpora.items()}
    jobs: list[tuple[str, Callable[[str], object], dict[str, str]]] = [
        ("estimate", MODEL.estimate, corpora),
        ("terms", terms, corpora),
        (
            "chunk 800/80",
            lambda text: chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=MODEL),
            corpora,
        ),
        (
            "summarize 500",
            lambda text: summarize_extractive(text, target_tokens=500, model=MODEL),
            summary_input,
        ),
    ]
    print(f"{'function':<14} {'corpus':<10} {'MB':>6} {'MB/s':>8}")
    for label, function, inputs in jobs:
        for name, text in inputs.items():
            size = len(text.encode())
            rate = best_rate(lambda: function(text), size)
            print(f"{label:<14} {name:<10} {size / 1e6:6.2f} {rate:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
