"""``python -m ctxtrio``: the same as the ``ctxtrio`` command."""

from __future__ import annotations

from ._cli import main

raise SystemExit(main())
