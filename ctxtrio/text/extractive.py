"""Extractive summaries: verbatim sentences chosen by TF-ISF, when no LLM can summarize.

Sentences are found by :func:`split_sentences`; each is scored by the summed inverse
sentence frequency of its distinct terms (:func:`ctxtrio.text.terms.terms`, so CJK
bigrams count) divided by the square root of their number, with a small boost for
the first three and a larger one for the first sentence of each section (the one
after a heading: documents say what a section is about first); headings and
sentences of fewer than three terms come last. The best are taken greedily until the
token target is reached (repeats skipped), each with the heading of its section when
both fit, so the extract shows where its sentences come from. All is printed in document order, sentences of one paragraph joined by a
space, others by a newline. Every sentence in a summary occurs verbatim in the input
(one cut to fit is a verbatim prefix), but for reST: its explicit markup is passed over, and an API entry's
first sentence is prefixed with its bare signature (:mod:`ctxtrio.text.prose`). Everything is deterministic.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ctxtrio.text.asciidoc import LABEL, PREPROCESSOR
from ctxtrio.text.prose import UNDERLINE, without_markup
from ctxtrio.text.terms import terms

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctxtrio.text.tokens import TokenModel

__all__ = ["first_sentence", "last_sentence_end", "sentence_ends", "split_sentences", "summarize_extractive"]

_LEAD_BOOST: Final = (1.15, 1.10, 1.05)  # multipliers for the first three sentences
_SECTION_LEAD_BOOST: Final = 1.5  # the first sentence after a heading
_MIN_TERMS: Final = 3  # headings and shorter sentences are chosen only as a last resort

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
_LEADING_CODE: Final = re.compile(r"(?:[ \t]*\r?\n| {4,}[^\n]*\n)+")
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
class _Sentence:
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
    return [sentence.text for sentence in _sentences(text)]


def summarize_extractive(text: str, *, target_tokens: int, model: TokenModel) -> str:
    """Return a verbatim extract of ``text`` within ``target_tokens`` (``text`` if it fits).

    At least the best sentence is returned, cut to fit when even it is too long.
    ``target_tokens`` must be at least 1.
    """
    if target_tokens < 1:
        raise ValueError(f"target_tokens must be >= 1, got {target_tokens}")
    if model.estimate(text) <= target_tokens:
        return text
    # reST markup ('.. function:: dump(obj, fp, *, \' and its continued lines, '.. versionchanged:: 3.11')
    # scored as rare-word sentences and took a quarter of a 300-token json.rst.txt summary; the outline's
    # one-liners pass over it already (first_sentence). Markup alone is still summarized.
    # Titles underlined by = or - stay: they are the sections' headings the extract shows its sentences under.
    # An API entry's signature goes on, bare, in front of its first line of prose ('dump(obj, fp, *, ...):
    # Serialize ...'): without it a summary of an API page no longer said which function a sentence is of.
    sentences = _sentences(without_markup(text, headings=True, signatures=True)) or _sentences(text)
    if not sentences:
        return _fit(text.strip(), target_tokens, model)
    ranked, regular = _rank(sentences)
    heading_at = {s.section: i for i, s in enumerate(sentences) if s.heading}
    chosen: list[int] = []
    seen: set[str] = set()
    used = 0
    for rank, index in enumerate(ranked):
        sentence = sentences[index].text
        if sentence in seen or (rank >= regular and chosen):
            continue  # a repeat says nothing new; a last resort is not filler
        cost = model.estimate(sentence) + (1 if chosen else 0)  # + separator
        heading = heading_at.get(sentences[index].section, index)
        with_heading = [] if heading == index or heading in chosen else [heading]
        extra = sum(model.estimate(sentences[i].text) + 1 for i in with_heading)
        if used + cost + extra <= target_tokens:  # a sentence comes with its section's heading
            chosen.extend([index, *with_heading])
            seen.add(sentence)
            used += cost + extra
        elif used + cost <= target_tokens:
            chosen.append(index)
            seen.add(sentence)
            used += cost
        if used >= target_tokens - 1:
            break  # nothing but an empty sentence could follow
    if not chosen:
        return _fit(sentences[ranked[0]].text, target_tokens, model)
    return _join([sentences[index] for index in sorted(chosen)])


def first_sentence(text: str, *, max_tokens: int, model: TokenModel, past_code: bool = False) -> str:
    """Return the first non-heading sentence of ``text`` cut to ``max_tokens`` ("" if none).

    reST explicit markup (``.. note::``, ``.. versionchanged:: 3.6``) and, with ``past_code`` (a
    document of prose: the code a chunk of source code opens with is its content), code the text
    opens with (indented by four spaces or more) are taken only when no prose follows; then the
    first heading when the text has nothing else. Meant for one-line
    outline summaries. ``max_tokens`` must be at least 1.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    # An outline line of '.. note::' or '.. versionchanged:: 3.6' says nothing of its chunk: reST's
    # explicit markup (directives, comments, link targets) is passed over while prose follows.
    sentences: list[_Sentence] = []
    for source in _readings(text, past_code):
        sentences = _sentences(source)
        body = [sentence for sentence in sentences if not sentence.heading]
        if body:
            return _fit(_one_line(body[0].text), max_tokens, model)
    # The loop's last pass split ``text`` itself: its first sentence is a heading, or there is none.
    return _fit(_one_line(sentences[0].text), max_tokens, model) if sentences else ""


def _one_line(sentence: str) -> str:
    """``sentence`` on one line: a sentence of wrapped prose keeps its line breaks, and an outline line
    (``#1 [561] DESCRIPTION: As an example, ... broke a`` then ``feature that ...``) spread over several."""
    return " ".join(sentence.split())


def _readings(text: str, past_code: bool) -> Iterator[str]:
    """What :func:`first_sentence` reads in turn, while none before had a sentence but headings: ``text``
    (past the code it opens with, with ``past_code``) without markup; all of it without markup (only when
    code was passed over: else the same again); itself. Lazily: most lines come from the first."""
    opened = _past_leading_code(text) if past_code else text
    yield without_markup(opened)
    if opened != text:
        yield without_markup(text)
    yield text


def _past_leading_code(text: str) -> str:
    """``text`` past the lines indented by four spaces or more it starts with (blank ones among them), when
    something follows them. A chunk cut inside a long example starts with its code, indented as reST's and
    Markdown's code blocks are, and no '::' or fence before it says so (pytest's fixtures.rst: its outline
    line was '# Assert assert all(fruit.cubed ...)'). Tab-indented lines stay: they are AsciiDoc's entry bodies."""
    found = _LEADING_CODE.match(text)
    if found is None or not found.group().strip() or not text[found.end() :].strip():
        return text
    return text[found.end() :]


def _sentences(text: str) -> list[_Sentence]:
    out: list[_Sentence] = []
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
                    out.append(_Sentence(sentence, group, heading, section, lead))
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


def _rank(sentences: list[_Sentence]) -> tuple[list[int], int]:
    """Return sentence indices, best first (ties: earlier first), and how many are regular.

    Regular sentences have at least ``_MIN_TERMS`` terms and are not headings; the
    others follow them, as a last resort.
    """
    bags = [set(terms(sentence.text)) for sentence in sentences]
    frequency: dict[str, int] = {}
    for bag in bags:
        for term in bag:
            frequency[term] = frequency.get(term, 0) + 1
    count = len(sentences)
    keys: list[tuple[bool, float, int]] = []
    for index, bag in enumerate(bags):
        # fsum: correctly rounded whatever the set's order (the hash seed's), so sentences that score alike tie.
        score = math.fsum(math.log(1.0 + count / frequency[term]) for term in bag)
        score /= math.sqrt(len(bag)) if bag else 1.0
        if index < len(_LEAD_BOOST):
            score *= _LEAD_BOOST[index]
        if sentences[index].lead:
            score *= _SECTION_LEAD_BOOST
        last_resort = len(bag) < _MIN_TERMS or sentences[index].heading
        keys.append((last_resort, -score, index))
    keys.sort()
    regular = sum(1 for last_resort, _, _ in keys if not last_resort)
    return [index for _, _, index in keys], regular


def _join(sentences: list[_Sentence]) -> str:
    parts: list[str] = []
    for previous, sentence in zip([None, *sentences], sentences):
        if previous is not None:
            parts.append(" " if previous.group == sentence.group else "\n")
        parts.append(sentence.text)
    return "".join(parts)


def _fit(text: str, max_tokens: int, model: TokenModel) -> str:
    """Return the longest prefix of ``text`` within ``max_tokens``, ended at a word if near."""
    low = model.fitting_prefix(text, max_tokens)
    if low == len(text):
        return text
    while low > 1 and unicodedata.combining(text[low]):
        low -= 1
    space = text.rfind(" ", 0, low + 1)
    if space > low * 0.7:
        low = space
    return text[:low].rstrip() or text[: max(low, 1)]
