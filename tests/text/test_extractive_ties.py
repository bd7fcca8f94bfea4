"""Extractive summaries do not depend on the process's hash seed: two sentences that score alike tie, and the
earlier is chosen (text/extractive._rank), in every process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Two sentences of the same shape: each holds nine words of its own, the nth of them in n more sentences of the
#: text, as its twin in the other is, so the two score alike (the same inverse sentence frequencies). The budget
#: holds one of them; the summary says which.
_PROBE = """
from ctxtrio.text.extractive import summarize_extractive
from ctxtrio.text.tokens import TokenModel

words = ["amber", "basalt", "cobalt", "dolomite", "emerald", "feldspar", "garnet", "hematite", "jasper"]
opening = ["Later they were noted in the report.", "They were noted later in a report.", "In the report they were noted later."]
northern = "Northern " + " ".join(f"{word}x" for word in words) + " samples."
southern = "Southern " + " ".join(f"{word}y" for word in words) + " samples."
later = [f"Later {word}x and {word}y were noted in report {k}{n}." for k, word in enumerate(words) for n in range(k)]
model = TokenModel.flat()
summary = summarize_extractive(" ".join([*opening, northern, southern, *later]), target_tokens=model.estimate(northern) + 2, model=model)
print("Northern" in summary, "Southern" in summary)
"""


def _summary_under(seed: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_sentences_that_score_alike_tie_whatever_the_hash_seed() -> None:
    """Under eight hash seeds the summary holds the earlier of two sentences that score alike. Before, each
    sentence's score was a float sum over its set of words, in the set's order: the seed decided the last bit, and
    the later sentence was chosen under seeds 5 and 7 (2 to 3 of 1,672 summaries of four manuals changed from one
    process to the next)."""
    assert [_summary_under(seed) for seed in range(8)] == ["True False"] * 8
