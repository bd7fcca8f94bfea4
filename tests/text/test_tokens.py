"""Tests for ctxtrio.text.tokens: class counts, estimates, the model reference."""

from __future__ import annotations

import random

import pytest

from ctxtrio.text.tokens import ScriptClass, TokenModel, TokenModelRef, class_counts

P, C, H, G, K, O = (  # noqa: E741 - O is the "other letters" class, like the five beside it
    ScriptClass.PROSE,
    ScriptClass.CODE,
    ScriptClass.HAN,
    ScriptClass.HANGUL,
    ScriptClass.KANA,
    ScriptClass.OTHER,
)


def nonzero(text: str) -> dict[ScriptClass, int]:
    return {cls: n for cls, n in class_counts(text).items() if n}


def test_every_class_present_in_counts() -> None:
    """class_counts names every class, zero when absent."""
    assert class_counts("") == dict.fromkeys(ScriptClass, 0)


def test_prose_punctuation_and_whitespace_are_prose() -> None:
    """ASCII letters, digits, whitespace and . , ; : ' \" ! ? ( ) - count as PROSE."""
    text = "Hello, World 42! (yes) - 'a' \"b\"; c: d?\t\n\r\x0b\x0c."
    assert nonzero(text) == {P: len(text)}


def test_code_symbols_are_code() -> None:
    """Every ASCII code symbol counts as CODE, and nothing else does."""
    symbols = "{}[]<>=+*/\\|&^%$#@~`_"
    assert nonzero(symbols) == {C: len(symbols)}
    assert nonzero("x = a[0]") == {P: 5, C: 3}


def test_ascii_control_characters_are_other() -> None:
    """ASCII controls other than whitespace (NUL, ESC, DEL) count as OTHER."""
    assert nonzero("a\x00\x1b\x7f") == {P: 1, O: 3}


def test_cjk_classes_are_separate() -> None:
    """Han, Hangul and Kana are counted apart; CJK punctuation is OTHER."""
    assert nonzero("数据库连接失败，请重试。") == {H: 10, O: 2}
    assert nonzero("회의에서 결정했다") == {G: 8, P: 1}
    assert nonzero("カタカナとひらがな") == {K: 9}


def test_cjk_edge_blocks() -> None:
    """Extension, compatibility and astral ideographs are Han; halfwidth forms and jamo sort right."""
    assert nonzero("\u3400\u4dbf\uf900\U00020000\U0003134a々〇") == {H: 7}
    assert nonzero("\u4dc0") == {H: 1}  # Yijing hexagram: shares a block with extension A
    assert nonzero("ｱﾟ\uff61") == {K: 2, O: 1}  # halfwidth Katakana; halfwidth full stop
    assert nonzero("\u1100\u3131\ua960\uffa1\ud7b0") == {G: 5}
    assert nonzero("\u31f0\u3100") == {K: 1, O: 1}  # Katakana extension; Bopomofo


def test_other_scripts_and_emoji_are_other() -> None:
    """Accented Latin, Cyrillic, Greek, Arabic and emoji count as OTHER, one per code point."""
    assert nonzero("é Ж λ ع 🎉") == {O: 5, P: 4}


def test_counts_sum_to_length_on_random_text() -> None:
    """Counts sum to len(text) for random text, lone surrogates included."""
    rng = random.Random(7)
    pools = [(0, 0x7F), (0x80, 0x2FFF), (0x3000, 0x33FF), (0x4D00, 0x4E10), (0xA900, 0xAD00),
             (0xD700, 0xDFFF), (0xF800, 0xFFFF), (0x10000, 0x3FFFF)]
    for _ in range(200):
        chars = []
        for _ in range(rng.randrange(0, 60)):
            low, high = rng.choice(pools)
            chars.append(chr(rng.randint(low, high)))
        text = "".join(chars)
        assert sum(class_counts(text).values()) == len(text)


def test_counts_match_a_reference_classifier() -> None:
    """The byte-table counts agree with a per-character reference over whole blocks."""
    def reference(ch: str) -> ScriptClass:
        cp = ord(ch)
        if cp < 0x80:
            if ch in "{}[]<>=+*/\\|&^%$#@~`_":
                return C
            return P if ch.isalnum() or ch in " \t\n\r\x0b\x0c.,;:'\"!?()-" else O
        if (0x3400 <= cp <= 0x4DFF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF
                or 0x20000 <= cp <= 0x3FFFF or cp in (0x3005, 0x3006, 0x3007)
                or 0x3021 <= cp <= 0x3029 or 0x3038 <= cp <= 0x303B):
            return H
        if (0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F or 0xA960 <= cp <= 0xA97F
                or 0xAC00 <= cp <= 0xD7FF or 0xFFA0 <= cp <= 0xFFDC):
            return G
        if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF65 <= cp <= 0xFF9F:
            return K
        return O

    for first in (0x0, 0x1000, 0x3000, 0x4D00, 0xA900, 0xD600, 0xF800, 0xFF00, 0x20000, 0x1F300):
        for cp in range(first, first + 0x200):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            ch = chr(cp)
            assert nonzero(ch) == {reference(ch): 1}, hex(cp)


def test_cold_model_rates_and_source() -> None:
    """The cold model rates PROSE, CODE, OTHER at the ratio and CJK classes at 1.0."""
    model = TokenModel.cold(0.3)
    assert dict(model.rates) == {P: 0.3, C: 0.3, O: 0.3, H: 1.0, G: 1.0, K: 1.0}
    assert model.source == "cold start: 0.3 tokens/char, 1.0 for CJK/Hangul/Kana"
    assert TokenModel.cold().rates[P] == 0.27


def test_estimate_rounds_up_and_never_zero_for_text() -> None:
    """Estimates round up; "" is 0 and any non-empty text is at least 1."""
    model = TokenModel.cold()
    assert model.estimate("") == 0
    assert model.estimate("a") == 1
    assert model.estimate("x" * 10) == 3  # 2.7 -> 3
    assert model.estimate("x" * 100) == 27  # exact product is not bumped by float error
    assert model.estimate("数据库") == 3
    zero = TokenModel(dict.fromkeys(ScriptClass, 0.0), "zero")
    assert zero.estimate("abc") == 1


def test_estimate_sums_per_class_rates() -> None:
    """A mixed text's estimate is the per-class sum of count times rate, rounded up."""
    rates = {P: 0.25, C: 0.5, H: 1.5, G: 1.25, K: 1.0, O: 0.75}
    model = TokenModel(rates, "calibrated test")
    # 4 prose, 2 code, 2 han, 1 hangul, 1 kana, 1 other
    assert model.estimate("ab c{}数据한カé") == 8  # 1 + 1 + 3 + 1.25 + 1 + 0.75


def test_estimate_is_additive_up_to_rounding() -> None:
    """Estimating a concatenation never exceeds the sum of the parts' estimates."""
    rng = random.Random(3)
    model = TokenModel.cold()
    alphabet = "abc {}=数据회의カé\n"
    for _ in range(200):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        assert model.estimate(a + b) <= model.estimate(a) + model.estimate(b)


def test_model_rejects_missing_or_bad_rates() -> None:
    """A model must rate every class with a finite, non-negative rate."""
    with pytest.raises(ValueError, match="kana"):
        TokenModel({cls: 1.0 for cls in ScriptClass if cls is not K}, "partial")
    with pytest.raises(ValueError):
        TokenModel(dict.fromkeys(ScriptClass, float("nan")), "nan")
    with pytest.raises(ValueError):
        TokenModel(dict.fromkeys(ScriptClass, -0.1), "negative")


def test_model_rates_are_a_readonly_copy() -> None:
    """Mutating the dict a model was built from does not change the model."""
    rates = dict.fromkeys(ScriptClass, 0.5)
    model = TokenModel(rates, "copy")
    rates[P] = 9.0
    assert model.rates[P] == 0.5
    with pytest.raises(TypeError):
        model.rates[P] = 1.0  # type: ignore[index]  # the point: the mapping is read-only


def test_models_compare_by_rates_and_source() -> None:
    """Two models with the same rates and source are equal."""
    assert TokenModel.cold() == TokenModel.cold()
    assert TokenModel.cold() != TokenModel.cold(0.3)


def test_ref_holds_a_replaceable_model() -> None:
    """TokenModelRef.current can be replaced by a calibrated model."""
    ref = TokenModelRef(TokenModel.cold())
    calibrated = TokenModel(dict.fromkeys(ScriptClass, 0.4), "calibrated")
    ref.current = calibrated
    assert ref.current is calibrated


def test_fitting_prefix_is_the_longest_within_budget() -> None:
    """fitting_prefix returns the longest prefix whose estimate fits, and the whole text when it fits."""
    model = TokenModel.cold(0.27)
    text = "word " * 200
    length = model.fitting_prefix(text, 50)
    assert model.estimate(text[:length]) <= 50 < model.estimate(text[: length + 1])
    assert model.fitting_prefix("short", 50) == len("short")
