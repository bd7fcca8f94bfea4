"""``ctxtrio ingest`` runs with what existed before it frozen and a larger young generation, then
puts the collector back as it was (:mod:`ctxtrio.cli.collector`)."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

import ctxtrio.cli.ingest as cli_ingest
from ctxtrio.cli.collector import BULK_GEN0

from .test_ingest_reads import _ingest

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def test_ingest_freezes_what_existed_and_puts_the_collector_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in "abc":
        (folder / f"{name}.md").write_text(f"# {name}\n\nwords of {name} and a fooBar identifier\n")
    before = (gc.get_threshold(), gc.get_freeze_count())
    existing = [object()]  # made before the command: frozen while it runs, not visited by its collections
    during: list[tuple[tuple[int, int, int], int, bool]] = []
    real = cli_ingest.precheck

    def precheck(batch: list[tuple[Path, int]], roots: tuple[Path, ...], limit: int) -> list[cli_ingest.Checked]:
        young = any(found is existing for generation in range(3) for found in gc.get_objects(generation))
        during.append((gc.get_threshold(), gc.get_freeze_count(), young))
        return real(batch, roots, limit)

    monkeypatch.setattr(cli_ingest, "precheck", precheck)
    assert await _ingest(tmp_path, folder) == 0
    assert during, "the precheck ran"
    for thresholds, frozen, collectable in during:
        assert thresholds == (max(BULK_GEN0, before[0][0]), *before[0][1:])
        assert frozen > before[1]
        assert not collectable, "an object made before the ingest was still in a generation the collector walks"
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    assert any(found is existing for found in gc.get_objects(2)), "unfrozen back into the oldest generation"
