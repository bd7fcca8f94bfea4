"""Imported first by every stress script: this checkout's ``ctxtrio`` and ``testkit``, the tree the script is in.

``python stress/x.py`` puts ``stress/`` first on ``sys.path``, and ``import ctxtrio`` then fell through to the
editable install: the checkout that ran ``pip install -e`` (``/work/main``), so a script run from another
worktree measured that checkout's code unless given ``PYTHONPATH=.``. Each script had its own insert, or none
(readme_examples, recall_worst, bench_text, token_truth, vector_scan, same_chunks ...). An explicit
``PYTHONPATH`` still comes first: the tree goes after its entries, so a script that runs itself over
another tree (``same_chunks --against REV``, ``call_cost``: ``PYTHONPATH=<exported tree>``) imports that
tree's ``ctxtrio``. Inserted right after the script's folder, the tree came before them, and such runs
compared this tree with itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    given = os.environ.get("PYTHONPATH", "") if not sys.flags.ignore_environment else ""
    entries = {os.path.abspath(entry) for entry in given.split(os.pathsep) if entry}
    # after the script's folder (sys.path[0]) and after PYTHONPATH's entries, wherever they are
    at = max((i + 1 for i, entry in enumerate(sys.path) if os.path.abspath(entry) in entries), default=1)
    sys.path.insert(at, str(ROOT))
