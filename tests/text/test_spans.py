"""Tests for ctxtrio.text.spans: span estimates equal the model's estimate of the span's text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ctxtrio.text.spans import SpanEstimates
from ctxtrio.text.tokens import TokenModel

FIXTURES = Path(__file__).parent / "fixtures"
MODELS = [TokenModel.cold(), TokenModel.flat(), TokenModel.cold(0.31)]


@pytest.mark.parametrize("name", sorted(path.name for path in FIXTURES.iterdir()))
def test_every_span_estimate_equals_the_estimate_of_its_text(name: str) -> None:
    """On real files (ASCII or not), random spans, line-aligned spans and one-character spans agree."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    rng = random.Random(name)
    lines = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    spans = [tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(300)]
    spans += list(zip(lines[::7], lines[3::7], strict=False))
    spans += [(i, i + 1) for i in range(0, len(text), max(1, len(text) // 200))]
    spans += [(0, len(text)), (5, 5), (len(text), len(text))]
    for model in MODELS:
        estimates = SpanEstimates(text, model)
        for start, end in spans:
            assert estimates.estimate(start, end) == model.estimate(text[start:end]), (model.source, start, end)


_ASCII_LINES = "".join(f"    value_{n} = getItem({n}, 'k')  # {n}\n" for n in range(8))


@pytest.mark.parametrize(
    "text",
    [
        "getUser(a1B2) é\n" + _ASCII_LINES + "x = 'ü'  # 数据\n\n\tdone;;",
        "aé1 zß2Q \U0001f389!x\ud800y\n" + _ASCII_LINES,
        "é" + _ASCII_LINES + "中",
        _ASCII_LINES + "one — dash\n\t",
    ],
)
def test_every_span_of_texts_with_a_few_non_ascii_characters(text: str) -> None:
    """Spans with and without the few non-ASCII characters (counted without them, as the model does)."""
    for model in MODELS:
        estimates = SpanEstimates(text, model)
        assert estimates._non_ascii, "the text should take the few-non-ASCII path"
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                assert estimates.estimate(start, end) == model.estimate(text[start:end]), (start, end)


@pytest.mark.parametrize(
    "text",
    ["getUser(a1B2)\n    x = {'k': [1, 2]}\n\n\tdone;;", "\n\n  \n", "ABCdef123!!", "a", "\x00\x1b\x7f tab\t\r\n end"],
)
def test_every_span_of_short_texts(text: str) -> None:
    """Every span of a few tricky ASCII texts: boundaries at the span's first character included."""
    for model in MODELS:
        estimates = SpanEstimates(text, model)
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                assert estimates.estimate(start, end) == model.estimate(text[start:end]), (start, end)
