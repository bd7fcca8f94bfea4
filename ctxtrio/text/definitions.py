"""Does a text define the identifier a query spells? (``json decode error`` → ``class JSONDecodeError``).

A search for a function or class by its words should bring its definition first, not
the chunks that merely use it most. :func:`spelled_identifier` joins a short query's
words (``py scanstring`` → ``pyscanstring``), the form the index holds for
``py_scanstring`` and ``PyScanString`` alike (an identifier in the query, followed by
its parts among the terms, counts once: ``JSONDecodeError`` stays ``jsondecodeerror``);
:func:`defines` says whether a text holds
a definition of an identifier of that spelling: a ``def``/``class``/``function``/
``func``/``fn``/``struct``/... line, a reST or Sphinx API entry (``.. function:: name``)
or a markdown heading that starts with the name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["defines", "spelled_identifier"]

#: Queries of more words are questions, not names.
_MAX_NAME_TERMS: Final = 4
_DEFINED: Final = re.compile(
    r"(?:\b(?:def|class|function|func|fn|fun|struct|enum|trait|interface|type|record|impl|module|object|protocol)"
    r"[ \t]+(?:\([^)\n]*\)[ \t]*)?(?:[\w$]+\.)?"
    r"|^\.\.[ \t]+(?:\w+:)?(?:class|function|method|attribute|exception|data|decorator|module)::[ \t]+(?:[\w.]+\.)?"
    r"|^#{1,6}[ \t]+`?(?:[\w.]+\.)?)"
    r"([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
_SEPARATORS: Final = str.maketrans("", "", "_$")


def spelled_identifier(query_terms: Sequence[str]) -> str | None:
    """The identifier a query of 1 to 4 words spells, joined; None for longer queries."""
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
    if not 1 <= len(words) <= _MAX_NAME_TERMS:
        return None
    return "".join(words)


def defines(text: str, identifier: str) -> bool:
    """Whether ``text`` defines a name spelled ``identifier`` (case and ``_`` ignored)."""
    if identifier not in text.lower().translate(_SEPARATORS):
        return False  # the common case, without the regex
    return any(match.group(1).lower().translate(_SEPARATORS) == identifier for match in _DEFINED.finditer(text))
