"""Token estimate speed in ms per MB, and (optionally) equality with an older estimator.

Run as ``python stress/bench_tokens.py [--against REV]`` from the repository root
(``PYTHONPATH=.``). For each corpus (the ones of ``bench_text.py``, about 1.5 MB each, plus
the texts of ``../shared/token-truth/gemma3-270m.jsonl`` joined), prints the best of
five runs of ``TokenModel.cold().estimate`` in milliseconds per MB of UTF-8 input.

``--against REV`` also loads ``ctxtrio/text/tokens.py`` as it was at git revision REV
(for example ``main``), times it the same way, and checks that ``class_counts`` agrees
with it (on the classes REV knows; the cold estimate too) on every corpus and on 20,000 short random texts over a mixed alphabet (run
boundaries, case and digit switches, controls, lone surrogates). Exit 1 when any count
differs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import TYPE_CHECKING

from bench_text import _ASCII, _MIXED, FIXTURES, best_rate, corpus, random_english, random_korean

from ctxtrio.text import tokens

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SIZE_BYTES = 1_500_000
_FUZZ_ALPHABET = "aZq09 \t\n,;{}_-.\x00\x07\x7féüß中한カ🎉\u2014Ωж\ud800"


def corpora() -> dict[str, str]:
    """About 1.5 MB of each kind of text."""
    texts = {
        "ascii": corpus(_ASCII, SIZE_BYTES),
        "rand-en": random_english(SIZE_BYTES),
        "app.log": corpus((FIXTURES / "app.log").read_text(encoding="utf-8"), SIZE_BYTES),
        "sample.py": corpus((FIXTURES / "sample.py.txt").read_text(encoding="utf-8"), SIZE_BYTES),
        "mixed": corpus(_MIXED, SIZE_BYTES),
        "chinese": corpus((FIXTURES / "chinese.txt").read_text(encoding="utf-8"), SIZE_BYTES),
        "rand-ko": random_korean(SIZE_BYTES),
    }
    truth = ROOT.parent / "shared" / "token-truth" / "gemma3-270m.jsonl"
    if truth.exists():
        joined = "\n".join(json.loads(line)["text"] for line in truth.read_text(encoding="utf-8").splitlines())
        texts["token-truth"] = corpus(joined, SIZE_BYTES)
    return texts


def ms_per_mb(run: Callable[[str], object], text: str, repeat: int = 5) -> float:
    """Best of ``repeat`` runs of ``run(text)``, in milliseconds per MB of UTF-8."""
    return 1e3 / best_rate(lambda: run(text), len(text.encode("utf-8", "surrogatepass")), repeat=repeat)


def load_revision(revision: str) -> ModuleType:
    """``ctxtrio/text/tokens.py`` at ``revision``, imported as a standalone module."""
    source = subprocess.run(
        ["git", "show", f"{revision}:ctxtrio/text/tokens.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "tokens_then.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tokens_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tokens_then"] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def differences(then: ModuleType, texts: dict[str, str]) -> list[str]:
    """Texts on which ``class_counts`` (the classes ``then`` knows) or the cold estimate differ."""
    rng = random.Random(9)
    fuzz = ["".join(rng.choice(_FUZZ_ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(20_000)]
    out: list[str] = []
    for name, text in [*texts.items(), *((f"fuzz {t!r}", t) for t in fuzz)]:
        old = {cls.value: n for cls, n in then.class_counts(text).items()}
        now = {cls.value: n for cls, n in tokens.class_counts(text).items() if cls.value in old}
        now["estimate"], old["estimate"] = (
            tokens.TokenModel.cold().estimate(text),
            then.TokenModel.cold().estimate(text),
        )
        if now != old:
            out.append(f"{name[:60]}: {old} -> {now}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also time, and compare counts with, tokens.py at REV")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    texts = corpora()
    now = tokens.TokenModel.cold()
    then = load_revision(args.against) if args.against else None
    then_model = then.TokenModel.cold() if then is not None else None
    header = f"{'corpus':<12} {'MB':>5} {'ms/MB':>8}"
    print(header + (f" {args.against + ' ms/MB':>14}" if then is not None else ""))
    for name, text in texts.items():
        row = f"{name:<12} {len(text.encode('utf-8', 'surrogatepass')) / 1e6:5.2f} {ms_per_mb(now.estimate, text):8.1f}"
        if then_model is not None:
            row += f" {ms_per_mb(then_model.estimate, text):14.1f}"
        print(row)
    print(f"load average: {os.getloadavg()}")
    if then is None:
        return 0
    wrong = differences(then, texts)
    print(f"class_counts differ from {args.against} on {len(wrong)} texts")
    for line in wrong[:10]:
        print("  " + line)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
