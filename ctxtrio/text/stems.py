"""A light English stemmer for matching search words that differ only by an inflection."""

from __future__ import annotations

import functools
from typing import Final

__all__ = ["inflections", "light_stem"]

#: Letters whose doubling before ``-ed``/``-ing`` belongs to the word (``called``, ``passed``,
#: ``buzzing``, ``stuffed``, ``agreed``): the double is kept. Any other doubled consonant was
#: doubled for the suffix (``skipped``, ``scanning``, ``committed``) and is undone.
_KEPT_DOUBLE: Final = frozenset("aeiouflsz")
#: The endings :func:`light_stem` takes off (after a final ``-e`` it took too: ``generat`` + ``es``).
_ENDINGS: Final = ("", "e", "s", "es", "ed", "ing")
_VOWELS: Final = frozenset("aeiou")


@functools.lru_cache(maxsize=1 << 15)
def light_stem(term: str) -> str:
    """``term`` without an English inflection, for matching words that differ only by one
    (``raise``, ``raised``, ``raises`` and ``raising`` all give ``rais``; ``loads`` gives
    ``load``; ``skipped`` and ``scanning`` give ``skip`` and ``scan``): ``-ing``, ``-ed`` (and a
    consonant doubled before it, when 3 letters or more remain: ``added`` stays ``add``), ``-es``
    after s/x/z/ch/sh, ``-s`` (not ``-ss``/``-us``/``-is``), then a final ``-e``. Words of under
    4 letters, and terms with digits or other scripts, stay as they are. A stem is always a
    prefix of its word."""
    if len(term) < 4 or not term.isascii() or not term.isalpha():
        return term
    if term.endswith(("ing", "ed")):
        cut = 3 if term.endswith("ing") else 2
        if len(term) - cut >= 3:
            term = term[:-cut]
            if len(term) >= 4 and term[-1] == term[-2] and term[-1] not in _KEPT_DOUBLE:
                term = term[:-1]  # the consonant doubled before the suffix: skipped, scanning -> skip, scan
    elif term.endswith("es") and term.endswith(("ses", "xes", "zes", "ches", "shes")) and len(term) > 5:
        term = term[:-2]
    elif term.endswith("s") and not term.endswith(("ss", "us", "is")):
        term = term[:-1]
    if term.endswith("e") and len(term) > 3:
        term = term[:-1]
    return term


def inflections(word: str) -> tuple[str, ...]:
    """The regular forms of ``word`` that :func:`light_stem` takes to the same stem, ``word``
    first (``aborted``: ``abort``, ``aborts``, ``aborting``, ...; ``skip``: ``skipped``,
    ``skipping``): the stem with each ending it removes, and its last consonant doubled before
    ``-ed``/``-ing``. Made by rule, so some are not words (``aborte``); only ``word`` itself for
    a word :func:`light_stem` leaves as it is because of its length, digits or script."""
    stem = light_stem(word)
    if len(word) < 4 or not word.isascii() or not word.isalpha():
        return (word,)
    made = [stem + ending for ending in _ENDINGS]
    if stem[-1] not in _KEPT_DOUBLE:
        made += [stem + stem[-1] + "ed", stem + stem[-1] + "ing"]
    if _doubles(stem):
        made = _one_word(word, stem, made)
    return tuple(dict.fromkeys([word, *(form for form in made if light_stem(form) == stem)]))


def _doubles(stem: str) -> bool:
    """Whether English doubles ``stem``'s last consonant before ``-ed``/``-ing``: one syllable
    ending in one vowel and one consonant (``not``, ``stat``, ``plan``; not ``open``, ``add``,
    ``fix``). Such a stem is two words' stem: ``notes`` and ``noted`` are forms of ``note``,
    ``nots`` and ``notted`` of ``not``. Stems ending in ``s``/``z`` are left out (``buses``
    is ``bus`` + ``es``, ``bases`` ``base`` + ``s``: the ending does not tell)."""
    if len(stem) < 3 or stem[-1] in _VOWELS or stem[-1] in "wxysz" or stem[-2] not in _VOWELS:
        return False
    return not any(letter in _VOWELS for letter in stem[:-2])


def _one_word(word: str, stem: str, made: list[str]) -> list[str]:
    """Those of ``made`` that are forms of ``word``'s own word, for a stem :func:`_doubles`:
    with a final ``-e`` (``note``, ``notes``, ``noted``, ``noting``) or without it (``stat``,
    ``stats``, ``statted``, ``statting``). Searching ``notes`` for ``not``, or ``os.stat`` for
    ``state``, matched another word, which the counts then preferred for being common."""
    with_e = (stem + "e", stem + "es", stem + "ed", stem + "ing")
    return [form for form in made if (form in with_e) == (word in with_e)]
