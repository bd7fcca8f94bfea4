"""The passage of a text that answers a query: whole lines, densest in the query's terms. Pure.

A search hit or a recalled entry is often larger than the share of the budget it can
have. Rather than its first lines, the reader gets the window of whole lines that holds
the most of the query: :func:`best_passage` scores every run of lines that fits the
room by

* the distinct words of the query it holds (each once, whatever its count; an
  identifier and its parts, ``pg_hba`` giving ``pghba``, ``pg``, ``hba``, are one word;
  a word held only on lines of code or a program's output counts half, and such lines
  add no proximity: an example repeats the name asked for, the prose says what it does,
  :func:`~.literal.literal_lines`),
* proximity: the most words any one of its lines holds, and words that stand next to
  each other in the text as they do in the query (a phrase; given the query as asked, also
  a phrase in prose that takes in a word its headings hold, ``VACUUM FULL`` on the VACUUM
  page: :mod:`.phrases`),
* a definition: a line that starts with a name the query asks for, followed by what
  follows a defined name (``def py_scanstring(``, ``work_mem (integer)``, ``-k``); a
  name that holds the query's word only as a part (``insort_left`` for ``insort``)
  counts half (:func:`~.naming.defined_share`),

takes the best-scoring run that comes first (then the shortest; weighed by rarity, a run
starts and ends on a line holding a word not far more common than the rarest, so a common
word alone cannot stretch it; under the text's own section, not past a heading inside it
that lacks its trail's words: :mod:`.sections`), gives it the rest of
the sentences it cuts and grows it by whole lines, two after for each one before (an
answer tends to follow the words that name it), while they fit (:mod:`.edges`), but not
above the start of the entry it lies in (an API directive, a heading:
:func:`~.sections.entry_start`; the lines above are another entry's), from the head of a paragraph it
would start inside when a line of that head holds a query word, else past the paragraph's tail when that is code
(:func:`~.edges.paragraph_head`); a large
window weighed by rarity also shows, after a cut mark, the sentence of a line past it that
holds the query's rarest word, or else, above it, the line that defines that word, or starts
the API entry the window lies in, with the sentence after it. HTML comment blocks, reST index
entries and link targets are no part of the text shown: a cut mark stands for them. Terms come from :func:`~ctxtrio.text.terms.terms`, the same
function the index and the query use; for ranking (:func:`passage_score`,
:func:`~.headings.heading_share`) words that differ only by an inflection match
(:func:`~ctxtrio.text.stems.light_stem`: ``raised`` holds ``raise``), while the window
shown looks for the words as written. Deterministic; nothing here knows tokens beyond
``model.estimate``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from .cutting import CUT_MARK, cut_around
from .edges import (
    FAR_MARK_COST,
    FAR_ROOM,
    HIDDEN_COST,
    far_sentence,
    finish_sentences,
    grow,
    hidden_lines,
    lead_sentence,
    paragraph_head,
    rarest_lines,
)
from .literal import literal_lines
from .markup import API_ENTRY
from .naming import defined_share, defining_lines
from .phrases import asked_phrases, phrase_pairs
from .runs import ALIKE_SHARE, ANCHOR_WEIGHT, Line, best_run, run_score
from .sections import away_lines, entry_start, entry_starts
from .shown import Passage, marked_text, passage_of
from .stems import light_stem
from .words import (
    Alike,
    alike_weights,
    alike_words,
    held_alike,
    held_words,
    identifier_parts,
    line_terms,
    word_groups,
    word_weights,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from collections.abc import Set as AbstractSet

    from .tokens import TokenModel

#: Of a small window (under :data:`~.edges.FAR_ROOM` tokens), the share an API entry's directive and
#: first sentence may take above it (:func:`_entry_head`). Keyword dev sets (14, 799 questions), answers
#: inside 500 / 1,000 / 2,000: 0.5 +0 / +0 / +0, 0.6 +0 / +2 / -1, 0.75 +2 / +4 / -1, 0.9 +1 / +4 / -1
#: (before the directive's block was skipped: the -1s).
_HEAD_SHARE: Final = 0.75

__all__ = [
    "Passage",
    "best_passage",
    "cut_to_passage",
    "marked_text",
    "passage_score",
]


def cut_to_passage(text: str, query_terms: Sequence[str], budget_tokens: int, model: TokenModel) -> str:
    """``text`` whole when it fits, else its best passage (:func:`best_passage`), marked; when
    the best line alone is too long, the characters around the match
    (:func:`~ctxtrio.text.cutting.cut_around`); without a match, the prefix that fits."""
    if model.estimate(text) <= budget_tokens:
        return text
    if query_terms:
        lines = _lines(text, tuple(query_terms), model.estimate(text) / max(1, len(text)), stem=False)
        if any(line.found for line in lines):
            passage = best_passage(text, query_terms, budget_tokens, model)
            if passage is not None:
                return marked_text(text, passage)
    return cut_around(text, query_terms, budget_tokens, model)


def best_passage(
    text: str,
    query_terms: Sequence[str],
    budget_tokens: int,
    model: TokenModel,
    tokens_per_char: float | None = None,
    *,
    rarity: Mapping[str, float] | None = None,
    named: Sequence[str] = (),
    trail: Sequence[str] = (),
    alike: Alike = (),
) -> Passage | None:
    """The best window of whole lines of ``text`` within ``budget_tokens`` (cut marks counted).

    None when not even the best single line fits (the caller cuts by characters then).
    Without any query term in ``text`` the window starts at the first line. Lines are
    sized at ``tokens_per_char`` (default: the text's average); the chosen window is
    then estimated as a whole, and lines grown around the core are dropped again while
    it is over. With ``rarity`` (:func:`~.words.rarity_weights`) a word of the query counts by how
    rare it is, not as one: the window settles on the name asked for, not on a common word;
    and a window of :data:`~.edges.FAR_ROOM` tokens or more shows apart the sentence of the
    first line past it holding the rarest word (:func:`~.edges.far_sentence`), or else, before a
    cut mark, the line above it that defines the rarest word of ``named`` (the query's terms with
    those its headings hold, which ``query_terms`` may leave out) and the sentence after that line
    (:func:`~.edges.lead_sentence`). ``named`` also gives phrases that take in a word the headings
    hold, in prose (:func:`~.phrases.asked_phrases`; with ``rarity``, not of a word far more common
    than the rarest). With ``trail`` (the text's heading trail), the window starts above a heading
    inside the text that lacks a word the trail holds, if a line there holds a query word
    (:func:`~.sections.away_lines`); it may still grow past it. ``alike``: the documentation's words
    the search also looked for, by the query term each stands for; a line holding one holds that
    word at :data:`~.runs.ALIKE_SHARE` of its weight.
    """
    rate = tokens_per_char if tokens_per_char is not None else model.estimate(text) / max(1, len(text))
    common = frozenset(term for term in named if rarity and rarity.get(term, 1.0) < ANCHOR_WEIGHT)  # "the same value"
    lines = _lines(text, tuple(query_terms), rate, stem=False, named=tuple(named), common=common, alike=alike)
    room = budget_tokens - 2 * model.estimate(CUT_MARK + " ")
    weights = word_weights(query_terms, rarity) if rarity else None
    liked = alike_weights(alike, query_terms, rarity, ALIKE_SHARE) if rarity and alike else None
    away = away_lines(text, query_terms, named, trail) if trail and named else frozenset()
    home = tuple(
        replace(line, found=_NONE, phrases=_NO_PHRASES, defines=0.0, alike=_NONE) if n in away else line
        for n, line in enumerate(lines)
    )
    starts = entry_starts(text)
    candidates = home if any(line.found or line.alike for line in home) else lines
    core_first, core_last = best_run(candidates, room, weights=weights, starts=starts, alike_weights=liked)
    if core_first < 0:
        return None
    costs = [line.cost for line in lines]
    raws, hidden = text.split("\n"), [line.hidden for line in lines]
    core_first, core_last = finish_sentences(raws, costs, hidden, core_first, core_last, room)
    far = None
    if weights is not None:
        core = (core_first, core_last)
        far = far_sentence(raws, costs, hidden, rarest_lines([line.found for line in lines], weights), core, room)
    far_cost = 0 if far is None else sum(costs[far[0] : far[1] + 1]) + FAR_MARK_COST
    top = entry_start(starts, core_first)  # the window grows into no entry above its own
    first, last = grow(costs[top:], core_first - top, core_last - top, room - far_cost)
    asked = ([bool(line.found) for line in lines], literal_lines(text))
    window, core = (first + top, last + top), (core_first, core_last)
    first, last = paragraph_head(raws, costs, hidden, asked, window, core, top, room - far_cost)
    if rarity and far is None and named:  # the definition of the rarest word, or the entry's head, above the window
        at = (top, core_first, core_last, first)
        led = _above(
            text, lines, (raws, costs, hidden), candidates, starts, at, room, (rarity, named), (weights, liked)
        )
        if led is not None and model.estimate(marked_text(text, led)) <= budget_tokens:
            return led
    while True:
        passage = passage_of(text, lines, first, last, far)
        over = model.estimate(marked_text(text, passage)) - budget_tokens
        if over <= 0:
            return passage
        while over > 0:  # drop grown lines (the last ones added first), the far sentence, else the core's ends
            if last > core_last:
                over, last = over - lines[last].cost, last - 1
            elif first < core_first:
                over, first = over - lines[first].cost, first + 1
            elif far is not None:
                over, far = over - far_cost, None
            elif last > first:
                over, last = over - lines[last].cost, last - 1
            else:
                return None


def _above(
    text: str,
    lines: Sequence[Line],
    rows: tuple[Sequence[str], Sequence[int], Sequence[bool]],
    candidates: Sequence[Line],
    starts: AbstractSet[int],
    at: tuple[int, int, int, int],
    room: int,
    asked: tuple[Mapping[str, float], Sequence[str]],
    weighed: tuple[Sequence[float] | None, Sequence[float] | None],
) -> Passage | None:
    """The window with what it lies under shown above it, or None: in ``room`` of :data:`~.edges.FAR_ROOM`
    or more, the line above defining the rarest word of the query (``asked``: rarity, terms as asked)
    or else the API directive starting its entry, and the sentence after it, in a quarter of
    ``room``; in less, the entry's head only (:func:`_entry_head`). ``rows``: the text's lines,
    their costs and whether each is hidden; ``at``: the entry's start, the core's first and last
    lines and the grown window's first line."""
    top, core_first, core_last, first = at
    if room < FAR_ROOM:
        return _entry_head(text, lines, rows, candidates, starts, (top, core_first, first), room, *weighed)
    raws = rows[0]
    defining = defining_lines(raws, asked[1], asked[0], first) or _entry_line(raws, starts, top, first)
    lead = lead_sentence(*rows, defining, core_first, room // 4)
    return None if lead is None else _led(text, lines, lead, core_first, core_last, room)


def _entry_head(
    text: str,
    lines: Sequence[Line],
    rows: tuple[Sequence[str], Sequence[int], Sequence[bool]],
    candidates: Sequence[Line],
    starts: AbstractSet[int],
    at: tuple[int, int, int],
    room: int,
    weights: Sequence[float] | None,
    liked: Sequence[float] | None,
) -> Passage | None:
    """In a window of under :data:`~.edges.FAR_ROOM` tokens (a search's third and fourth hits at
    1,000 tokens get 60-190) whose core lies deep in an API entry, the entry's directive and first
    sentence (:func:`~.edges.lead_sentence`, at most :data:`_HEAD_SHARE` of ``room``), a cut mark,
    and the best run of ``candidates`` below them in the same entry, in what they leave; None when
    the window grown as usual (from ``at``'s entry start ``top``, core start and first line) shows
    that sentence already, or no line below it holds a query word. Such a window sat on an entry's
    example or notes ('running minimum' in ``accumulate``'s equivalent code) while the sentence
    that says what the entry does, "Make an iterator that returns accumulated sums", was above it. The
    sentence may end right above the core: a small window filled by the lines about the query's words under
    ``copyfileobj``'s first sentence, "Copy the contents of the file-like object *fsrc* to the file-like object
    *fdst*." (the answer), could neither grow up to it nor, with no line between, show it apart."""
    top, core_first, shown_first = at
    raws, costs, hidden = rows
    entry = _entry_line(raws, starts, top, core_first)
    lead = lead_sentence(raws, costs, hidden, entry, core_first, room * _HEAD_SHARE - FAR_MARK_COST, touching=True)
    if lead is None or shown_first <= lead[1]:
        return None
    below = lead[1] + _below(lead, core_first)
    rest = candidates[below:]
    if not any(line.found or line.alike for line in rest):
        return None
    room_left = room - sum(costs[lead[0] : lead[1] + 1]) - FAR_MARK_COST
    inside = frozenset(n - below for n in starts if n >= below)
    first, last = best_run(rest, room_left, weights=weights, starts=inside, alike_weights=liked)
    if first < 0 or entry_start(starts, first + below) != top:
        return None
    return _led(text, lines, lead, first + below, last + below, room)


def _entry_line(raws: Sequence[str], starts: AbstractSet[int], top: int, first: int) -> list[int]:
    """``[top]`` when it is the line of an API directive (:data:`~.markup.API_ENTRY`) above the window's
    ``first`` line, else none: the window lies in that entry, and its first sentence says what the
    entry's name is (``.. data:: Callable`` / "Callable type; ``Callable[[int], str]`` is a function of
    (int) -> str.", 200 tokens above the lines about callbacks a window settled on)."""
    return [top] if top in starts and top < first and API_ENTRY.match(raws[top]) else []


def _below(lead: tuple[int, int], core_first: int) -> int:
    """Lines from ``lead``'s last to the first a window under it may start on: the core's next one when the lead
    ends right above it (an entry's first sentence, then the lines about the query's words), else two (a line at
    least between the two, left out under a cut mark)."""
    return 1 if lead[1] + 1 == core_first else 2


def _led(
    text: str, lines: Sequence[Line], lead: tuple[int, int], core_first: int, core_last: int, room: int
) -> Passage:
    """The window grown from the core below ``lead`` in what the lead leaves of ``room``, with the
    lines ``lead`` shown above it, and a cut mark for the lines between when they hold text."""
    below = lead[1] + _below(lead, core_first)
    costs = [line.cost for line in lines[below:]]
    lead_cost = sum(line.cost for line in lines[lead[0] : lead[1] + 1]) + FAR_MARK_COST
    first, last = grow(costs, core_first - below, core_last - below, room - lead_cost)
    window = passage_of(text, lines, first + below, last + below)
    top = window.first_line - 1
    between = range(lead[1] + 1, top)
    shown = [not lines[n].hidden and text[lines[n].start : lines[n].end].strip() for n in range(len(lines))]
    gap = ((lines[between[0]].start, lines[between[-1]].end),) if any(shown[n] for n in between) else ()
    inside = passage_of(text, lines, lead[0], lead[1]).hidden  # an entry's index lines, under its directive
    return Passage(
        lines[lead[0]].start, window.end, lead[0] + 1, window.last_line, window.lines,
        cut_before=any(shown[: lead[0]]), cut_after=window.cut_after, hidden=inside + gap + window.hidden,
        cut_inside=bool(gap) or window.cut_inside,
    )  # fmt: skip


def passage_score(
    text: str, query_terms: Sequence[str], budget_tokens: int, tokens_per_char: float, alike: Alike = ()
) -> float:
    """The score of the best window of ``text`` within ``budget_tokens`` (0 without a query term in it):
    what :func:`best_passage` maximizes, for ranking texts by their best passage. Lines are
    sized at ``tokens_per_char`` (a ranking needs no exact size). ``alike`` as for :func:`best_passage`."""
    lines = _lines(text, tuple(query_terms), tokens_per_char, stem=True, alike=alike)
    first, last = best_run(lines, budget_tokens, long_lines=True)
    if first < 0 or not (lines[first].found or lines[first].alike):
        return 0.0
    return run_score(lines, first, last)


@functools.lru_cache(maxsize=64)
def _lines(
    text: str,
    query_terms: tuple[str, ...],
    tokens_per_char: float,
    *,
    stem: bool,
    named: tuple[str, ...] = (),
    common: frozenset[str] = frozenset(),
    alike: Alike = (),
) -> tuple[Line, ...]:
    """Each line of ``text``: where it is, its size, the query's words it holds (and, for the window,
    the phrases of the query as asked, ``named``, less its ``common`` terms; the words it holds only
    by one of their ``alike`` words, outside code). Cached: a search
    scores its candidates for ranking, then packs the best of them (same arguments)."""
    group = word_groups(query_terms, stem=stem)
    parts = identifier_parts(group)
    words = max(group.values(), default=-1) + 1
    raws = text.split("\n")
    likes = alike_words(alike, group, stem=stem) if alike else {}
    wanted = frozenset(map(light_stem, query_terms)).union(likes)
    per_line = line_terms(text, wanted)  # unstemmed, shared by both kinds
    if stem:
        per_line = [list(map(light_stem, line)) for line in per_line]
    hidden = frozenset() if stem else hidden_lines(raws)
    code = frozenset() if stem else literal_lines(text)
    found_of = [held_words(of_line, group, parts) if of_line else _NONE for of_line in per_line]
    also = asked_phrases(raws, per_line, found_of, group, named, common, code) if named and not stem else {}
    out: list[Line] = []
    start = 0
    for number, (raw, of_line) in enumerate(zip(raws, per_line, strict=True)):
        end = start + len(raw)
        if number in hidden:
            out.append(Line(start, end, HIDDEN_COST, _NONE, _NO_PHRASES, 0.0, hidden=True))
            start = end + 1
            continue
        cost = math.ceil((len(raw) + 1) * tokens_per_char)
        found = found_of[number]
        liked = held_alike(of_line, likes, stemmed=stem) - found if likes and of_line and number not in code else _NONE
        phrases = phrase_pairs(of_line, group, found) | also.get(number, _NO_PHRASES) if found else _NO_PHRASES
        if found:
            defines = defined_share(raw, group, parts, words, stem=stem)
            line = Line(
                start, end, cost, frozenset(found), frozenset(phrases), defines, code=number in code, alike=liked
            )
            out.append(line)
        else:
            out.append(Line(start, end, cost, _NONE, _NO_PHRASES, 0.0, alike=liked))
        start = end + 1
    return tuple(out)


_NONE: Final[frozenset[int]] = frozenset()
_NO_PHRASES: Final[frozenset[tuple[int, int]]] = frozenset()
