"""``ctxtrio doctor`` against a model server that lists an embedding model beside its language model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from testkit.fake_openai import FakeServer, open_fake_openai

from .test_documents_cli import doctor

if TYPE_CHECKING:
    from pathlib import Path

EMBEDDING = "text-embedding-nomic-embed-text-v1.5"


async def _doctor_lines(data: Path, server: FakeServer, *flags: str) -> list[str]:
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery, server)
        with trio.fail_after(60):
            done = await doctor(data, "--llm-base-url", fake.base_url, *flags)
        nursery.cancel_scope.cancel()
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    return out.splitlines()


async def test_doctor_names_the_language_model_and_the_flag_for_a_listed_embedding_model(tmp_path: Path) -> None:
    """The embedding model listed first is not taken for the model; doctor says which flag would use it."""
    server = FakeServer(model_id="gemma-3-270m-it", listed_first=(EMBEDDING,))
    lines = await _doctor_lines(tmp_path / "data", server)
    [llm] = [line for line in lines if line.startswith("ok  llm:")]
    assert "model gemma-3-270m-it;" in llm, llm
    hints = [line for line in lines if line.startswith("ok  embeddings:") and EMBEDDING in line]
    assert hints == [
        f"ok  embeddings: the model server lists embedding model {EMBEDDING}: --embed-model {EMBEDDING} "
        "(CTX_EMBED_MODEL) adds search by meaning to keyword search (README: Semantic recall)"
    ]


async def test_doctor_gives_no_embedding_hint_when_the_server_lists_none(tmp_path: Path) -> None:
    """A server with language models only: the embeddings line says semantic recall is off, and nothing more."""
    lines = await _doctor_lines(tmp_path / "data", FakeServer(model_id="gemma-3-270m-it"))
    assert not [line for line in lines if "lists embedding model" in line]
