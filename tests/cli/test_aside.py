"""doctor's look at the disk and at what the store set aside: lost-and-found and quarantine are warnings."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxtrio.cli import aside
from ctxtrio.store.layout import prepare_data_dir

from .runner import cli

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def test_doctor_warns_about_lost_and_found_and_quarantine_and_says_how_to_restore(tmp_path: Path) -> None:
    """A lost generation and a quarantined line: two warnings naming the files, when, and how to get them back; exit 0."""
    data = prepare_data_dir(tmp_path / "data")
    lost = data.lost_found / "docs" / "doc-1" / "abc.jsonl"
    lost.parent.mkdir(parents=True)
    lost.write_text('{"v":1,"seq":1,"ts":1,"kind":"chunk","id":"c0","index":0,"text":"# Lost\\n"}\n')
    (data.quarantine / "sessions--s.jsonl.120.bad").write_bytes(b"{not json\n")
    plain = await cli(data.root, "doctor")
    assert plain.code == 0, plain.out
    assert (
        "warn lost-and-found: 1 document generation no catalog record commits (a damaged catalog line, see quarantine/) was moved"
        in plain.out
    )
    assert f"jq -r .text {lost}" in plain.out
    assert (
        "warn quarantine: 1 malformed journal line was copied here" in plain.out
        and "sessions--s.jsonl.120.bad" in plain.out
    )
    report = (await cli(data.root, "doctor", "--json")).json()
    assert report["ok"] is True and report["warnings"] == ["lost-and-found", "quarantine"]
    assert report["set_aside"]["lost-and-found"]["files"] == 1


def test_a_nearly_full_disk_is_reported_as_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer free bytes than LOW_SPACE_BYTES: not ok, saying what fails and what still works."""
    data = prepare_data_dir(tmp_path / "data")
    real = os.statvfs(data.root)

    class Full:
        f_bavail = 10
        f_frsize = real.f_frsize
        f_flag = real.f_flag

    monkeypatch.setattr(os, "statvfs", lambda path: Full())
    ok, line = aside.free_space(data)
    assert not ok and "the disk is full" in line and "reads, show, export and sessions still work" in line
