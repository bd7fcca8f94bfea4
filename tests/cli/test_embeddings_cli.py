"""doctor's embeddings line: the endpoint answers or not, the model's dimension, how much is embedded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from testkit.fake_openai import closed_port_url

from .runner import cli

if TYPE_CHECKING:
    from pathlib import Path


async def test_doctor_says_whether_embeddings_work(tmp_path: Path) -> None:
    """Off without --embed-model; with it, the dimension and 0 of N embedded; a dead endpoint fails the check."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text("# T\n\nSome words here.\n")
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    off = (await cli(data, "doctor", "--json")).json()
    assert (
        off["ok"] and "off (no --embed-model)" in [c for c in off["checks"] if c["area"] == "embeddings"][0]["detail"]
    )
    fake = FakeEmbeddings(dimension=24)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        on = await cli(data, "doctor", "--embed-model", fake.model, "--embed-base-url", url)
        nursery.cancel_scope.cancel()
    assert on.code == 0, on.out
    assert f"ok  embeddings: fake-embed at {url} works, 24 dimensions; 0 of 1 chunks embedded" in on.out
    dead = await cli(data, "doctor", "--json", "--embed-model", "m", "--embed-base-url", closed_port_url())
    facts = dead.json()
    assert dead.code == 1 and facts["embeddings"]["reachable"] is False and facts["embeddings"]["chunks"] == 1
