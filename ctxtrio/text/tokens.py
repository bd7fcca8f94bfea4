"""Token estimates: characters per class and boundaries between runs, each times a rate.

There is no universal tokenizer, so ctxtrio estimates: it counts the characters of
each character class of :class:`ScriptClass` (digits, whitespace, ASCII letters, ASCII
punctuation/symbols, Han, Hangul, Kana, other letters, emoji/other symbols) and the
boundaries tokenizers split at (a run of punctuation starts, a run of whitespace
starts, a letter meets a digit or a lower-case letter an upper-case one), and
multiplies each count by a rate in tokens. Rates start from a cold-start guess
(:meth:`TokenModel.cold`) and are replaced by measured ones when calibration has
talked to the loaded model (see :class:`TokenModelRef`). Estimates always round up:
undercounting overflows the window this server protects.

The counting itself, without a per-character Python loop, is :mod:`.char_classes`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from .char_classes import _CLASS_ORDER, CHARACTER_CLASSES, ScriptClass, _counts, class_counts

__all__ = [
    "CHARACTER_CLASSES",
    "COLD_RATES",
    "COLD_SOURCE",
    "ScriptClass",
    "TokenModel",
    "TokenModelRef",
    "class_counts",
]


#: ``--token-ratio``'s default: the ASCII rates below are used as they are.
COLD_PROSE_RATIO: Final = 0.27
#: Cold-start rates, tokens per character (per boundary for the *_RUN, WORD_BREAK and
#: INDENT rows): estimates that lean high for every tokenizer family measured.
#:
#: Measured (``python stress/token_truth.py --refit`` derives them again): one asymmetric
#: (under-counts weigh 50x) non-negative least-squares fit over the fit halves (every
#: other text of each class) of the same 106 texts counted by eleven tokenizers: Gemma 3
#: (``shared/token-truth/``), SmolLM2-135M (``stress/token_truth/smollm2-135m.jsonl``),
#: and Llama 3, Llama 2/Mistral 7B/Phi-3 (SentencePiece 32k, byte fallback), Qwen 2/2.5/3,
#: Command-R, DeepSeek LLM, DeepSeek Coder, StarCoder, Falcon and GPT-NeoX
#: (``stress/token_truth/families.jsonl``). Lifted until no fitted text is under-counted,
#: times 1.04 (held-out texts were under by up to 2%), then floored where a text of one
#: class alone needs it: DIGIT 1.0 (Gemma, Qwen, Llama 2 spend one token per digit),
#: SPACE and PUNCT 1/16 (runs of 16 merge into one token at most), LETTER_OTHER 1.0
#: (Cyrillic, Greek, Indic, Thai: too few samples to fit; byte fallback costs more), HAN
#: 2.06 (Chinese without fullwidth punctuation: SmolLM2 spends up to 1.98 tokens per Han
#: character, which the fitted 1.744 under-counted at 0.88; rare characters cost up to 2.8).
#: Held out, no text of any of the eleven is under-counted (worst 1.06).
#:
#: The price: a cold estimate over-counts Gemma 3 by 1.6x over all 106 texts (median
#: 1.45; English prose 1.51, code 1.43, JSON 1.44, Chinese 3.1, Korean 2.5, emoji 3.2),
#: where the Gemma-only rates before them over-counted it by 1.26x but under-counted
#: SmolLM2 on 36 of 106 texts (worst 0.60: every CJK and emoji text), Llama 2 down to 0.47.
#: Calibration replaces them as soon as the loaded model has been measured.
COLD_RATES: Final[Mapping[ScriptClass, float]] = MappingProxyType(
    {
        ScriptClass.DIGIT: 1.0,
        ScriptClass.SPACE: 0.063,
        ScriptClass.LETTER: 0.358,
        ScriptClass.PUNCT: 0.063,
        ScriptClass.HAN: 2.06,
        ScriptClass.HANGUL: 3.392,
        ScriptClass.KANA: 1.815,
        ScriptClass.LETTER_OTHER: 1.0,
        ScriptClass.SYMBOL: 3.988,
        ScriptClass.PUNCT_RUN: 1.885,
        ScriptClass.SPACE_RUN: 0.0,
        ScriptClass.WORD_BREAK: 1.166,
        ScriptClass.INDENT: 0.498,
    }
)
_ASCII_SCALED: Final = frozenset(
    {
        ScriptClass.SPACE,
        ScriptClass.LETTER,
        ScriptClass.PUNCT,
        ScriptClass.PUNCT_RUN,
        ScriptClass.SPACE_RUN,
        ScriptClass.WORD_BREAK,
        ScriptClass.INDENT,
    }
)


# Products like 100 * 0.27 land a hair above the exact value in binary floating
# point; forgive that much before rounding up so exact products are not bumped by one.
_ROUNDING_SLACK: Final = 1e-9
#: How the cold-start model's ``source`` starts (nothing measured yet).
COLD_SOURCE: Final = "built-in rates"


@dataclass(frozen=True, slots=True)
class TokenModel:
    """Rates in tokens per character for every :class:`ScriptClass`.

    ``rates`` must name every class with a finite, non-negative rate; it is copied
    into a read-only mapping. ``source`` says where the rates came from, for people
    (``built-in rates, ASCII scale 1``, ``rates measured via ...``), not what kind of count they give: the
    lines that show it name the kind ("cold-start estimate"), and a source that named it too was
    read twice ("cold-start estimate (...): cold-start estimate (...)").
    """

    rates: Mapping[ScriptClass, float]
    source: str
    _ordered: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        missing = [cls.value for cls in ScriptClass if cls not in self.rates]
        if missing:
            raise ValueError(f"TokenModel rates miss classes: {', '.join(missing)}")
        ordered = tuple(float(self.rates[cls]) for cls in _CLASS_ORDER)
        if not all(math.isfinite(rate) and rate >= 0.0 for rate in ordered):
            raise ValueError(f"TokenModel rates must be finite and >= 0: {ordered}")
        frozen = MappingProxyType(dict(zip(_CLASS_ORDER, ordered, strict=True)))
        object.__setattr__(self, "rates", frozen)
        object.__setattr__(self, "_ordered", ordered)

    def estimate(self, text: str) -> int:
        """Return the estimated token count of ``text``, rounded up.

        ``""`` is 0 tokens; any non-empty text is at least 1.
        """
        if not text:
            return 0
        return self.estimate_counts(_counts(text))

    def estimate_counts(self, counts: Sequence[int]) -> int:
        """The estimate of a non-empty text whose :class:`ScriptClass` counts (in order) are ``counts``."""
        total = sum(count * rate for count, rate in zip(counts, self._ordered, strict=True))
        return max(1, math.ceil(total - _ROUNDING_SLACK))

    @property
    def ordered(self) -> tuple[float, ...]:
        """The rates in :class:`ScriptClass` order."""
        return self._ordered

    def fitting_prefix(self, text: str, max_tokens: int) -> int:
        """Length of the longest prefix of ``text`` whose estimate is within ``max_tokens``.

        Estimates only grow as text grows, so a binary search finds it in
        ``log2(len(text))`` estimates. Callers choose where to actually cut (a word,
        a line) within that length.
        """
        if self.estimate(text) <= max_tokens:
            return len(text)
        low, high = 0, len(text)  # text[:low] fits, text[:high] does not
        while high - low > 1:
            middle = (low + high) // 2
            if self.estimate(text[:middle]) <= max_tokens:
                low = middle
            else:
                high = middle
        return low

    @classmethod
    def flat(cls, ratio: float = 0.27, dense: float = 1.0) -> TokenModel:
        """``ratio`` for every character but Han, Hangul and Kana (``dense``), no boundary costs.

        The single-ratio model ctxtrio used before per-class cold rates: round numbers
        for tests, never a safe estimate of a real tokenizer.
        """
        rates = dict.fromkeys(CHARACTER_CLASSES, ratio)
        rates.update({ScriptClass.HAN: dense, ScriptClass.HANGUL: dense, ScriptClass.KANA: dense})
        rates.update(dict.fromkeys(_CLASS_ORDER[len(CHARACTER_CLASSES) :], 0.0))
        return cls(rates, f"flat: {ratio:g} tokens/char, {dense:g} for CJK/Hangul/Kana")

    @classmethod
    def cold(cls, ratio: float = COLD_PROSE_RATIO) -> TokenModel:
        """Return the cold-start model; ``ratio`` scales the ASCII rates (see :data:`COLD_RATES`)."""
        scale = ratio / COLD_PROSE_RATIO
        rates = {sc: rate * scale if sc in _ASCII_SCALED else rate for sc, rate in COLD_RATES.items()}
        return cls(rates, f"{COLD_SOURCE}, ASCII scale {scale:g}")


class TokenModelRef:
    """Holds the current TokenModel; the calibration task replaces `current` when it measures the loaded model.

    Readers take ``ref.current`` once per operation and use that snapshot throughout,
    so one chunking or packing pass never mixes two models. Assignment of the
    attribute is atomic; no lock is needed.
    """

    __slots__ = ("current",)

    current: TokenModel

    def __init__(self, model: TokenModel) -> None:
        self.current = model

    def __repr__(self) -> str:
        return f"TokenModelRef({self.current!r})"
