"""Imported first by every stress script: this checkout's ``ctxtrio`` and ``testkit``, the tree the script is in.

``python stress/x.py`` puts ``stress/`` first on ``sys.path``, and ``import ctxtrio`` then fell through to the
editable install: the checkout that ran ``pip install -e`` (``/work/main``), so a script run from another
worktree measured that checkout's code unless given ``PYTHONPATH=.``. Each script had its own insert, or none
(readme_examples, recall_worst, bench_text, token_truth, vector_scan, same_chunks ...). An explicit
``PYTHONPATH`` still comes first: it is on ``sys.path`` before this runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))
