"""Tests for ctxtrio.text.spans: span estimates equal the model's estimate of the span's text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ctxtrio.text.spans import SpanEstimates
from ctxtrio.text.tokens import ScriptClass, TokenModel

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


class _SpansOnly(TokenModel):
    """The cold model, whose estimate of a whole text fails: a span estimate must come from the counts."""

    def estimate(self, text: str) -> int:
        raise AssertionError(f"estimated on its own: {text[:40]!r}")


def test_a_span_holding_a_few_non_ascii_characters_is_counted_not_encoded_again() -> None:
    """Spans with a few non-ASCII characters (astral ones too) come from the text classified once, counts exact."""
    text = "// Ünïcode names: π, 数据, ｱ, 한 \U0001f389\n" + _ASCII_LINES * 4 + "\tx := 'é' // ß×÷ \U00020000\n"
    edges = sorted({*range(0, len(text) + 1, 7), *range(28), *range(len(text) - 18, len(text) + 1)})
    for model in (TokenModel.cold(), TokenModel.flat()):
        estimates = SpanEstimates(text, _SpansOnly(model.rates, model.source))
        assert estimates._few is not None, "the text should take the few-non-ASCII path"
        for start in edges:
            for end in edges[edges.index(start) :]:
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


_WIDE_ALPHABET = "数据库〇〆々〡ぁアｱ한글ᄀㄱ\ufe00Àÿ×÷ßéЖαΩ—。，「」\ud800\udc00 \t\n\r\x00\x7fabcXYZ019_-(){};'\"é"


def test_every_span_of_texts_with_many_non_ascii_characters() -> None:
    """Dense CJK, Hangul, Kana, Latin-1 and symbols with ASCII between: every span counted per character."""
    rng = random.Random(23)
    texts = ["数据库 API를 호출: getUser(1) — ｱｲ 〇〆 Àÿ×÷\n\t中文。", "数据", "中\n  \tx1"]
    texts += ["".join(rng.choice(_WIDE_ALPHABET) for _ in range(rng.randrange(1, 40))) for _ in range(60)]
    for text in texts:
        for model in MODELS:
            estimates = SpanEstimates(text, model)
            if len(text.encode("ascii", "ignore")) * 2 < len(text):
                assert estimates._wide is not None, "the text should take the many-non-ASCII path"
            for start in range(len(text) + 1):
                for end in range(start, len(text) + 1):
                    assert estimates.estimate(start, end) == model.estimate(text[start:end]), (text, start, end)


def test_a_dense_text_with_astral_characters_is_counted_per_unit() -> None:
    """Astral characters (two UTF-16 units each) anywhere in a dense text: every span counted, none encoded again."""
    texts = ["数据库\U0001f389中文 ab", "\U00020000\U0001f389数", "ab \U0002a6a5\n数据\U0001f600", "\U0001f389"]
    rng = random.Random(31)
    alphabet = _WIDE_ALPHABET + "\U00020000\U0001f389\U0002b740\U0001d400"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(40)]
    for text in texts:
        for model in MODELS:
            estimates = SpanEstimates(text, _SpansOnly(model.rates, model.source))
            for start in range(len(text) + 1):
                for end in range(start, len(text) + 1):
                    assert estimates.estimate(start, end) == model.estimate(text[start:end]), (text, start, end)


@pytest.mark.parametrize("astral", ["", "\U00020000\U0001f389"])
def test_spans_of_a_long_dense_text_across_count_blocks(astral: str) -> None:
    """Spans starting and ending on both sides of the running count's block edges (every 1,024 units),
    with astral characters (two units each) among the others or not."""
    rng = random.Random(29)
    chars = [rng.choice(_WIDE_ALPHABET + astral) for _ in range(5_000)]
    for edge in range(1_024, 5_000, 1_024):
        chars[edge - 1 : edge + 1] = "é数"  # non-ASCII on both sides of each edge
    text = "".join(chars)
    edges = [edge + offset for edge in range(0, 5_001, 1_024) for offset in (-1, 0, 1) if 0 <= edge + offset <= 5_000]
    spans = [(start, end) for start in edges for end in edges if start <= end]
    pairs = [sorted(rng.sample(range(5_001), 2)) for _ in range(300)]
    spans += [(start, end) for start, end in pairs]
    # Whole rates, a different one for each class: a character counted in the wrong class changes the estimate.
    exact = TokenModel({cls: float(3**index) for index, cls in enumerate(ScriptClass)}, "one power of 3 a class")
    for model in [*MODELS, exact]:
        estimates = SpanEstimates(text, _SpansOnly(model.rates, model.source))
        assert estimates._wide is not None
        for start, end in spans:
            assert estimates.estimate(start, end) == model.estimate(text[start:end]), (start, end)


@pytest.mark.parametrize("non_ascii", ["", "é", "数\U0001f389"])
def test_long_spans_are_counted_from_block_counts_across_block_edges(non_ascii: str) -> None:
    """Spans of 4,096 characters and more (chunking's probes) are counted from counts per 1,024-character
    block plus their ragged ends, and still equal the estimate of their text, ends on either side of an edge."""
    rng = random.Random(37)
    lines = [
        f'{" " * rng.randrange(8)}if (x{n} != 0x{n:x}) {{ return getItem_{n}(a, "k"); }} // {n}\n' for n in range(900)
    ]
    for at in range(0, 900, 150):
        lines[at] = lines[at].replace("//", f"// {non_ascii}")
    text = "".join(lines)
    edges = [edge + offset for edge in range(0, len(text), 1_024) for offset in (-1, 0, 1) if 0 <= edge + offset]
    spans = [(start, end) for start in edges[:12] for end in edges if end - start >= 4_096]
    spans += [(min(pair), max(pair)) for pair in (rng.sample(range(len(text) + 1), 2) for _ in range(200))]
    for model in (TokenModel.cold(), TokenModel.flat()):
        estimates = SpanEstimates(text, _SpansOnly(model.rates, model.source))
        for start, end in spans:
            assert estimates.estimate(start, end) == model.estimate(text[start:end]), (start, end)
        assert estimates._blocks is not None, "a long span should have been counted from the block counts"
