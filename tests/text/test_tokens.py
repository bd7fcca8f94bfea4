"""Tests for ctxtrio.text.tokens: class counts, estimates, the model reference."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ctxtrio.text.tokens import CHARACTER_CLASSES, COLD_RATES, ScriptClass, TokenModel, TokenModelRef, class_counts

D, S, L, P, H, G, K, O, Y = CHARACTER_CLASSES  # noqa: E741 - O is "other letters", like the classes beside it
PR, SR, WB, IN = ScriptClass.PUNCT_RUN, ScriptClass.SPACE_RUN, ScriptClass.WORD_BREAK, ScriptClass.INDENT


def nonzero(text: str) -> dict[ScriptClass, int]:
    return {cls: n for cls, n in class_counts(text).items() if n}


def chars(text: str) -> dict[ScriptClass, int]:
    """Only the character classes (no boundaries)."""
    return {cls: n for cls, n in class_counts(text).items() if n and cls in CHARACTER_CLASSES}


def test_every_class_present_in_counts() -> None:
    """class_counts names every class, zero when absent."""
    assert class_counts("") == dict.fromkeys(ScriptClass, 0)


def test_ascii_classes() -> None:
    """Digits, whitespace, letters and punctuation are counted apart; controls are SYMBOL."""
    assert chars("Hello, World 42!\t\n") == {L: 10, P: 2, S: 4, D: 2}
    assert chars("{}[]<>=+*/\\|&^%$#@~`_.,;:'\"!?()-") == {P: 32}
    assert chars("a\x00\x1b\x7f") == {L: 1, Y: 3}


def test_boundaries() -> None:
    """Punctuation and whitespace runs count once each; breaks are case and letter/digit switches."""
    counts = class_counts("ab, cd;;  getUser a1B2")
    assert (counts[PR], counts[SR], counts[WB]) == (2, 3, 1 + 3)  # tU, a1 1B B2
    assert class_counts("==>")[PR] == 1
    assert class_counts("abc")[WB] == 0 and class_counts("a,1")[WB] == 0


def test_indentation_is_a_boundary_of_its_own() -> None:
    """A line feed followed by other whitespace counts one indent; line feeds stay whitespace."""
    counts = class_counts('{\n  "a": 1,\n\t"b": [\n\n    2]\n}\n \n')
    assert counts[IN] == 4  # "\n  ", "\n\t", the second "\n" of "\n\n    ", "\n " at the end
    assert counts[S] == 17 and counts[SR] == 7  # runs: "\n  ", " ", "\n\t", " ", "\n\n    ", "\n", "\n \n"
    assert class_counts("one\ntwo\n\nthree")[IN] == 0
    assert class_counts("\r\n  x")[IN] == 1 and class_counts(" \n")[IN] == 0


def test_cjk_classes_are_separate() -> None:
    """Han, Hangul and Kana are counted apart; CJK punctuation is SYMBOL."""
    assert chars("数据库连接失败，请重试。") == {H: 10, Y: 2}
    assert chars("회의에서 결정했다") == {G: 8, S: 1}
    assert chars("カタカナとひらがな") == {K: 9}


def test_cjk_edge_blocks() -> None:
    """Extension, compatibility and astral ideographs are Han; halfwidth forms and jamo sort right."""
    assert chars("\u3400\u4dbf\uf900\U00020000\U0003134a々〇") == {H: 7}
    assert chars("\u4dc0") == {H: 1}  # Yijing hexagram: shares a block with extension A
    assert chars("ｱﾟ\uff61") == {K: 2, Y: 1}  # halfwidth Katakana; halfwidth full stop
    assert chars("\u1100\u3131\ua960\uffa1\ud7b0") == {G: 5}
    assert chars("\u31f0\u3100") == {K: 1, Y: 1}  # Katakana extension; Bopomofo


def test_other_letters_and_emoji() -> None:
    """Accented Latin, Cyrillic, Greek, Arabic are other letters; emoji and × are SYMBOL."""
    assert chars("é Ж λ ع ệ 🎉×") == {O: 5, S: 5, Y: 2}


def test_counts_sum_to_length_on_random_text() -> None:
    """Character counts sum to len(text) for random text, lone surrogates included."""
    rng = random.Random(7)
    pools = [
        (0, 0x7F),
        (0x80, 0x2FFF),
        (0x3000, 0x33FF),
        (0x4D00, 0x4E10),
        (0xA900, 0xAD00),
        (0xD700, 0xDFFF),
        (0xF800, 0xFFFF),
        (0x10000, 0x3FFFF),
    ]
    for _ in range(200):
        picked = []
        for _ in range(rng.randrange(0, 60)):
            low, high = rng.choice(pools)
            picked.append(chr(rng.randint(low, high)))
        text = "".join(picked)
        assert sum(n for cls, n in class_counts(text).items() if cls in CHARACTER_CLASSES) == len(text)


def reference(ch: str) -> ScriptClass:
    """The class of one character, written out range by range (what the byte tables must agree with)."""
    cp = ord(ch)
    if cp < 0x80:
        if ch.isdigit():
            return D
        if ch in " \t\n\r\x0b\x0c":
            return S
        if ch.isalpha():
            return L
        return P if ch.isprintable() else Y
    if (
        0x3400 <= cp <= 0x4DFF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
        or cp in (0x3005, 0x3006, 0x3007)
        or 0x3021 <= cp <= 0x3029
        or 0x3038 <= cp <= 0x303B
    ):
        return H
    if (
        0x1100 <= cp <= 0x11FF
        or 0x3130 <= cp <= 0x318F
        or 0xA960 <= cp <= 0xA97F
        or 0xAC00 <= cp <= 0xD7FF
        or 0xFFA0 <= cp <= 0xFFDC
    ):
        return G
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF65 <= cp <= 0xFF9F:
        return K
    if (0xC0 <= cp <= 0xFF and cp not in (0xD7, 0xF7)) or 0x100 <= cp <= 0x10FF or 0x1200 <= cp <= 0x1FFF:
        return O
    return Y


def test_counts_match_a_reference_classifier() -> None:
    """The byte-table counts agree with a per-character reference over whole blocks."""

    for first in (0x0, 0x1000, 0x3000, 0x4D00, 0xA900, 0xD600, 0xF800, 0xFF00, 0x20000, 0x1F300):
        for cp in range(first, first + 0x200):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            ch = chr(cp)
            assert chars(ch) == {reference(ch): 1}, hex(cp)


def test_cold_model_rates_and_source() -> None:
    """The cold model uses COLD_RATES; a ratio scales only the ASCII rates."""
    assert dict(TokenModel.cold().rates) == dict(COLD_RATES)
    scaled = TokenModel.cold(0.54)
    assert scaled.rates[L] == pytest.approx(2 * COLD_RATES[L])
    assert scaled.rates[H] == COLD_RATES[H] and scaled.rates[D] == 1.0
    assert TokenModel.cold().source.startswith("built-in rates, ASCII scale")


def test_estimate_rounds_up_and_never_zero_for_text() -> None:
    """Estimates round up; "" is 0 and any non-empty text is at least 1."""
    model = TokenModel({**dict.fromkeys(ScriptClass, 0.0), L: 0.27}, "letters")
    assert model.estimate("") == 0
    assert model.estimate("a") == 1
    assert model.estimate("x" * 10) == 3  # 2.7 -> 3
    assert model.estimate("x" * 100) == 27  # exact product is not bumped by float error
    zero = TokenModel(dict.fromkeys(ScriptClass, 0.0), "zero")
    assert zero.estimate("abc") == 1


def test_estimate_sums_per_class_rates() -> None:
    """A mixed text's estimate is the sum of count times rate over classes, rounded up."""
    rates = {**dict.fromkeys(ScriptClass, 0.0), L: 0.25, P: 0.5, H: 1.5, G: 1.25, K: 1.0, O: 0.75, PR: 1.0}
    model = TokenModel(rates, "calibrated test")
    # 3 letters, 2 punct (1 run), 2 han, 1 hangul, 1 kana, 1 other letter
    assert model.estimate("ab c{}数据한カé") == 9  # 0.75 + 1 + 1 + 3 + 1.25 + 1 + 0.75 = 8.75


def _gemma_table() -> Path:
    """shared/token-truth's Gemma 3 table beside the repository (a worktree under wt/ finds it one level up)."""
    root = Path(__file__).parents[2]
    paths = [
        root / ".." / "shared" / "token-truth" / "gemma3-270m.jsonl",
        root / ".." / ".." / "shared" / "token-truth" / "gemma3-270m.jsonl",
    ]
    return next((path for path in paths if path.exists()), paths[0])


def test_cold_estimates_lean_high_on_token_truth() -> None:
    """The cold model never under-counts a text of the token-truth file by more than 5%."""
    path = _gemma_table()
    if not path.exists():
        pytest.skip(f"{path} is not here")
    model = TokenModel.cold()
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert model.estimate(row["text"]) >= 0.95 * row["tokens"], row["class"]


def test_cold_estimates_never_under_count_a_text_of_any_token_truth_table() -> None:
    """Every text of the token-truth tables, counted by Gemma 3, SmolLM2-135M and nine more
    families (stress/token_truth.py's must-show), is estimated at its true count or more."""
    tables = Path(__file__).parents[2] / "stress" / "token_truth"
    texts = [json.loads(line) for line in (tables / "smollm2-135m.jsonl").read_text(encoding="utf-8").splitlines()]
    counted = {"smollm2-135m": [row["tokens"] for row in texts]}
    for line in (tables / "families.jsonl").read_text(encoding="utf-8").splitlines():
        family = json.loads(line)
        counted[family["family"]] = family["tokens"]
    gemma = _gemma_table()
    if gemma.exists():
        counted["gemma3-270m"] = [json.loads(line)["tokens"] for line in gemma.read_text(encoding="utf-8").splitlines()]
    model = TokenModel.cold()
    estimates = [model.estimate(row["text"]) for row in texts]
    assert len(counted) >= 10 and len(texts) == 106
    for family, tokens in counted.items():
        under = [(row["class"], e, t) for row, e, t in zip(texts, estimates, tokens, strict=True) if e < t]
        assert not under, (family, under)


def test_cold_estimates_cover_doc_search_answers_for_eleven_tokenizers() -> None:
    """The doc_search answers over Python's reST docs the cold estimate covers most tightly (of 495:
    headers, cut marks, indented reST) are estimated at or above the count of each of 11 tokenizers."""
    path = Path(__file__).parent / "fixtures" / "python_doc_answers.jsonl"
    answers = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    model = TokenModel.cold()
    assert len(answers) == 8
    for answer in answers:
        assert len(answer["counts"]) == 11
        estimate = model.estimate(answer["text"])
        assert estimate <= answer["budget"], answer["query"]
        for family, tokens in answer["counts"].items():
            assert estimate >= tokens, (answer["query"], family, estimate, tokens)


#: Chinese without fullwidth punctuation and SmolLM2-135M's counts of it (its GGUF's
#: vocabulary, ``stress/count_tokens.py``): 1.91 and 1.98 tokens per Han character.
BARE_CHINESE = {
    "第一次会议讨论了城市交通的改进方案代表们认为应当优先发展公共交通并在老城区限制私家车通行" * 5: 420,
    "今天上午国务院召开常务会议研究部署进一步扩大内需促进经济稳定增长的政策措施会议指出当前经济运行总体平稳" * 3: 303,
}


def test_chinese_without_fullwidth_punctuation_is_not_under_counted() -> None:
    """The cold Han rate alone covers SmolLM2 (every table text had fullwidth punctuation to lean on)."""
    for text, smollm2 in BARE_CHINESE.items():
        assert TokenModel.cold().estimate(text) >= smollm2


def test_estimate_is_additive_up_to_rounding() -> None:
    """Estimating parts joined by a line break never exceeds the sum of the parts' estimates (and the break's)."""
    rng = random.Random(3)
    model = TokenModel.cold()
    alphabet = "abC 1{}=数据회의カé\n"
    for _ in range(200):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
        assert model.estimate(a + "\n" + b) <= model.estimate(a) + model.estimate(b) + 1


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
