"""The name a line defines, for passages: ``def py_scanstring(``, ``.. cmdoption:: -W arg``,
``work_mem (integer)``, ``-k``. Pure.

A line defines a name when it starts with one, after a reST directive (``.. function::``),
keywords of code that introduce one (``def``, ``class``, ...) and list, option and markup
marks, followed by nothing or by what follows a defined name (``(``, ``[``, ``:``, ``=``,
``|``, ...): a definition, a parameter's entry, an option's term, a table row.
``deadlock_timeout.`` ending a sentence defines nothing. A C or C++ entry defines the name it
declares, not the type before it (``.. c:function:: void Py_INCREF(PyObject *o)``: ``Py_INCREF``;
:func:`~.definitions.declared_name`). (``text/definitions.py`` asks the narrower question
ranking needs: does a text define one identifier a query spells.)
How much of a query a line defines is :func:`defined_share`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .definitions import declared_name, spelling
from .terms import terms
from .words import held_words, identifier_parts, may_hold, stemmed_terms, word_groups, word_weights

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

__all__ = ["PART_SHARE", "defined_name", "defined_share", "defines_one_of", "defining_lines", "written_identifiers"]

#: The name a line starts with, after a reST directive (``.. function::``), keywords of code that
#: introduce one, and list, option and markup marks.
_LEADING_NAME: Final = re.compile(
    r"\s*(?:[-*+]\s+|#+\s+)?((?:\.\.\s+(?:[\w-]+:)?[\w-]+::\s+)?(?:(?:async|def|class|function|func|fn|impl|export|"
    r"default|public|private|protected|static|const|let|var|type|interface|struct|enum|pub|final|abstract|override|"
    r"virtual)\s+)*)[\\`*-]*([\w.-]*\w)(.*)"
)
#: A Sphinx entry of the C or C++ domain, whose declaration starts with a type (``.. c:var:: int Py_DebugFlag``).
_C_ENTRY: Final = re.compile(r"\s*(?:[-*+]\s+)?\.\.\s+c(?:pp)?:[\w-]+::\s+(\S.*)")
#: What may follow a name where it is defined.
_AFTER_NAME: Final = "([{<:=|,→"
#: What the definition of a name holding a query word only as a part of it counts, of one naming it whole.
PART_SHARE: Final = 0.5


def defined_name(line: str) -> str | None:
    """The name ``line`` defines (as written, without its marks), or None."""
    entry = _C_ENTRY.match(line)
    if entry is not None:  # the leading word is a type (``void``, ``PyObject*``) that names nothing asked
        return declared_name(entry.group(1))
    match = _LEADING_NAME.match(line)
    if match is None:
        return None
    rest = match.group(3).lstrip("`*").lstrip()  # past the markup closing the name
    if not match.group(1) and rest and rest[0] not in _AFTER_NAME:
        return None
    return match.group(2)


def defining_lines(raws: Sequence[str], named: Sequence[str], rarity: Mapping[str, float], below: int) -> list[int]:
    """The lines of ``raws`` above line ``below`` that define (:func:`defined_name`) the rarest word
    of the query's terms ``named`` (by ``rarity``, :func:`~.words.word_weights`), in order."""
    weights = word_weights(named, rarity)
    group = word_groups(tuple(named), stem=False)
    parts = identifier_parts(group)
    rarest = {word for word, weight in enumerate(weights) if weight == max(weights, default=0.0)}
    wanted = [term for term, word in group.items() if word in rarest]
    out: list[int] = []
    for number, raw in enumerate(raws[:below]):
        name = defined_name(raw) if may_hold(raw, wanted) else None
        if name is not None and rarest & held_words(terms(name), group, parts):
            out.append(number)
    return out


def defined_share(
    line: str, group: dict[str, int], parts: dict[int, frozenset[str]], words: int, *, stem: bool
) -> float:
    """How much of the query (``words`` words, by ``group``) the name ``line`` defines holds, the share
    of its words; 0.0 for none. For the window (not ``stem``), a word the name holds only as a part of
    a longer identifier counts :data:`PART_SHARE` (``insort_left`` defines ``insort`` less than
    ``insort`` does); ranking (``stem``) counts it whole."""
    name = defined_name(line) if words else None
    if name is None or not may_hold(name, group.keys()):
        return 0.0
    name_terms = stemmed_terms(name, stem=stem)
    held = held_words(name_terms, group, parts)
    if stem or not held:
        return len(held) / words
    whole = held_words(_whole_terms(name_terms), group, parts)
    return (len(whole) + PART_SHARE * len(held - whole)) / words


def _whole_terms(name_terms: Sequence[str]) -> list[str]:
    """The terms of a name (:func:`~.terms.terms`) that are words whole, not the parts of an
    identifier that follow it (``insort_left`` gives ``insortleft``, ``insort``, ``left``: the first)."""
    out: dict[int, str] = {}
    for term, word in word_groups(tuple(name_terms), stem=False).items():
        out.setdefault(word, term)
    return list(out.values())


def written_identifiers(query_terms: Sequence[str]) -> list[str]:
    """The identifiers of more than one part a query writes (``ThreadPoolExecutor``, ``work_mem``,
    ``--if-exists``), as its terms spell them whole: a term its parts follow (``threadpoolexecutor``,
    ``thread``, ``pool``, ``executor``; :func:`~.words.word_groups`). A plain word is none: the
    query does not say whether it names something."""
    group = word_groups(tuple(query_terms), stem=False)
    parts = identifier_parts(group)
    return [term for term, word in group.items() if word in parts and term not in parts[word]]


def defines_one_of(text: str, identifiers: Collection[str]) -> bool:
    """Whether a line of ``text`` defines (:func:`defined_name`) one of ``identifiers`` as
    :func:`written_identifiers` spells them (the name's last dotted part, case, ``_`` and ``$``
    aside; a hyphen stays, so ``--if-exists`` is none): its entry (``.. data:: VERBOSE``), an
    option's or parameter's term (``* `highWaterMark` {number}``, ``work_mem (integer)``), a
    ``def`` or ``class`` line."""
    for line in text.splitlines():
        spelled = spelling(line)
        if not any(identifier in spelled for identifier in identifiers):
            continue  # most lines: no regex
        name = defined_name(line)
        if name is not None and spelling(name.rsplit(".", 1)[-1]) in identifiers:
            return True
    return False
