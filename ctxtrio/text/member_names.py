"""The members a query may ask for with its owner's words (``json decoder decode``: Go's ``func (dec *Decoder)
Decode``), for :mod:`ctxtrio.docs.defined`. Pure.

:func:`member_names` gives the names a short query's words may spell as a member of what its other words name,
best first; a question that writes names as code (``how does WaitGroup Wait block ...``, ``errors.Is``) asks for
theirs (:func:`names_written`); :func:`written_names` gives the names it writes in mixed case, whose case a
definition should share.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Final

from .asked import DOTTED, KIND_WORDS, name_words
from .definitions import Member, spelling
from .query import QUESTION_WORDS
from .terms import STOPWORDS, terms

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["member_names", "names_written", "written_names"]

#: A query's words as written, stopwords kept.
_WORDS: Final = re.compile(r"[\w$]+")
#: Queries of more words (kind and question words aside) are questions, not members with their owners: five for
#: ``eslint source code get text`` (``getText`` of ``SourceCode``), ``arrays binary search int array``.
_MAX_MEMBER_TERMS: Final = 5
#: A query that describes a name rather than names it: a kind of name and a relative clause (``the function
#: that parses a url``, ``the class which``).
_DESCRIBED: Final = re.compile(
    r"\b(?:function|method|class|type|interface|trait|struct|enum|decorator)s?\s+(?:that|which)\b", re.IGNORECASE
)
#: A query's words with the marks a name is written with (``errors.Is``, ``ops::Index``, ``read_text``).
_WRITTEN: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
#: Stopwords that join an owner and its member in a query rather than start a name.
_CONNECTORS: Final = frozenset(("in", "of"))


def member_names(query: str) -> list[Member]:
    """The names a query of 1 to 4 words (stopwords aside) may ask for as a member of something its other words name,
    best first: its words whole when it also said what kind of name it asks for (``text wrapper
    class``: ``textwrapper``, of no owner), then the longest run of its last words before shorter ones (``builder write string``:
    ``writestring``, then ``string``), then runs of its first words (``NewReader defined in bufio``:
    ``newreader`` of ``bufio``). Its words are all its terms in order, but for words such as
    ``defined`` and ``class`` and the question words it starts with (``where``): after a name's
    first word, a question word is a name's (Java's ``ThreadLocal.get`` in ``thread local get``,
    ``getNode`` in ``hash map get node``, Go's ``Once.Do`` in ``sync once do``)."""
    if _DESCRIBED.search(query):
        return []  # a description (``what does the function that parses a url do``), not a name
    spelled = name_words(terms(query))
    words = [word for word in spelled if word not in KIND_WORDS]
    while words and words[0] in QUESTION_WORDS:
        del words[0]
    count = len(words)
    if count > _MAX_MEMBER_TERMS and (written := names_written(query)) and written != query:
        # A question that writes names (``how does WaitGroup Wait block until the counter is zero``): theirs.
        return list(dict.fromkeys([*_dotted_members(written), *member_names(written)]))
    if not 1 <= count <= _MAX_MEMBER_TERMS:
        return []  # a question (``how does the scanner split its input into tokens``), not a name
    # With ``class`` or ``defined`` left out, the rest may be the name whole (``text wrapper class``).
    whole = [Member("".join(words), ())] if not KIND_WORDS.isdisjoint(spelled) else []
    last: list[Member] = []
    before, after = _stopwords_around(query, words[-1])
    as_written = [spelling(word) for word in _WORDS.findall(query)]
    for k in range(1, count):
        run = "".join(words[k:])
        inner = _with_inner_stopwords(as_written, words[k:])
        spelled_with = [before.get(words[k], "") + run, run + after, before.get(words[k], "") + run + after]
        spelled_with += [inner, inner + after] if inner else []
        last += [Member(name, tuple(words[:k])) for name in dict.fromkeys(spelled_with) if name != run]
        last.append(Member(run, tuple(words[:k])))
    first = [Member("".join(words[:k]), tuple(words[k:])) for k in range(count - 1, 0, -1)]
    # Runs between the first and the last words, of the words before them: what follows describes the parameters
    # (``binarysearch`` of ``arrays`` in ``arrays binary search int array``).
    inside = [
        Member("".join(words[start : start + size]), tuple(words[:start]))
        for size in range(count - 2, 0, -1)
        for start in range(1, count - size)
    ]
    # A name written in mixed case after other words is theirs (``indexOf`` of ``string`` in ``string indexOf string
    # from index``), wherever it stands; no run of first or last words spells it there.
    mixed = {spelling(word) for word in written_names(query)}
    cased = [Member(word, tuple(words[:k])) for k, word in enumerate(words) if k and word in mixed]
    dotted = _dotted_members(query)  # ``errors.Is``: written as code, whatever the words around it
    return list(dict.fromkeys([*dotted, *_owned_as_written(query, [*cased, *whole, *last, *first, *inside])]))


def _dotted_members(written: str) -> list[Member]:
    """The last part of each dotted name ``written`` holds, of the part before it (``is`` of ``errors`` for
    ``errors.Is``, which a stopword's terms leave out)."""
    return [
        Member(spelling(match.group(2)), (spelling(match.group(1).rstrip(".").rsplit(".", 1)[-1]),))
        for match in DOTTED.finditer(written)
    ]


def _owned_as_written(query: str, members: list[Member]) -> list[Member]:
    """``members`` with those first, in their order, whose owners are the words a query writes after ``in`` or ``of``
    and whose name is of the words before it: ``ParseFile`` of ``go/parser`` in ``where is ParseFile defined in
    go/parser``, not ``parser`` of ``parsefile``; ``Error`` of serde_json in ``the error type of serde json``."""
    written = [spelling(word) for word in _WORDS.findall(query)]
    joins = [n for n, word in enumerate(written) if word in _CONNECTORS]
    if not joins:
        return members
    after = frozenset(written[joins[-1] + 1 :]) - STOPWORDS - KIND_WORDS
    before = frozenset(written[: joins[-1]])
    owned = [
        member
        for member in members
        if after
        and after.issubset(member.owners)
        and all(owner in after or owner in before for owner in member.owners)
        and member.identifier not in after
    ]
    return owned + [member for member in members if member not in owned]


def names_written(query: str) -> str:
    """The words of ``query`` written as code, in order, joined by spaces: a dotted or ``::`` path
    (``errors.Is``, ``ops::Index``), a name with ``_`` or a capital after its first letter (``read_text``,
    ``WaitGroup``) and a word with a capital past the query's first word (``Wait`` in ``how does WaitGroup Wait
    block until the counter is zero``); ``""`` when it writes none. A question longer than a name
    (:func:`spelled_identifier`) asks for the names it writes so."""
    words = list(dict.fromkeys(_WRITTEN.findall(query)))
    kept = [
        word
        for n, word in enumerate(words)
        if not word.isupper()
        and (
            "." in word.strip(".")
            or "::" in word
            or "_" in word.strip("_")
            or any(c.isupper() for c in word[1:])
            or (n > 0 and word[:1].isupper())
        )
    ]
    return " ".join(kept)


def written_names(query: str) -> frozenset[str]:
    """The words a query writes in mixed case, a capital after their first letter (``ParseFile``, ``getLogger``,
    ``EventEmitter``; not ``Value`` nor ``JSON``, which a sentence or an acronym writes so), as written: a
    definition of a name so written, case and all, is the one asked for before one that differs in case (Go's
    exported ``func ParseFile`` before the parser's own ``func (p *parser) parseFile``)."""
    return frozenset(
        word for word in _WORDS.findall(query) if not word.isupper() and any(c.isupper() for c in word[1:])
    )


def _with_inner_stopwords(written: Sequence[str], run: Sequence[str]) -> str:
    """``run`` (a member's words) joined with the stopwords the query writes between them (``if`` in ``hash map
    compute if absent``: Java's ``computeIfAbsent``), but ``in`` and ``of``, which join an owner to its member;
    ``""`` when it writes none there, or writes the words apart."""
    for start, word in enumerate(written):
        if word != run[0]:
            continue
        joined, at, found = [word], start + 1, 1
        while found < len(run) and at < len(written):
            if written[at] == run[found]:
                found += 1
            elif written[at] not in STOPWORDS or written[at] in _CONNECTORS:
                break
            joined.append(written[at])
            at += 1
        if found == len(run) and len(joined) > len(run):
            return "".join(joined)
    return ""


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
