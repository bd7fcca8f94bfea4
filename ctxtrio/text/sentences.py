"""Sentences of a text, verbatim: the units it falls into and where each sentence ends. Pure.

A text is cut into units (:func:`sentences_of`): paragraphs, list items and headings (markdown's ATX and
setext, AsciiDoc's labeled-list labels), leaving out fenced code, table rows, list and heading markers, and
AsciiDoc's list continuations, attribute and preprocessor lines. A unit is one group of sentences, or one a line
when it is not wrapped prose (a log). A sentence ends at ``.``, ``!`` or ``?`` (with closing quotes or brackets)
followed by whitespace or the end, unless the word is a known abbreviation (``e.g.``, ``Dr.``), a single
initial, or the next word starts in lowercase; and at ``。！？．`` with no space needed (:func:`sentence_ends`,
:func:`last_sentence_end`, which the chunker asks of each piece of a long line). Extracts
(:mod:`.extractive`) and the cutting of long lines (:mod:`.long_lines`) stand on these rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ctxtrio.text.asciidoc import LABEL, PREPROCESSOR
from ctxtrio.text.prose import UNDERLINE

__all__ = ["Sentence", "last_sentence_end", "sentence_ends", "sentences_of", "split_sentences"]

_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING: Final = re.compile(r" {0,3}#{1,6}[ \t]+")
_LIST_ITEM: Final = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
# AsciiDoc (asciidoc-py's user guide, ch17 "Lists", ch28 "Attribute lists"; git's manual): a labeled-list
# label hard against the margin ('--keep-base::', 'core.bare::'; the body follows on the next line), a
# list item continuation ('+' alone: the next paragraph belongs to the same item) and a block attribute or
# anchor line ('[NOTE]', '[verse]', '[[def_commit]]'). A label is its entry's heading; the other two are breaks.
_LABEL: Final = re.compile(LABEL + r"[ \t]*")
_CONTINUATION: Final = re.compile(r"\+[ \t]*")
_ATTRIBUTES: Final = re.compile(r"[ \t]*\[[^\]\n]*\][ \t]*")
_PREPROCESSOR: Final = re.compile(PREPROCESSOR + r"[^\s\[]*\[[^\]\n]*\][ \t]*")
#: Inline markup a wrapped line may start with (`code`, 'quoted', <placeholder>, *strong*, _emphasis_):
#: the letter after it says whether the line goes on a sentence.
_INLINE_OPENERS: Final = "`'\"(<*_"
_CLOSERS: Final = "\"'”’)\\]}」』）》"  # a regex class body: the bracket is escaped
# Either ``[.!?]+`` closers, then whitespace or the end, or ``[。！？．｡]+`` closers. Written as one
# leading class, the branch chosen by the mark it matched, so the regex engine skips to the next
# mark: 4-6 times faster than the two alternatives over a long line (the chunker asks per piece).
_ENDS: Final = re.compile(
    f"[.!?。！？．｡](?:(?<=[.!?])[.!?]*[{_CLOSERS}]*(?=\\s|\\Z)|(?<=[。！？．｡])[。！？．｡]*[{_CLOSERS}]*)"
)
# Characters either side of a sentence end that last_sentence_end's rules see: the word before
# (an abbreviation is short) and the first letter after it.
_RULE_CONTEXT: Final = 64
_ABBREVIATIONS: Final = frozenset(
    "e.g i.e etc vs cf al approx ca fig figs eq no nos vol pp p mr mrs ms dr prof st jr sr "
    "inc ltd co corp dept est jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a text, with where it stands: its group (paragraph, log line) and section."""

    text: str
    group: int  # sentences of one paragraph (or log line) share a group
    heading: bool
    section: int = 0  # headings seen before it (a heading opens its own section)
    lead: bool = False  # the first sentence after a heading


def split_sentences(text: str) -> list[str]:
    """Return the sentences of ``text`` in order, each a verbatim substring, stripped.

    A sentence ends at ``.``, ``!`` or ``?`` (with closing quotes or brackets) followed
    by whitespace or the end, unless the word is a known abbreviation (``e.g.``,
    ``Dr.``), a single initial, or the next word starts in lowercase; and at
    ``。！？．`` with no space needed. Blank lines, headings and list items are breaks
    too, and so is every line break of a paragraph that is not wrapped prose (a log).
    List markers, heading markers, setext underlines, table rows and fenced code are
    left out. AsciiDoc's labeled-list labels ('--keep-base::' over its body) are headings;
    its list continuations ('+'), attribute lines ('[NOTE]') and preprocessor lines are breaks.
    """
    return [sentence.text for sentence in sentences_of(text)]


def sentences_of(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order (:func:`split_sentences`), each with its group and section, and whether it
    is a heading or the first sentence after one."""
    out: list[Sentence] = []
    group = section = 0
    lead_open = False
    for unit, heading in _units(text):
        if heading:
            section += 1
        for sentences in _split_unit(unit):
            group += 1
            for sentence in sentences:
                if any(char.isalnum() for char in sentence):
                    lead = lead_open and not heading
                    out.append(Sentence(sentence, group, heading, section, lead))
                    lead_open = heading or (lead_open and not lead)
    return out


_LINE: Final = re.compile(r"[^\n]*\n?")


def _units(text: str) -> list[tuple[str, bool]]:
    """Split ``text`` into (text, is_heading) units: paragraphs, list items, headings.

    Units are stripped slices of ``text``, so everything cut from them is verbatim.
    """
    units: list[tuple[str, bool]] = []
    start = -1  # start of the open paragraph or list item, -1 when none
    end = 0  # end of its last line
    lines_open = 0
    fence = ""

    for match in _LINE.finditer(text):
        line_start, line_end = match.span()
        line = match.group().rstrip("\r\n")
        if line_start == len(text):
            break
        if fence:
            fence = _still_fenced(line, fence)
            continue
        if (opening := _FENCE.match(line)) is not None:
            start, lines_open = _close(units, text, start, end)
            fence = opening.group(1)
        elif not line.strip() or line.lstrip().startswith("|") or _is_break(line):  # blank, a table row
            start, lines_open = _close(units, text, start, end)
        elif (
            line.rstrip().endswith(("::", ";;")) and (label := _LABEL.fullmatch(line)) and _body_follows(text, line_end)
        ):
            start, lines_open = _close(units, text, start, end)
            units.append((label.group("label").strip(), True))
        elif (heading := _HEADING.match(line)) is not None:
            start, lines_open = _close(units, text, start, end)
            units.append((line[heading.end() :].strip().rstrip("#").strip(), True))
        elif UNDERLINE.fullmatch(line) is not None:
            if lines_open == 1:  # a setext heading: the line above is its text
                units.append((text[start:end].strip(), True))
                start = -1
            start, lines_open = _close(units, text, start, end)
        else:
            if (item := _LIST_ITEM.match(line)) is not None:
                start, lines_open = _close(units, text, start, end)
                start = line_start + item.end()
            elif start < 0:
                start = line_start
            end = line_end
            lines_open += 1
    _close(units, text, start, end)
    return [(unit, heading) for unit, heading in units if unit]


def _is_break(line: str) -> bool:
    """An AsciiDoc list continuation ('+'), block attribute line ('[NOTE]') or preprocessor line
    ('endif::git-pull[]'): it ends a paragraph and says nothing."""
    return any(pattern.fullmatch(line) is not None for pattern in (_CONTINUATION, _ATTRIBUTES, _PREPROCESSOR))


def _body_follows(text: str, line_end: int) -> bool:
    """Whether a line goes on at ``line_end`` (an AsciiDoc label's body does; after reST's
    'paragraph::' a blank line comes first)."""
    stop = text.find("\n", line_end)
    return bool(text[line_end : stop if stop >= 0 else len(text)].strip())


def _close(units: list[tuple[str, bool]], text: str, start: int, end: int) -> tuple[int, int]:
    """Close the open paragraph or list item (``start`` < 0: none) into ``units``; no unit is open after."""
    if start >= 0:
        units.append((text[start:end].strip(), False))
    return -1, 0


def _still_fenced(line: str, fence: str) -> str:
    """The fence still open after ``line`` inside it: "" once ``line`` closes it."""
    stripped = line.strip()
    return "" if stripped.startswith(fence) and not stripped.strip(fence[0]) else fence


def _split_unit(unit: str) -> list[list[str]]:
    """Split a unit into groups of sentences: one group, or one per line if line-oriented.

    A unit is line-oriented (a log, a CJK paragraph per line, a list without markers)
    when fewer than half of its continuation lines start with a lowercase letter, the
    mark of wrapped prose.
    """
    lines = unit.split("\n")
    if len(lines) > 1:
        wrapped = sum(1 for line in lines[1:] if line.lstrip().lstrip(_INLINE_OPENERS)[:1].islower())
        if wrapped * 2 < len(lines) - 1:
            return [_split_text(line) for line in lines]
    return [_split_text(unit)]


def sentence_ends(line: str) -> list[int]:
    """Where each sentence of ``line`` but its last ends (just past its ``.!?`` and closers), by the
    rules of :func:`split_sentences` (not after ``e.g.``, an initial, or before a lowercase word)."""
    return [
        match.end()
        for match in _ENDS.finditer(line)
        if match.end() < len(line)
        and (match.group()[0] not in ".!?" or _ends_sentence(line, match.start(), match.end()))
    ]


def last_sentence_end(text: str, start: int, stop: int) -> int:
    """Where the last sentence ending inside ``text[start:stop]`` ends (as :func:`sentence_ends`
    gives it), or -1. A ``.!?`` at the window's end counts only when whitespace follows it in
    ``text``: ``os.`` cut off from ``path`` is no end. The rules see a few dozen characters around each end, not the whole text,
    so a chunker can ask for each piece of a long line without copying the rest of it."""
    for match in reversed(list(_ENDS.finditer(text, start, stop))):
        stop_at, after = match.start(), match.end()
        if match.group()[0] not in ".!?":
            return after  # 。！？: no space follows in Chinese and Japanese
        if after >= stop and not (stop < len(text) and text[stop].isspace()):
            continue  # the lookahead saw the end of the window, not whitespace
        low = max(0, stop_at - _RULE_CONTEXT)
        if _ends_sentence(text[low : after + _RULE_CONTEXT], stop_at - low, after - low):
            return after
    return -1


def _split_text(unit: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _ENDS.finditer(unit):
        end = match.end()
        if match.group()[0] in ".!?" and not _ends_sentence(unit, match.start(), end):
            continue
        sentences.append(unit[start:end].strip())
        start = end
    sentences.append(unit[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _ends_sentence(unit: str, stop: int, after: int) -> bool:
    """Decide whether the ``.!?`` at ``unit[stop]`` ends a sentence."""
    rest = unit[after:].lstrip()
    if not rest:
        return True
    if unit[stop] == "." and rest[0].islower():
        return False  # "e.g. the", "approx. five"
    word_start = stop
    while word_start > 0 and (unit[word_start - 1].isalnum() or unit[word_start - 1] == "."):
        word_start -= 1
    word = unit[word_start:stop].lower()
    if unit[stop] == "." and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
        return False  # "Dr. Smith", "J. Smith", "e.g. Foo"
    return True
