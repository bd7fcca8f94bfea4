"""Chunk sizes by exact counts at ingest: decided from a sample, checked per batch, no cost without them."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ctxtrio._live import CountKind, EstimateCounter
from ctxtrio.docs.exact import exact_model
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.fake_openai import true_tokens

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


class GemmaCounter(EstimateCounter):
    """Exact counts from the fake tokenizer of testkit.fake_openai (Gemma-like rates: one token per digit)."""

    def __init__(self, ref: TokenModelRef, kind: CountKind = "exact") -> None:
        super().__init__(ref)
        self._kind: CountKind = kind
        self.requests: list[int] = []  # characters of each counted text

    @property
    def kind(self) -> CountKind:
        return self._kind

    async def count(self, text: str) -> int:
        self.requests.append(len(text))
        return true_tokens(text)

    async def counts(self, texts: Sequence[str]) -> list[int]:
        return [await self.count(text) for text in texts]


def log_text(lines: int) -> str:
    """Log lines dense in digits (what a prose-like estimate under-counts)."""
    rng = random.Random(3)
    return "\n".join(
        f"2026-12-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} id={rng.randint(0, 10**9)} "
        f"ms={rng.randint(0, 9999)} bytes={rng.randint(0, 10**7)}"
        for _ in range(lines)
    )


async def test_the_sample_scales_an_under_counting_model_and_leaves_a_high_one() -> None:
    """A model under the exact count of the sample is scaled to it; one over it is kept as it is."""
    text = log_text(2000)
    counter = GemmaCounter(TokenModelRef(TokenModel.cold()))
    low = TokenModel.flat(0.1, 0.1)
    scaled = await exact_model(low, text, counter)
    assert scaled.estimate(text) >= true_tokens(text) * 0.95 and "exact count" in scaled.source
    assert len(counter.requests) == 1 and counter.requests[0] < len(text)  # one round trip, a sample
    high = TokenModel.flat(2.0, 2.0)
    assert await exact_model(high, text, counter) is high


async def test_ingest_sizes_chunks_by_exact_counts(tmp_path: Path) -> None:
    """With exact counts, no chunk's exact size is far over chunk_tokens and no batch's recorded sizes fall short."""
    text = log_text(6000)
    async with opened(tmp_path, chunk_tokens=400, chunk_overlap_tokens=0) as ctx:
        ctx.live.tokens.current = TokenModel.flat(0.1, 0.1)  # a model that under-counts this text 3-4x
        counter = GemmaCounter(ctx.live.tokens)
        ctx.live.counter = counter
        info = (await ctx.documents.ingest(text=text, doc_id="log")).doc
        chunks = (await ctx.documents._repo.load("log"))[1].chunks
    assert info.chunks == len(chunks) > 10
    assert max(true_tokens(chunk.text) for chunk in chunks) <= 400 * 1.1
    assert info.tokens >= true_tokens(text)
    batches = -(-len(chunks) // 256)
    assert len(counter.requests) == 1 + batches  # the sample, then one count per batch


async def test_without_exact_counts_ingest_counts_nothing(tmp_path: Path) -> None:
    """Estimates only (no tokenizer): ingest asks for no count and records the estimate's sizes."""
    text = log_text(3000)
    async with opened(tmp_path, chunk_tokens=400, chunk_overlap_tokens=0) as ctx:
        counter = GemmaCounter(ctx.live.tokens, kind="calibrated")
        ctx.live.counter = counter
        info = (await ctx.documents.ingest(text=text, doc_id="log")).doc
        chunks = (await ctx.documents._repo.load("log"))[1].chunks
    model = TokenModel.cold()
    assert counter.requests == [] and [chunk.tokens for chunk in chunks] == [model.estimate(c.text) for c in chunks]
    assert info.tokens == sum(chunk.tokens for chunk in chunks)
