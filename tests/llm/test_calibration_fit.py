"""Calibration's fit of rates (pure): counts refused, rates and overhead recovered, published rates, the samples."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import LLMResponseError
from ctxtrio.llm._fit import Measurement, fit_rates, publishable_rates
from ctxtrio.llm._samples import SAMPLES
from ctxtrio.text.tokens import CHARACTER_CLASSES, ScriptClass, TokenModel, class_counts
from testkit.fake_openai import DENSE_RATES, true_tokens

if TYPE_CHECKING:
    from collections.abc import Callable


def _measured(tokens: Callable[[str], int]) -> list[Measurement]:
    return [Measurement(class_counts(text), tokens(text)) for text in SAMPLES]


def test_fit_rejects_counts_that_do_not_grow() -> None:
    """Samples that all count the same are refused."""
    with pytest.raises(LLMResponseError, match="every sample counted 60"):
        fit_rates(_measured(lambda text: 60))


def test_fit_rejects_implausible_rates() -> None:
    """A rate above 4 tokens/char is refused."""
    with pytest.raises(LLMResponseError, match="implausible"):
        fit_rates(_measured(lambda text: 10 + 9 * sum(ch.isdigit() for ch in text) + len(text) // 10))


def test_fit_recovers_rates_and_overhead() -> None:
    """An exact linear count (overhead 11) is recovered: rates within 2%, overhead within 1 token."""
    rates, overhead = fit_rates(_measured(lambda text: 11 + true_tokens(text, DENSE_RATES)))
    for cls in CHARACTER_CLASSES:
        assert rates[cls] == pytest.approx(DENSE_RATES[cls.value], rel=0.02, abs=0.005), cls
    assert overhead == pytest.approx(11, abs=1.0)


def test_publishable_rates_undercount_no_sample() -> None:
    """Published rates count every calibration sample at least as high as the server did, plus the margin."""
    samples = _measured(lambda text: 11 + true_tokens(text) + len(text) % 7)
    rates, overhead = fit_rates(samples)
    published = publishable_rates(samples, rates, overhead, margin=0.05)
    model = TokenModel(published, "test")
    for text, sample in zip(SAMPLES, samples, strict=True):
        assert model.estimate(text) >= (sample.tokens - overhead) * 1.05 - 1


def test_samples_share_no_prefix_and_cover_every_feature() -> None:
    """No two samples start alike, and every feature occurs in at least two samples."""
    starts = [text[:8] for text in SAMPLES]
    assert len(set(starts)) == len(starts)
    for cls in ScriptClass:
        assert sum(1 for text in SAMPLES if class_counts(text)[cls]) >= 2, cls
