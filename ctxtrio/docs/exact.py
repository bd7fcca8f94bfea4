"""Chunk sizes by exact counts at ingest, when the server can count (``counter.kind == "exact"``).

Chunking cuts by the estimate (:class:`~ctxtrio.text.tokens.TokenModel`, in a worker
process or thread, so it cannot wait on the server). Exact counts come in around it,
one tokenize round trip at a time, each cached by the counter per (model, text):

1. **Decide**: before chunking, :func:`exact_model` counts a sample of the document
   (all of it up to :data:`SAMPLE_CHARS`, else evenly spaced slices joined, one text);
   when the estimate under-counts the sample, the rates are scaled up by the shortfall,
   so the chunker cuts chunks whose exact size is within ``chunk_tokens``.
2. **Verify and correct**: :func:`exact_batch` counts each batch's source span (the
   chunks without their overlaps: one text per batch) and, when the estimate
   under-counts it, raises every chunk's recorded ``tokens`` by that batch's ratio, so
   no batch's recorded sizes fall short of its exact count. A batch still over by
   more than :data:`_WARN_RATIO` after step 1 is logged (the sample missed its kind of text).

Without exact counting neither runs: the no-LLM path costs nothing. A count that
fails falls back to the estimate inside the counter (ratio 1: nothing changes).
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import trio

from ..text.tokens import TokenModel
from .chunks import Batch, chunk_record, encoded_body

if TYPE_CHECKING:
    from .._live import TokenCounting

__all__ = ["SAMPLE_CHARS", "exact_batch", "exact_model"]

logger = logging.getLogger(__name__)

#: Documents up to this long are counted whole before chunking; longer ones by slices.
SAMPLE_CHARS: Final = 24_000
_SLICES: Final = 6
_WARN_RATIO: Final = 1.05


def _sample(text: str) -> str:
    if len(text) <= SAMPLE_CHARS:
        return text
    size = SAMPLE_CHARS // _SLICES
    step = (len(text) - size) // (_SLICES - 1)
    return "\n".join(text[n * step : n * step + size] for n in range(_SLICES))


async def exact_model(model: TokenModel, text: str, counter: TokenCounting) -> TokenModel:
    """``model``, scaled up when it under-counts a sample of ``text`` in exact tokens."""
    sample = _sample(text)
    estimate = model.estimate(sample)
    exact = await counter.count(sample)
    if estimate <= 0 or exact <= estimate:
        return model
    ratio = exact / estimate
    rates = {cls: rate * ratio for cls, rate in model.rates.items()}
    return TokenModel(rates, f"{model.source}, x{ratio:.3f} to this document's exact count")


async def exact_batch(batch: Batch, text: str, model: TokenModel, counter: TokenCounting) -> Batch:
    """``batch`` with chunk sizes raised to its span's exact count when the estimate fell short."""
    span = text[batch.chunks[0].start : batch.chunks[-1].end]
    estimate = await trio.to_thread.run_sync(model.estimate, span)  # up to megabytes: off the loop
    exact = await counter.count(span)
    if estimate <= 0 or exact <= estimate:
        return batch
    ratio = exact / estimate
    if ratio > _WARN_RATIO:
        logger.info("chunks %d-%d: %.3f x their estimate in exact tokens; sizes raised",
                    batch.chunks[0].index, batch.chunks[-1].index, ratio)  # fmt: skip
    return await trio.to_thread.run_sync(_raised, batch, ratio)


def _raised(batch: Batch, ratio: float) -> Batch:
    """``batch`` with every chunk's size times ``ratio``, its records re-encoded (as the
    chunking worker does, so the writer keeps its pre-encoded fast path)."""
    chunks = [replace(chunk, tokens=math.ceil(chunk.tokens * ratio)) for chunk in batch.chunks]
    records = [chunk_record(chunk, encoded=encoded_body(chunk) or b"") for chunk in chunks]
    return replace(batch, chunks=chunks, records=records)
