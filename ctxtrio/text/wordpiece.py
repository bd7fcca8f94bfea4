"""How many tokens a BERT-style embedding model makes of a text, counted from above. Pure.

An embedding part is cut at :data:`~.embedding.PART_CHARS` characters, ~130 tokens of prose,
but characters do not bound tokens: BERT's basic tokenizer (Hugging Face transformers,
``models/bert/tokenization_bert.py``: ``BasicTokenizer._run_split_on_punc`` makes every
punctuation character a token of its own, ``_tokenize_chinese_chars`` every CJK ideograph),
so 520 characters of a psql table's rule (``-----+-----``) or of minified JSON are ~520
tokens, more than all-MiniLM-L6-v2's 512 positions and llama-server's default physical
batch (512): llama-server answers HTTP 500, llama-cpp-python cuts the input at 512 and the
rest of the part is never embedded. Then ``WordpieceTokenizer`` cuts each word greedily
into the longest pieces its vocabulary holds, so a rare word is several tokens, down to
one a character.

:func:`wordpiece_tokens` counts a text so that the count is at least the model's: a
punctuation or CJK character is one token; a word of ASCII letters half a token a letter
(rounded up; English words are one piece or pieces of 2-4 letters); a word holding a digit
or a character outside ASCII (Cyrillic, Greek, Arabic, kana, Hangul, accents) one token a
character, since numbers, hex and other scripts are cut into pieces of about one character
by an English vocabulary. Measured against llama-server's own tokenizer of
all-MiniLM-L6-v2 (``/tokenize``): over 1,500 parts of python3.11-doc's library sources and
postgresql-doc-15's HTML the count never fell below the model's (the closest, 0.95 of it),
nor for Russian, Greek, Arabic, Japanese, Korean, German prose, minified JSON or base64.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "PART_TOKENS",
    "PREFIX_TOKENS",
    "SPECIAL_TOKENS",
    "WINDOW_TOKENS",
    "fitting_end",
    "fitting_start",
    "wordpiece_tokens",
]

#: The tokens an embedding input may take, [CLS] and [SEP] included: all-MiniLM-L6-v2's
#: positions (its GGUF's n_ctx_train), llama-server's default physical batch for embeddings
#: (it refuses a longer input with HTTP 500), BERT's, bge's and e5's. ctxtrio is not told
#: the model's window, and 512 is the smallest among the usual ones.
WINDOW_TOKENS: Final = 512
#: [CLS] and [SEP], added by the model's tokenizer around every input.
SPECIAL_TOKENS: Final = 2
#: Room for a model family's document prefix, which the embedder puts before a part after it is
#: cut (``llm/embeddings.prefixes_for``): nomic's ``search_document: `` is 4 tokens to the model and
#: 9 by :func:`wordpiece_tokens`' count from above, e5's ``passage: `` 2 and 5. Without this room a
#: part cut to the window was 4 over it with nomic's prefix (516 tokens by llama-cpp-python's
#: tokenizer): llama-cpp-python cut it silently, llama-server refuses it.
PREFIX_TOKENS: Final = 10
#: What a part's own text (its lead included) may take of the window.
PART_TOKENS: Final = WINDOW_TOKENS - SPECIAL_TOKENS - PREFIX_TOKENS

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: One CJK ideograph, a word (letters and digits; "_" is punctuation to BERT), or one
#: punctuation or symbol character.
_PIECE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+|[^\w\s]|_")


def _piece_tokens(piece: str) -> int:
    if len(piece) == 1 or not piece.isascii() or not piece.isalpha():
        return len(piece)
    return (len(piece) + 1) // 2


def wordpiece_tokens(text: str) -> int:
    """At least the word pieces a BERT WordPiece model makes of ``text`` ([CLS] and [SEP] not included)."""
    return sum(_piece_tokens(found.group()) for found in _PIECE.finditer(text))


def fitting_end(text: str, start: int, end: int, tokens: int) -> int:
    """The largest ``cut`` in ``start .. end`` such that ``text[start:cut]`` counts at most
    ``tokens`` by :func:`wordpiece_tokens` (a word that does not fit is cut inside)."""
    spent = 0
    for found in _PIECE.finditer(text, start, end):
        cost = _piece_tokens(found.group())
        if spent + cost > tokens:
            left = tokens - spent
            inside = left if cost == len(found.group()) else 2 * left
            return found.start() + inside
        spent += cost
    return end


def fitting_start(text: str, tokens: int) -> str:
    """The longest start of ``text`` that counts at most ``tokens`` by :func:`wordpiece_tokens` (:func:`fitting_end`)."""
    return text[: fitting_end(text, 0, len(text), tokens)]
