"""Cold-start token estimates against real token counts: ``shared/token-truth/*.jsonl``.

Run as ``python stress/token_truth.py [FILE]`` from the repository root (FILE defaults
to ``../shared/token-truth/gemma3-270m.jsonl``). For every text the file holds with its
true token count, prints estimate / true per class of text (min, median, max), for all
texts and for the held-out half (every other text of each class, starting with the
second: the cold rates of ``ctxtrio/text/tokens.py`` were fitted on the first half).

Must-show (exit 1 when one fails): estimate / true >= 0.95 for every text, and the
median <= 1.35 for prose and code (prose-en, markdown-api, code-python).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from ctxtrio.text.tokens import TokenModel

_PROSE_AND_CODE = ("prose-en", "markdown-api", "code-python")


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/token-truth/gemma3-270m.jsonl")
    model = TokenModel.cold()
    seen: Counter[str] = Counter()
    every: defaultdict[str, list[float]] = defaultdict(list)
    held_out: defaultdict[str, list[float]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ratio = model.estimate(row["text"]) / row["tokens"]
        every[row["class"]].append(ratio)
        if seen[row["class"]] % 2 == 1:
            held_out[row["class"]].append(ratio)
        seen[row["class"]] += 1
    print(f"{path}: cold-start estimate / true tokens ({model.source})")
    print(f"{'class':<14} {'n':>3} {'min':>6} {'median':>7} {'max':>6}   held-out: {'n':>3} {'min':>6} {'median':>7}")
    for cls in sorted(every):
        a, h = every[cls], held_out[cls] or [float("nan")]
        print(
            f"{cls:<14} {len(a):>3} {min(a):>6.3f} {statistics.median(a):>7.3f} {max(a):>6.3f}"
            f"             {len(held_out[cls]):>3} {min(h):>6.3f} {statistics.median(h):>7.3f}"
        )
    worst = min(min(v) for v in every.values())
    prose_code = [r for cls in _PROSE_AND_CODE for r in every.get(cls, [])]
    median = statistics.median(prose_code) if prose_code else float("nan")
    print(f"worst estimate/true: {worst:.3f} (must be >= 0.95); median prose+code: {median:.3f} (must be <= 1.35)")
    return 0 if worst >= 0.95 and median <= 1.35 else 1


if __name__ == "__main__":
    sys.exit(main())
