"""Entry leads: what one entry of a reference text is for, in one short embedding input. Pure.

An API reference says what each entry does in the first sentence after its name:
``.. function:: getcwd()`` / "Return a string representing the current working
directory."; a section says it in the first sentence under its title. A question in a
user's words ("which folder is my program running in") is nearest to that sentence
alone; inside a ~130-token part (:func:`~.embedding.text_parts`) it is one voice among
the next entries', and when a search shows the part a chunk matched by (its ``focus``,
``docs/hybrid.py``), a part's window often misses the sentence. So each entry is also
embedded as its lead, and the lead's characters are what a hit found by it shows.

Measured with all-MiniLM-L6-v2 over Debian's python3.11-doc (497 files; the README's
Measured table, "semantic recall with entries' leads", has the command and the other
corpora), answers inside 500 / 1,000 / 2,000 tokens with semantic recall, passages alone
-> passages and leads: the six committed python sets (345 questions) 154/195/218 ->
162/203/227; the held-out python7 set (60) 23/28/31 -> 24/29/35, right file in the top 3
41 -> 45. The leads are added, not swapped for the passages: a chunk still matches by its
best part, and an answer past an entry's first sentence is found by its passage.

:func:`entry_leads` finds, in one chunk's text:

* a reST directive that names an entry (``.. function::``, ``.. method::``, ``..
  class::``, ``.. cmdoption::``, ``.. envvar::``, ... with or without a domain, as
  ``.. c:function::``), with the first sentence of its body;
* a title underlined with a rule (reST, setext) or an ATX title (``## fs.readFile(path)``),
  with the first sentence of the paragraph under it.

Each lead is a :class:`~.embedding.Part` whose characters run from the entry's line to
the end of that sentence (what a search shows for it), its text the heading trail, the
entry's kind and name, and the sentence with reST roles read as their text
(``:func:`open``` -> ``open``). An entry with no sentence under it has no lead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .embedding import Part
from .markup import API_KINDS
from .wordpiece import PART_TOKENS, fitting_start

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ENTRY_KINDS", "entry_leads"]

#: The reST directives that name one entry of a reference: those chunking reads as API entries
#: (:data:`~.markup.API_KINDS`), and those it does not split at but whose first sentence still
#: says what an entry is for (a module's ``:synopsis:``, asyncio's coroutines, pdb's commands).
ENTRY_KINDS: Final = API_KINDS | {"abstractmethod", "coroutinefunction", "coroutinemethod", "module", "pdbcommand"}
_DIRECTIVE: Final = re.compile(r"[ \t]*\.\.[ \t]+(?:[a-z]+:)?([a-z]+)::[ \t]*(\S.*)?$")
_RULE: Final = re.compile(r"[ \t]*([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")
_ATX: Final = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(\S.*?)[ \t#]*$")
_ROLE: Final = re.compile(r":[\w:+-]+:`~?!?([^`<]*?)(?:[ \t]*<[^>`]*>)?`")
_LINK: Final = re.compile(r"\[([^\]]*)\](?:\[[^\]]*\]|\([^)]*\))")
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s|$)")
#: A lead's sentence at most, in characters (a sentence that runs on is cut here).
SENTENCE_CHARS: Final = 320
#: An entry's name and signature at most, in characters.
NAME_CHARS: Final = 160
#: Lines read under an entry's name for its first sentence.
_BODY_LINES: Final = 24


def entry_leads(text: str, trail: Sequence[str] = ()) -> list[Part]:
    """The leads of the entries and titles in ``text`` (see the module docstring), in order."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    lead = " › ".join(step for step in trail if step.split(" ", 1)[0] not in ENTRY_KINDS)
    head = f"{_plain(lead)}\n" if lead else ""
    leads: list[Part] = []
    for number, line in enumerate(lines):
        entry = _entry(lines, number)
        if entry is None:
            continue
        name, body_from, said = entry
        sentence = (_plain(said), starts[body_from] - 1) if said else _first_sentence(lines, body_from, starts)
        if sentence is None:
            continue
        words, end = sentence
        if line.lstrip().startswith("#") and not words.endswith((".", "!", "?")):
            continue  # an ATX title needs a sentence under it: in code, a comment over code has none
        said = fitting_start(f"{head}{name}: {words}", PART_TOKENS)  # a CJK or symbol-laden lead
        leads.append(Part(starts[number] + len(line) - len(line.lstrip()), end, said))
    return leads


def _at(lines: Sequence[str], number: int) -> str:
    return lines[number] if 0 <= number < len(lines) else ""


def _entry(lines: Sequence[str], number: int) -> tuple[str, int, str] | None:
    """What line ``number`` names as an entry or a title ("function getcwd()", "Pure paths"),
    the line its body starts at, and its ``:synopsis:`` if it gives one; None if it names none.

    A directive's further signatures and options run to its first blank line."""
    line = lines[number]
    directive = _DIRECTIVE.fullmatch(line)
    if directive is not None:
        kind, signature = directive.group(1), directive.group(2)
        if kind not in ENTRY_KINDS or not signature:
            return None
        names, synopsis = [signature.strip()], ""
        after = number + 1
        while after < len(lines) and lines[after].strip():
            more = lines[after].strip()
            if more.startswith(":synopsis:"):
                synopsis = more.removeprefix(":synopsis:").strip()
            elif not more.startswith(":"):
                names.append(more)
            after += 1
        name = ", ".join(names).replace("\\, ", " ")[:NAME_CHARS]
        return f"{kind} {name}", after, synopsis
    title = line.strip()
    if not title or _RULE.fullmatch(line):
        return None
    if _RULE.fullmatch(_at(lines, number + 1)) and len(lines[number + 1].strip()) >= len(title) - 2:
        return _plain(title), number + 2, ""
    atx = _ATX.fullmatch(line)
    return (_plain(atx.group(1)), number + 1, "") if atx is not None else None


def _first_sentence(lines: Sequence[str], first: int, starts: Sequence[int]) -> tuple[str, int] | None:
    """The first sentence of the paragraph starting at or after line ``first`` (option
    lines ``:noindex:`` and blank lines skipped), plain, and the character it ends at."""
    taken: list[str] = []
    end = 0
    comment = aside = False
    for number in range(first, min(len(lines), first + _BODY_LINES)):
        stripped = lines[number].strip()
        if not stripped:
            if taken:
                break
            aside = False
            continue
        if aside or (not taken and stripped.startswith(("* ", "- ", ">"))):
            aside = True  # a parameter list or a stability note before the prose (Node's API docs)
            continue
        if _RULE.fullmatch(_at(lines, number + 1)) or stripped.startswith(("|", "+-", "..", "#", "```", ">>>")):
            break  # a title, a table, a directive, a comment or code: no sentence here
        if comment:
            comment = "-->" not in stripped
            continue
        if not taken and stripped.startswith("<!--"):
            comment = "-->" not in stripped  # markdown's metadata (Node's <!-- YAML ... -->)
            continue
        if not taken and (stripped.startswith(":") or _RULE.fullmatch(stripped)):
            continue  # a directive's option, a title's overline
        taken.append(stripped)
        end = starts[number] + len(lines[number])
        said = " ".join(taken)
        found = _SENTENCE_END.search(said)
        if found is not None or len(said) >= SENTENCE_CHARS:
            cut = found.end() if found is not None else SENTENCE_CHARS
            over = len(said) - cut
            return _plain(said[:cut]), end - max(0, over)
    said = " ".join(taken)
    return (_plain(said[:SENTENCE_CHARS]), end) if len(said.split()) >= 3 else None


def _plain(text: str) -> str:
    """``text`` with reST roles read as their text and inline markup marks dropped."""
    text = _LINK.sub(r"\1", _ROLE.sub(r"\1", text))
    return text.replace("`", "").replace("**", "").replace("*", "")
