"""What a short query asks for by name (``json decode error``, ``Buffer.allocUnsafe``, ``hash map get node``).

:func:`spelled_identifier` joins a short query's words (``py scanstring`` → ``pyscanstring``), the form the
index holds for ``py_scanstring`` and ``PyScanString`` alike (an identifier in the query, followed by its
parts among the terms, counts once: ``JSONDecodeError`` stays ``jsondecodeerror``); a short query that holds a
dotted name asks for its last part, qualified (:func:`asked_name`: ``Buffer.allocUnsafe`` → ``allocunsafe`` of
``buffer``). :func:`asked_keywords` gives the keywords of the kind of name it says it asks for (``class``,
``type``). The members its words may spell of an owner its other words name are :mod:`.member_names`'; whether a
text defines them is :mod:`.definitions`'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .definitions import Name, spelling
from .query import QUESTION_WORDS
from .terms import STOPWORDS, terms

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DOTTED", "KIND_WORDS", "asked_keywords", "asked_name", "name_words", "spelled_identifier"]

#: Queries of more words are questions, not names.
_MAX_NAME_TERMS: Final = 4
#: Words that say what kind of name a query asks for, not the name (``where is the Deserializer trait defined``).
KIND_WORDS: Final = frozenset(
    "defined define defines definition declared declaration class interface trait type struct enum function "
    "method func fn def decorator impl implement implementation".split()
)
#: A dotted name in a query (``Buffer.allocUnsafe``, ``threading.Event.wait``): its qualifier and last part.
DOTTED: Final = re.compile(r"(?<![\w$.])((?:[A-Za-z_$][\w$]*\.)+)([A-Za-z_$][\w$]*)(?![\w$.])")
_FUNCTION_KEYWORDS: Final = frozenset(("def", "function", "func", "fn", "fun"))
#: The keywords that announce each kind of name a query may say it asks for (``""``: a method no keyword
#: announces): ``http header type`` asks for Go's ``type Header``, not ``func (r *response) Header``.
_KIND_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    "class": frozenset(("class",)),
    "interface": frozenset(("interface", "type", "protocol")),
    "trait": frozenset(("trait",)),
    "struct": frozenset(("struct", "type")),
    "enum": frozenset(("enum", "type")),
    "type": frozenset(("type", "struct", "enum", "class", "interface", "trait", "record")),
    **dict.fromkeys(("function", "func", "fn", "def", "decorator"), _FUNCTION_KEYWORDS),
    "method": _FUNCTION_KEYWORDS | {""},
    # Rust's ``impl Future for Sleep`` (``how does tokio's Sleep implement Future``, ``the ops::Index impl``).
    **dict.fromkeys(("impl", "implement", "implementation"), frozenset(("impl",))),
}


def spelled_identifier(query_terms: Sequence[str]) -> str | None:
    """The identifier a query of 1 to 4 words spells, joined; None for longer queries. Words that say the kind of
    name asked for (``defined``, ``method``) are not counted: they are not the name's."""
    words = name_words(query_terms)
    if not words or sum(word not in KIND_WORDS for word in words) > _MAX_NAME_TERMS:
        return None
    return "".join(words)


def name_words(query_terms: Sequence[str]) -> list[str]:
    """The words of a query, an identifier followed by its parts among the terms counted once."""
    words: list[str] = []
    position, count = 0, len(query_terms)
    while position < count:
        whole = query_terms[position]
        words.append(whole)
        joined, end = "", position + 1
        while end < count and len(joined) < len(whole):
            part = _next_part(whole[len(joined) :], query_terms[end])
            if part is None:
                break
            joined += part
            end += 1
        if whole[len(joined) :] in STOPWORDS:
            joined = whole  # a part that is a stopword ends it (``of`` of ``indexOf``)
        position = end if joined == whole and end > position + 1 else position + 1  # skip an identifier's parts
    return words


def _next_part(rest: str, term: str) -> str | None:
    """How an identifier's ``rest`` goes on with the next ``term``: the term itself, or the term after a part that is
    a stopword, which terms leave out (``ifabsent`` of ``computeIfAbsent``, ``aslist`` of ``asList``); None if not."""
    if rest.startswith(term):
        return term
    for size in range(1, len(rest) - len(term) + 1):
        if rest[:size] in STOPWORDS and rest[size:].startswith(term):
            return rest[:size] + term
    return None


def asked_name(query: str, query_terms: Sequence[str]) -> Name | None:
    """The name a short query asks for (None for a longer one, see :func:`spelled_identifier`):
    the last part of its first dotted name, qualified, else the identifier its words spell: ``query_terms`` and the
    question words the query writes after the first of them, which are a name's there as in :func:`member_names`
    (``get`` of Java's ``ThreadLocal.get`` in ``thread local get``, of webpack's ``getModule`` in ``module graph
    get module``: without it, ``threadlocal`` and ``modulegraph``, whose classes' definitions came first)."""
    spelled = spelled_identifier(_name_terms(query, query_terms))
    if spelled is None:
        return None
    dotted = DOTTED.search(query)
    if dotted is None:
        return Name(spelled)
    qualifier = dotted.group(1).rstrip(".").rsplit(".", 1)[-1]
    return Name(spelling(dotted.group(2)), spelling(qualifier))


def _name_terms(query: str, query_terms: Sequence[str]) -> list[str]:
    """``query_terms`` with the question words ``query`` writes after the first of them, in the query's order."""
    kept = frozenset(query_terms)
    out: list[str] = []
    for term in dict.fromkeys(terms(query)):
        if term in kept or (out and term in QUESTION_WORDS and term not in kept):
            out.append(term)
    if len(out) == len(kept) or not kept.issubset(out):
        return list(query_terms)  # none to add, or terms that are not the query's own (``does`` of ``doesn't``)
    return out


def asked_keywords(query: str) -> frozenset[str] | None:
    """The keywords that announce the kinds of name a query says it asks for (``scanner split function type``:
    a function's or a type's), None when it says no kind (``json decoder decode``)."""
    kinds = [_KIND_KEYWORDS[word] for word in terms(query) if word in _KIND_KEYWORDS]
    return frozenset().union(*kinds) if kinds else None
