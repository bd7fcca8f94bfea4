"""What a short query asks for by name (``json decode error``, ``Buffer.allocUnsafe``, ``hash map get node``).

:func:`spelled_identifier` joins a short query's words (``py scanstring`` → ``pyscanstring``), the form the
index holds for ``py_scanstring`` and ``PyScanString`` alike (an identifier in the query, followed by its
parts among the terms, counts once: ``JSONDecodeError`` stays ``jsondecodeerror``); a short query that holds a
dotted name asks for its last part, qualified (:func:`asked_name`: ``Buffer.allocUnsafe`` → ``allocunsafe`` of
``buffer``). :func:`member_names` gives the members its words may spell of an owner its other words name
(``getnode`` of ``hash map``), and :func:`asked_keywords` the keywords of the kind of name it says it asks for
(``class``, ``type``). Whether a text defines them is :mod:`.definitions`'s.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Final

from .definitions import Member, Name, spelling
from .query import QUESTION_WORDS
from .terms import STOPWORDS, terms

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["asked_keywords", "asked_name", "member_names", "spelled_identifier"]

#: Queries of more words are questions, not names.
_MAX_NAME_TERMS: Final = 4
#: Words that say what kind of name a query asks for, not the name (``where is the Deserializer trait defined``).
_KIND_WORDS: Final = frozenset(
    "defined define defines definition declared declaration class interface trait type struct enum function "
    "method func fn def decorator".split()
)
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
}
#: A dotted name in a query (``Buffer.allocUnsafe``, ``threading.Event.wait``): its qualifier and last part.
_DOTTED: Final = re.compile(r"(?<![\w$.])((?:[A-Za-z_$][\w$]*\.)+)([A-Za-z_$][\w$]*)(?![\w$.])")
#: A query's words as written, stopwords kept (:func:`_stopwords_around`).
_WORDS: Final = re.compile(r"[\w$]+")
#: Stopwords that join an owner and its member in a query rather than start a name.
_CONNECTORS: Final = frozenset(("in", "of"))


def spelled_identifier(query_terms: Sequence[str]) -> str | None:
    """The identifier a query of 1 to 4 words spells, joined; None for longer queries."""
    words = _name_words(query_terms)
    if not 1 <= len(words) <= _MAX_NAME_TERMS:
        return None
    return "".join(words)


def _name_words(query_terms: Sequence[str]) -> list[str]:
    """The words of a query, an identifier followed by its parts among the terms counted once."""
    words: list[str] = []
    position, count = 0, len(query_terms)
    while position < count:
        whole = query_terms[position]
        words.append(whole)
        joined, end = "", position + 1
        while end < count and len(joined) < len(whole):
            joined += query_terms[end]
            end += 1
        position = end if joined == whole else position + 1  # skip an identifier's parts
    return words


def member_names(query: str) -> list[Member]:
    """The names a query of 1 to 4 words (stopwords aside) may ask for as a member of something its other words name,
    best first: its words whole when it also said what kind of name it asks for (``text wrapper
    class``: ``textwrapper``, of no owner), then the longest run of its last words before shorter ones (``builder write string``:
    ``writestring``, then ``string``), then runs of its first words (``NewReader defined in bufio``:
    ``newreader`` of ``bufio``). Its words are all its terms in order, but for words such as
    ``defined`` and ``class`` and the question words it starts with (``where``): after a name's
    first word, a question word is a name's (Java's ``ThreadLocal.get`` in ``thread local get``,
    ``getNode`` in ``hash map get node``, Go's ``Once.Do`` in ``sync once do``)."""
    spelled = _name_words(terms(query))
    if len(spelled) > _MAX_NAME_TERMS:
        return []  # a question (``what does the function that parses a url do``), not a name
    words = [word for word in spelled if word not in _KIND_WORDS]
    while words and words[0] in QUESTION_WORDS:
        del words[0]
    count = len(words)
    if not 1 <= count <= _MAX_NAME_TERMS:
        return []
    # With ``class`` or ``defined`` left out, the rest may be the name whole (``text wrapper class``).
    whole = [Member("".join(words), ())] if count < len(spelled) else []
    last: list[Member] = []
    before, after = _stopwords_around(query, words[-1])
    for k in range(1, count):
        run = "".join(words[k:])
        spelled_with = [before.get(words[k], "") + run, run + after, before.get(words[k], "") + run + after]
        last += [Member(name, tuple(words[:k])) for name in dict.fromkeys(spelled_with) if name != run]
        last.append(Member(run, tuple(words[:k])))
    first = [Member("".join(words[:k]), tuple(words[k:])) for k in range(count - 1, 0, -1)]
    return whole + last + first


def asked_keywords(query: str) -> frozenset[str] | None:
    """The keywords that announce the kinds of name a query says it asks for (``scanner split function type``:
    a function's or a type's), None when it says no kind (``json decoder decode``)."""
    kinds = [_KIND_KEYWORDS[word] for word in terms(query) if word in _KIND_KEYWORDS]
    return frozenset().union(*kinds) if kinds else None


def _stopwords_around(query: str, last_word: str) -> tuple[dict[str, str], str]:
    """The stopwords a query's words drop that a member's name may start or end with: the one right before
    each word (``with`` of ``timeout`` in ``context with timeout``: Go's ``WithTimeout``; ``or`` in ``optional
    or else throw``: ``orElseThrow``), but ``in`` and ``of``, which join an owner to its member (``NewReader
    defined in bufio``); and the one after ``last_word`` that ends the query (``collectors grouping by``:
    ``groupingBy``)."""
    words = [spelling(word) for word in _WORDS.findall(query)]
    before = {
        word: stop
        for stop, word in itertools.pairwise(words)
        if stop in STOPWORDS and stop not in _CONNECTORS and word not in STOPWORDS
    }
    ends = len(words) >= 2 and words[-1] in STOPWORDS and words[-2] == last_word
    return before, words[-1] if ends else ""


def asked_name(query: str, query_terms: Sequence[str]) -> Name | None:
    """The name a short query asks for (None for a longer one, see :func:`spelled_identifier`):
    the last part of its first dotted name, qualified, else the identifier its words spell."""
    spelled = spelled_identifier(query_terms)
    if spelled is None:
        return None
    dotted = _DOTTED.search(query)
    if dotted is None:
        return Name(spelled)
    qualifier = dotted.group(1).rstrip(".").rsplit(".", 1)[-1]
    return Name(spelling(dotted.group(2)), spelling(qualifier))
