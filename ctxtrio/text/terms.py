"""Search terms: one function tokenizes both indexed text and queries.

Rules, in the order they apply:

1. The text is NFKC-normalized (fullwidth ``ＡＢＣ`` becomes ``ABC``, ``ﬁ`` becomes ``fi``).
2. Words are maximal runs of letters, digits and combining marks (Unicode categories
   ``L*``, ``N*``, ``M*``) in any script; runs joined by ``-`` or ``_`` form one
   identifier (``retry_policy``, ``load-balancer``).
3. Identifiers are indexed whole and split, on connectors and on case changes of the
   original text (``getUserName`` gives ``getusername``, ``get``, ``user``, ``name``;
   ``HTTPServer`` gives ``httpserver``, ``http``, ``server``).
4. Han and Kana runs are indexed as overlapping character bigrams (``数据库`` gives
   ``数据``, ``据库``; a one-character run is itself). Hangul words are space-separated,
   so a Hangul run is indexed whole *and* as bigrams (``결정했다`` gives ``결정했다``,
   ``결정``, ``정했``, ``했다``; two syllables once); a query for a stem (``결정``)
   finds the inflected word. Runs of different scripts inside a word are split apart
   (``API를`` gives ``api``, ``를``).
5. Everything is casefolded; a small English stopword list is dropped.

Every term consists only of characters of categories ``L*``, ``N*`` and ``M*``, so it
stays exactly one token of SQLite FTS5's ``unicode61`` tokenizer with
``categories 'L* N* Co M*'``. Duplicates are kept, in document order (term frequency
matters for BM25); :func:`unique_terms` dedupes for queries.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from itertools import filterfalse
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["STOPWORDS", "ascii_index_extras", "ascii_index_text", "index_text", "terms", "unique_terms"]

STOPWORDS: Final = frozenset(
    """a an and are as at be been but by for from had has have he her his i if in into
    is it its of on or our s she so t than that the their them then there these they
    this to was we were which will with you your""".split()
)

_is_stopword: Final = STOPWORDS.__contains__
_span: Final = re.Match.span


def _word_class() -> str:
    """Return a regex class body for letters, digits and marks.

    The Basic Multilingual Plane is listed exactly (``re`` turns it into a bitmap);
    all astral code points are admitted as one range and sorted out later, since a
    long list of astral ranges would make ``re`` test each of them at every character.
    """
    parts = ["0-9A-Za-z"]
    start = -1
    for cp in range(0x80, 0x10001):
        inside = cp < 0x10000 and unicodedata.category(chr(cp))[0] in "LNM"
        if inside and start < 0:
            start = cp
        elif not inside and start >= 0:
            parts.append(f"\\u{start:04x}-\\u{cp - 1:04x}")
            start = -1
    parts.append("\\U00010000-\\U0010ffff")
    return "".join(parts)


_ASCII_W: Final = "0-9A-Za-z"
# Shape of a word: "A" upper, "a" lower or caseless, "0" digit; split like camelCase.
_CAMEL: Final = re.compile("[A0]+(?=Aa)|A?[a0]+|[A0]+")
_ASCII_SHAPE: Final = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "A" * 26 + "a" * 26 + "0" * 10,
)
_HAN_KANA: Final = (
    "\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
)
_HANGUL: Final = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff\uffa0-\uffdc"
_CJK: Final = re.compile(f"[{_HAN_KANA}{_HANGUL}]")
_HANGUL_WORD: Final = re.compile(f"[{_HANGUL}]+")
_HAN_KANA_RUN: Final = re.compile(f"[{_HAN_KANA}]+")
_SEGMENT: Final = re.compile(f"([{_HAN_KANA}]+)|([{_HANGUL}]+)|([^{_HAN_KANA}{_HANGUL}]+)")


def _features(word: str, non_ascii: str) -> re.Pattern[str]:
    """Match one character inside each token that needs more than a lowercase split.

    Those are tokens joined by connectors, tokens holding a non-ASCII word character
    (``non_ascii``), and ASCII tokens whose case shape splits (``fooBar``,
    ``HTTPServer``). Every other token is one run of ``[0-9A-Za-z]`` whose only term
    is its lowercase form. The pattern starts with one character class, so ``re``
    skips ahead quickly; flagging a plain token as well is harmless.
    """
    conditions = [
        "(?<=[a-z0-9][A-Z])",  # fooBar
        "(?=[A-Z][a-z0-9])",  # HTTPServer
        f"(?<=[{word}][-_])(?=[-_]*[{word}])",  # retry_policy
    ]
    if non_ascii:
        conditions.insert(0, "(?<=[^\\x00-\\x7f])")
    return re.compile(f"[A-Z_\\-{non_ascii}](?:{'|'.join(conditions)})")


_ASCII_FEATURE: Final = _features(_ASCII_W, "")
_ASCII_RUN: Final = re.compile("[0-9A-Za-z_-]*")
# The token pattern of _unicode() restricted to ASCII (the only L/N/M characters there
# are letters and digits), so ASCII text never pays for compiling the Unicode patterns.
_ASCII_TOKEN: Final = re.compile(f"[{_ASCII_W}]+(?:[-_]+[{_ASCII_W}]+)*")


@dataclass(frozen=True, slots=True)
class _UnicodePatterns:
    token: re.Pattern[str]
    feature: re.Pattern[str]
    run: re.Pattern[str]
    runs: re.Pattern[str]


@functools.cache
def _unicode() -> _UnicodePatterns:
    """The patterns over every script, built on first use: listing the word characters
    and compiling four large classes takes ~90 ms, which server startup should not pay."""
    word = _word_class()
    return _UnicodePatterns(
        token=re.compile(f"[{word}]+(?:[-_]+[{word}]+)*"),
        feature=_features(word, word.removeprefix(_ASCII_W)),
        run=re.compile(f"[{word}_-]*"),
        runs=re.compile(f"[{word}_-]+"),
    )


# ASCII letters and digits to lowercase, every other ASCII character to a space.
_PLAIN: Final = str.maketrans({chr(c): chr(c).lower() if chr(c).isalnum() else " " for c in range(0x80)})
# Above this share of non-ASCII characters, most words need the token rules anyway.
_DENSE_NON_ASCII: Final = 0.1


def terms(text: str) -> list[str]:
    """Return the search terms of ``text`` in document order, duplicates kept."""
    if text.isascii():
        return _by_features(text, _ASCII_FEATURE, _ASCII_RUN)
    text = unicodedata.normalize("NFKC", text)
    if len(text) - len(text.encode("ascii", "ignore")) > len(text) * _DENSE_NON_ASCII:
        return _by_runs(text)
    patterns = _unicode()
    return _by_features(text, patterns.feature, patterns.run)


def unique_terms(text: str) -> list[str]:
    """Return the distinct terms of ``text`` in order of first occurrence (for queries)."""
    return list(dict.fromkeys(terms(text)))


def _by_features(text: str, feature: re.Pattern[str], run: re.Pattern[str]) -> list[str]:
    """Return the terms of NFKC ``text``, mostly ASCII.

    Each run of word and connector characters that holds a ``feature`` goes through
    the token rules; the text between those runs holds only plain ASCII words, which
    a translate and a split handle in bulk.
    """
    out: list[str] = []
    known: dict[str, tuple[str, ...]] = {}  # documents repeat their identifiers
    done = 0
    for start, end in _feature_runs(text, feature, run):
        _add_plain(text[done:start], out)
        out.extend(_run_terms(text[start:end], known))
        done = end
    _add_plain(text[done:] if done else text, out)
    return out


def _feature_runs(text: str, feature: re.Pattern[str], run: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of each run of word and connector characters holding a ``feature``.

    The next feature is searched for from the end of the run just handled (a feature
    matches one character, so that is the first of ``finditer``'s matches not inside it):
    ``finditer`` stopped at every feature, every CJK character of a mixed text among them.
    """
    reverse = ""
    done = 0
    search = feature.search
    while (match := search(text, done)) is not None:
        position = match.start()
        if not reverse:
            reverse = text[::-1]
        backward = run.match(reverse, len(text) - position)
        forward = run.match(text, position)
        assert backward is not None and forward is not None  # a starred pattern always matches
        done = forward.end()
        yield len(text) - backward.end(), done


def index_text(text: str) -> str:
    """Return what the FTS5 ``unicode61`` tokenizer is given for ``text``.

    Its tokens include every term of :func:`terms` (with term frequencies at least as
    high). For ASCII text that is the text itself, where the tokenizer does the word
    work in C (lowercase runs of letters and digits; stopwords are indexed but never
    asked for), followed by the terms only the rules add: identifiers whole
    (``retrypolicy``) and their case-split parts (``get``, ``user``, ``name``), found
    by one regex pass over the text. Other text is given its terms, space-joined.
    """
    extras = ascii_index_extras(text)
    if extras is None:
        return " ".join(terms(text))
    return ascii_index_text(text, extras)


def ascii_index_text(text: str, extras: str) -> str:
    """The index text of ASCII ``text`` given its :func:`ascii_index_extras` (the one
    join, so rows written at ingest and rows rebuilt later by the store match)."""
    return f"{text}\n{extras}" if extras else text


def ascii_index_extras(text: str) -> str | None:
    """Return what :func:`index_text` adds after an ASCII ``text`` (space-joined, maybe
    ""), or None when ``text`` is not ASCII (then its index text is all its terms).

    The chunking workers send only this back: the server already holds the text.
    """
    if not text.isascii():
        return None
    ahead = _FROM_FEATURE.findall(text)
    if not ahead:
        return ""
    behind = _FROM_FEATURE.findall(text[::-1])
    behind.reverse()
    return " ".join(filter(None, map(_halves_extras, behind, ahead)))


# The runs that can have extras are the maximal runs of word and connector characters
# holding an upper-case letter or a connector: a superset of the runs with a feature
# (``aB``, ``XYz`` or ``_Xy``, ``a_b``, which _ASCII_FEATURE flags). This pattern finds each
# such run from its first upper-case letter or connector to its end; over the reversed
# text, from its last one back to its start. Both passes skip every other character in
# C without trying a match there (the pattern starts with a character class), so they
# cost less than one pass that tries every position; the k-th match of one pass and the
# k-th from the end of the other are the two halves of the same run.
_FROM_FEATURE: Final = re.compile(r"[A-Z_\-][0-9A-Za-z_\-]*+")
_LOWER_DIGITS: Final = "0123456789abcdefghijklmnopqrstuvwxyz"


@functools.lru_cache(maxsize=1 << 16)
def _halves_extras(behind: str, ahead: str) -> str:
    """:func:`_ascii_extras` of the run whose reversed start is ``behind`` (up to its last
    upper-case letter or connector) and whose end is ``ahead`` (from its first one)."""
    start = behind[::-1]
    return _ascii_extras(start[: len(start) - len(start.lstrip(_LOWER_DIGITS))] + ahead)


def _ascii_extras(run: str) -> str:
    """The terms of an ASCII run that the tokenizer does not produce from the run itself,
    space-joined; "" for a run without a feature (what :func:`_extras_by_terms` gives,
    the commonest shapes of code without it: ``retry_policy``, ``_private``, ``True``,
    ``MAX_SIZE``, ``getUserName``)."""
    if run.islower():  # lower-case words and digits joined by connectors: no case split
        token = run.strip("_-")
        if "_" not in token and "-" not in token:
            return ""  # one word: the tokenizer gives it as it is
        whole = token.replace("_", "").replace("-", "")
        return "" if whole in STOPWORDS else whole  # the words themselves are the tokenizer's
    if not run.isalnum():  # connectors: ``MAX_SIZE``, ``Foo_Bar``, ``_Private``
        words = run.replace("-", "_").split("_")
        if all(map(_one_part, words)):  # each word is one part: the tokenizer's, as it is
            words = list(filter(None, words))
            whole = "".join(words).lower()
            return "" if len(words) < 2 or whole in STOPWORDS else whole
        return _extras_by_terms(run)
    if run.isupper() or run[1:].islower() or run.isdigit():
        return ""  # one word, as :func:`_add_ascii` takes it
    # Split by case (``getUserName``): the tokenizer gives the whole word, the rules add
    # the parts, which tile it.
    spans = _CAMEL.finditer(run.translate(_ASCII_SHAPE))
    parts = [run[start:end].lower() for start, end in map(_span, spans)]
    return " ".join(part for part in parts if part not in STOPWORDS) if len(parts) > 1 else ""


def _one_part(word: str) -> bool:
    """Is ``word`` (letters and digits, maybe "") one part of a case split? Without an
    upper-case letter, or letters only, all upper-case or capitalized."""
    return not word or word.islower() or word.isdigit() or (word.isalpha() and (word.isupper() or word[1:].islower()))


def _extras_by_terms(run: str) -> str:
    """:func:`_ascii_extras` by the rules: the run's terms less the tokenizer's words."""
    wanted = list(_run_terms(run, {}))
    for token in run.translate(_PLAIN).split():
        if token in wanted:
            wanted.remove(token)
    return " ".join(wanted)


def _by_runs(text: str) -> list[str]:
    """Return the terms of NFKC ``text`` with many non-ASCII words, run by run."""
    out: list[str] = []
    known: dict[str, tuple[str, ...]] = {}
    for run in _unicode().runs.findall(text):
        out.extend(_run_terms(run, known))
    return out


def _run_terms(run: str, known: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Return the terms of a run of word and connector characters, memoized in ``known``."""
    found = known.get(run)
    if found is None:
        out: list[str] = []
        for token in (_ASCII_TOKEN if run.isascii() else _unicode().token).findall(run):
            _add_token(token, out)
        found = known[run] = tuple(out)
    return found


def _add_plain(segment: str, out: list[str]) -> None:
    """Add the words of a segment whose only word characters are ASCII letters and digits."""
    if not segment.isascii():
        segment = segment.encode("ascii", "replace").decode("ascii")
    out.extend(filterfalse(_is_stopword, segment.translate(_PLAIN).split()))


def _add_token(token: str, out: list[str]) -> None:
    if token.isascii():
        _add_ascii(token, out)
    elif _HANGUL_WORD.fullmatch(token) is not None:
        if len(token) > 2:
            out.append(token)
        out.extend(_bigrams(token))
    elif _HAN_KANA_RUN.fullmatch(token) is not None:
        out.extend(_bigrams(token))
    elif max(token) > "\uffff":
        for piece in _unicode().token.findall(_blank_astral_non_words(token)):
            if piece.isascii():
                _add_ascii(piece, out)
            else:
                _add_unicode(piece, out)
    else:
        _add_unicode(token, out)


def _add_ascii(token: str, out: list[str]) -> None:
    if token.isalnum() and (token.islower() or token.isupper() or token[1:].islower() or token.isdigit()):
        word = token.lower()
        if word not in STOPWORDS:
            out.append(word)
    else:
        _add_identifier(token, token.translate(_ASCII_SHAPE), out)


def _add_unicode(token: str, out: list[str]) -> None:
    if _CJK.search(token) is None:
        _add_identifier(token, _shape(token), out)
        return
    for han_kana, hangul, rest in _SEGMENT.findall(token):
        if han_kana:
            out.extend(_bigrams(han_kana))
        elif hangul:
            if len(hangul) > 2:
                out.append(hangul)
            out.extend(_bigrams(hangul))
        else:
            for word in _unicode().token.findall(rest):
                _add_identifier(word, _shape(word), out)


def _add_identifier(token: str, shape: str, out: list[str]) -> None:
    """Add ``token`` whole and, when it has several parts, each part.

    ``shape`` has one character per character of ``token``: ``A`` upper, ``a`` lower
    or caseless, ``0`` digit, and the connectors ``-`` ``_`` themselves.
    """
    parts = [token[start:end].casefold() for start, end in map(_span, _CAMEL.finditer(shape))]
    whole = "".join(parts)
    if whole not in STOPWORDS:
        out.append(whole)
    if len(parts) > 1:
        out.extend(part for part in parts if part not in STOPWORDS)


def _shape(token: str) -> str:
    return "".join("A" if ch.isupper() else "0" if ch.isdigit() else ch if ch in "-_" else "a" for ch in token)


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _blank_astral_non_words(token: str) -> str:
    """Replace astral characters that are not letters, digits or marks with spaces."""
    return "".join(" " if ch > "\uffff" and unicodedata.category(ch)[0] not in "LNM" else ch for ch in token)
