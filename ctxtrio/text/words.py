"""The words of a query as passages count them: an identifier and its parts are one word,
held whole or by all its parts; how rare each word is, for choosing a window; and the terms
of a text's lines, cached for ranking and the window alike (:func:`line_terms`). Pure.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Final

from .stems import light_stem
from .terms import terms

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "Alike",
    "alike_weights",
    "alike_words",
    "held_alike",
    "held_words",
    "identifier_parts",
    "line_terms",
    "may_hold",
    "rarity_weights",
    "stemmed_terms",
    "word_groups",
    "word_weights",
]


#: The documentation's words a search also looked for, by the query term each stands for
#: (``(("processors", ("cpus", "cpucount")), ...)``: :func:`~.neighbours.alike_of`); hashable, for caches.
Alike = tuple[tuple[str, tuple[str, ...]], ...]


def word_groups(query_terms: Sequence[str], *, stem: bool) -> dict[str, int]:
    """Each query term's word: an identifier's parts follow it in the query's terms
    (``pghba``, ``pg``, ``hba``) and count as that one word, so ``pg_hba`` weighs as
    much as ``record``, and its parts side by side are not a phrase."""
    group: dict[str, int] = {}
    word, whole, at = -1, "", 0
    for term in dict.fromkeys(map(light_stem, query_terms) if stem else query_terms):
        found = whole.find(term, at) if len(term) < len(whole) else -1
        if found >= 0:
            at = found + len(term)
        else:
            word, whole, at = word + 1, term, 0
        group[term] = word
    return group


def identifier_parts(group: dict[str, int]) -> dict[int, frozenset[str]]:
    """The parts of each word of the query that is an identifier with parts (``pghba``: ``pg``, ``hba``)."""
    terms_of: dict[int, list[str]] = {}
    for term, word in group.items():
        terms_of.setdefault(word, []).append(term)
    return {word: frozenset(found[1:]) for word, found in terms_of.items() if len(found) > 1}


def held_words(line_terms: Iterable[str], group: dict[str, int], parts: dict[int, frozenset[str]]) -> set[int]:
    """The query's words among ``line_terms``: an identifier with parts is held by its whole
    (``hash_mem_multiplier``) or by all its parts, not by one part (``work_mem`` holds no
    ``mem`` of ``hash_mem_multiplier``)."""
    held: set[int] = set()
    seen: dict[int, set[str]] = {}
    for term in line_terms:
        word = group.get(term, -1)
        if word < 0:
            continue
        wanted = parts.get(word)
        if wanted is None or term not in wanted:
            held.add(word)  # a single-term word, or the identifier whole
        else:
            seen.setdefault(word, set()).add(term)
    held.update(word for word, found in seen.items() if len(found) == len(parts[word]))
    return held


def alike_words(alike: Alike, group: dict[str, int], *, stem: bool) -> dict[str, int]:
    """Each of ``alike``'s words, stemmed (:func:`~.stems.light_stem`: ``walk`` is held by "walking"),
    -> the query's word (by ``group``, stemmed when ``stem``) it stands for; none that is, or has the
    stem of, a word of the query itself (that word counts whole)."""
    own = {light_stem(term) for term in group}
    out: dict[str, int] = {}
    for term, others in alike:
        word = group.get(light_stem(term) if stem else term, -1)
        if word < 0:
            continue
        for other in map(light_stem, others):
            if other not in own:
                out.setdefault(other, word)
    return out


def alike_weights(
    alike: Alike, query_terms: Sequence[str], rarity: Mapping[str, float], share: float
) -> tuple[float, ...]:
    """What each word of the query (:func:`word_weights`) counts when a line holds it only by one of
    its ``alike`` words: ``share`` of the most common of those words' own weight (``rarity``), never
    more than ``share`` of the word's. A word the corpus seldom says ("remember") is the rarest of the
    query, weighing 1.0; the documentation's words for it (``cache``, ``cached``) are as common as they
    are: at the word's weight, "cache" in lru_cache's signature outweighed the three common words of
    the sentence that answers, "It can save time when an expensive ... function is periodically
    called with the same arguments" (the most common rather than the rarest of them: one answer more
    over python3.11-doc's first set; a line does not tell which of them it holds)."""
    weights = word_weights(query_terms, rarity)
    group = word_groups(tuple(query_terms), stem=False)
    out = [share * weight for weight in weights]
    for term, others in alike:
        word = group.get(term, -1)
        if word >= 0 and others:
            out[word] = share * min([weights[word], *(rarity.get(other, weights[word]) for other in others)])
    return tuple(out)


def held_alike(line_terms: Iterable[str], alike: dict[str, int], *, stemmed: bool) -> frozenset[int]:
    """The query's words a line holds by one of their :func:`alike_words` (``stemmed``: its terms are)."""
    return frozenset(alike[stem] for term in line_terms if (stem := term if stemmed else light_stem(term)) in alike)


def stemmed_terms(text: str, *, stem: bool) -> list[str]:
    """The terms of ``text``, with ``stem`` each without its inflection (:func:`~.stems.light_stem`)."""
    return list(map(light_stem, terms(text))) if stem else terms(text)


def rarity_weights(doc_counts: Mapping[str, int], rows: int, also: Mapping[str, int] | None = None) -> dict[str, float]:
    """Each term's weight in choosing a window: its inverse document frequency (BM25's, over
    ``rows`` with ``doc_counts`` holding each term) over the highest of them, squared, so the
    rarest word of the query weighs 1.0 and a common one little (in PostgreSQL's manual
    ``currval`` 1.0, ``session`` 0.21, ``before`` 0.11). ``also``: other terms' counts (the
    query's :data:`Alike` words), weighed against the same highest (at most 1.0)."""
    idf = {term: _idf(count, rows) for term, count in doc_counts.items()}
    top = max(idf.values(), default=0.0)
    if top <= 0:
        return {}
    weights = {term: (value / top) ** 2 for term, value in idf.items()}
    for term, count in (also or {}).items():
        if term not in weights:
            weights[term] = min(1.0, (_idf(count, rows) / top) ** 2)
    return weights


def _idf(count: int, rows: int) -> float:
    """BM25's inverse document frequency of a term ``count`` of ``rows`` rows hold (FTS5's, without its floor)."""
    return math.log(1 + (rows - count + 0.5) / (count + 0.5))


def word_weights(query_terms: Sequence[str], rarity: Mapping[str, float]) -> tuple[float, ...]:
    """The weight of each word of the query (:func:`word_groups`): its rarest term's, 1.0 for one unknown."""
    group = word_groups(tuple(query_terms), stem=False)
    weights = [0.0] * (max(group.values(), default=-1) + 1)
    for term, word in group.items():
        weights[word] = max(weights[word], rarity.get(term, 1.0))
    return tuple(weights)


def may_hold(line: str, wanted: Iterable[str]) -> bool:
    """False only when no term of ``wanted`` can be among the terms of ``line`` (a cheap
    test before :func:`terms`): every term of an ASCII line is a substring of the line
    lowercased, or of it without connectors (``work_mem`` gives ``workmem``)."""
    if not line.isascii():
        return bool(line.strip())
    lower = line.lower()
    squashed = lower.replace("_", "").replace("-", "")
    return any(term in lower or term in squashed for term in wanted)


#: Stands for a line break in one :func:`terms` call over a whole text (a term of its own).
_BREAK: Final = "qqzxlinebreakxzqq"


@functools.lru_cache(maxsize=64)
def line_terms(text: str, stems: frozenset[str]) -> list[list[str]]:
    """The terms of each line of ``text``, those of lines that cannot hold a query term
    (``stems``: the query's terms stemmed, each a prefix of its word, so one test serves
    ranking and the window alike) left empty: in one :func:`terms` call over the candidate
    lines joined by :data:`_BREAK` (far cheaper than a call per line), else line by line.
    Cached: a search ranks its candidates, then shows the best of them. Do not mutate."""
    candidates = [raw if may_hold(raw, stems) else "" for raw in text.split("\n")]
    if _BREAK in text:
        return [terms(raw) if raw else [] for raw in candidates]
    out: list[list[str]] = [[]]
    for term in terms(f" {_BREAK} ".join(candidates)):
        if term == _BREAK:
            out.append([])
        else:
            out[-1].append(term)
    return out
