"""The name a line defines, for passages: ``def py_scanstring(``, ``.. cmdoption:: -W arg``,
``work_mem (integer)``, ``-k``. Pure.

A line defines a name when it starts with one, after a reST directive (``.. function::``),
keywords of code that introduce one (``def``, ``class``, ...) and list, option and markup
marks, followed by nothing or by what follows a defined name (``(``, ``[``, ``:``, ``=``,
``|``, ...): a definition, a parameter's entry, an option's term, a table row.
``deadlock_timeout.`` ending a sentence defines nothing. (``text/definitions.py`` asks
the narrower question ranking needs: does a text define one identifier a query spells.)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .terms import terms
from .words import held_words, identifier_parts, may_hold, word_groups, word_weights

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["defined_name", "defining_lines"]

#: The name a line starts with, after a reST directive (``.. function::``), keywords of code that
#: introduce one, and list, option and markup marks.
_LEADING_NAME: Final = re.compile(
    r"\s*(?:[-*+]\s+|#+\s+)?((?:\.\.\s+(?:[\w-]+:)?[\w-]+::\s+)?(?:(?:async|def|class|function|func|fn|impl|export|"
    r"default|public|private|protected|static|const|let|var|type|interface|struct|enum|pub|final|abstract|override|"
    r"virtual)\s+)*)[\\`*-]*([\w.-]*\w)(.*)"
)
#: What may follow a name where it is defined.
_AFTER_NAME: Final = "([{<:=|,→"


def defined_name(line: str) -> str | None:
    """The name ``line`` defines (as written, without its marks), or None."""
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
