"""Where a window of whole lines ends, for :mod:`.passages`. Pure.

A window chosen around the query's words (its core) is first given the rest of the
sentences it cuts (:func:`finish_sentences`: wrapped prose whose sentence starts on the
line above the core, or ends on the line below), then grown by whole lines, two after
for each one before (:func:`grow`: an answer tends to follow the words that name it).
Lines no reader of the rendered page sees (:func:`hidden_lines`: HTML comment blocks, Node's
API reference puts a ``<!-- YAML`` change history under every entry; reST's index entries and
link targets) cost almost nothing and are left out of the text shown. A large window may also show, apart,
the sentence of a line past it that holds the query's rarest word (:func:`far_sentence`:
``onerror``'s own paragraph, below a note, under ``.. function:: rmtree(..., onerror=None)``),
or else, above it, the line that defines the rarest word and the sentence after it
(:func:`lead_sentence`: ``.. cmdoption:: -W arg`` and "Warning control.", above a window on
the lines about ``-W`` options). A window grown into the tail of a paragraph above its core starts
where that paragraph does when a line of it names a query word, or else, when the tail is code,
after it (:func:`paragraph_head`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .literal import indent_of
from .markup import API_ENTRY

if TYPE_CHECKING:
    from collections.abc import Sequence
    from collections.abc import Set as AbstractSet

__all__ = [
    "AFTER_PER_BEFORE",
    "FAR_MARK_COST",
    "FAR_ROOM",
    "HIDDEN_COST",
    "far_sentence",
    "finish_sentences",
    "grow",
    "hidden_lines",
    "lead_sentence",
    "paragraph_head",
]

#: Lines added after the window for each line added before it while growing.
AFTER_PER_BEFORE: Final = 2
#: What a hidden line costs in the window shown (a run of them is one cut mark): a ceiling.
HIDDEN_COST: Final = 1
#: Lines at most added at either end of the core to finish a sentence it cuts.
_SENTENCE_LINES: Final = 3
#: A line that ends a sentence (or a clause that introduces what follows: ``:``).
_SENTENCE_END: Final = re.compile(r"[.!?:;][\"')\]`*_”’]*\s*$")
#: Tokens a window has at least to show a far sentence apart (:func:`far_sentence`): at 1,000
#: tokens the first two hits of a search, at 500 the first.
FAR_ROOM: Final = 200
#: What a cut mark on a line of its own costs at most, in tokens (``[...]`` and its line break).
FAR_MARK_COST: Final = 3
#: A far sentence (:func:`far_sentence`) is finished in this part of the room when it can be whole
#: there, else in a quarter: showing half of it saves little (the answer "place an ``*`` in the
#: arguments list" is the line after the first of the sentence "To mark parameters as
#: *keyword-only*, indicating the parameters must be passed by keyword argument, ...").
_WHOLE_SHARE: Final = 3
#: A word weighing at least this share of the rarest one's weight counts as rarest too (:func:`rarest_lines`).
_RAREST_SHARE: Final = 0.9
#: reST markup no page shows and no reader needs: an ``.. index::`` directive (its entries follow,
#: on its line and the lines indented under it: ``single: directory; creating``), and a link
#: target, a label (``.. _tut-keyword-only:``) or a URL's name (``.. _setuptools: https://...``, the URL
#: perhaps on the indented line below). Python's docs hold 845 and 1,775 + 87 of them: a URL's name
#: holding the word asked for made a window's core of the line (distributing/index). Also the directives
#: Sphinx renders as nothing on the page: the authors of a module, section or code (shown only with
#: show_authors, off by default; 346 lines in Python's docs, two under most module titles), the
#: language of code blocks (highlight), the module the entries below belong to (currentmodule) and a
#: table's LaTeX columns (tabularcolumns).
_RST_UNSHOWN: Final = re.compile(
    r"[ \t]*\.\.[ \t]+(?:index|moduleauthor|sectionauthor|codeauthor|highlight|currentmodule|tabularcolumns)::"
)
_RST_TARGET: Final = re.compile(r"[ \t]*\.\.[ \t]+_(?:[^:`\s][^:`]*|`[^`]+`):(?:[ \t]+\S+)?[ \t]*$")
#: Lines at most a grown window reaches up to start where its paragraph does (:func:`paragraph_head`).
_HEAD_LINES: Final = 8
#: A line that starts a list item: it starts a paragraph though the line above it is not blank.
_ITEM: Final = re.compile(r"\s*(?:[-*+•]|\d+[.)]|#\.)\s")
#: Inline markup a line that goes on with the sentence above it may start with.
_MARKUP_GOES_ON: Final = re.compile(r"\s*(?:[`(\[\"'“]|[*_:]\S)")


def hidden_lines(raws: Sequence[str]) -> frozenset[int]:
    """The lines of HTML comment blocks: from a line that starts with ``<!--`` to the line that
    ends with ``-->`` (both included; a block the text ends inside runs to its end, and the
    lines up to a first ``-->`` that no ``<!--`` opened, when the text starts inside one).
    Markdown and HTML never show them; a comment that shares a line with text stays. Also
    reST's index entries and link targets (:data:`_RST_INDEX`, :data:`_RST_TARGET`): a window
    showed ``.. index:: single: directory; creating`` and ``single: UNC paths; and os.makedirs()``
    above makedirs' first sentence, 40 tokens of a 200-token room."""
    hidden: set[int] = set(_rst_hidden(raws))
    opened: int | None = None
    closed = False
    for number, raw in enumerate(raws):
        line = raw.strip()
        if opened is None and line.startswith("<!--"):
            opened = number
        if line.endswith("-->"):
            if opened is not None:
                hidden.update(range(opened, number + 1))
            elif not closed and "<!--" not in line and number < len(raws) - 1:
                hidden.update(range(number + 1))  # the text starts inside a comment
            opened, closed = None, True
    if opened is not None:
        hidden.update(range(opened, len(raws)))
    return frozenset(hidden)


def _rst_hidden(raws: Sequence[str]) -> list[int]:
    """The lines of reST directives no page shows (:data:`_RST_UNSHOWN`) and link targets
    (:data:`_RST_TARGET`), with the lines indented under them."""
    out: list[int] = []
    number = 0
    while number < len(raws):
        raw = raws[number]
        if _RST_UNSHOWN.match(raw) or _RST_TARGET.match(raw):  # a target's URL may go on indented below it
            indent = indent_of(raw)
            out.append(number)
            while number + 1 < len(raws) and raws[number + 1].strip() and indent_of(raws[number + 1]) > indent:
                number += 1
                out.append(number)
        number += 1
    return out


def finish_sentences(
    raws: Sequence[str], costs: Sequence[int], hidden: Sequence[bool], first: int, last: int, room: int
) -> tuple[int, int]:
    """Lines ``first`` .. ``last`` of ``raws`` with the lines that finish the sentences cut at its
    ends, a line before then one after, at most :data:`_SENTENCE_LINES` each way, while they fit
    ``room`` (in ``costs``): a line before belongs to the window when it does not end a sentence
    and the window's first line goes on with it (a lowercase word or inline markup: wrapped
    prose, not a log's next record); a line after likewise. Blank and hidden lines end everything."""
    used = sum(costs[first : last + 1])

    def joined(n: int) -> bool:  # line n + 1 goes on with the sentence of line n
        raw, following = raws[n], raws[n + 1]
        if hidden[n] or hidden[n + 1] or not raw.strip() or _SENTENCE_END.search(raw):
            return False
        return following.lstrip()[:1].islower() or _MARKUP_GOES_ON.match(following) is not None

    for _ in range(_SENTENCE_LINES):
        grown = False
        before, after = first - 1, last + 1
        if before >= 0 and joined(before) and used + costs[before] <= room:
            used, first, grown = used + costs[before], before, True
        if after < len(raws) and joined(last) and used + costs[after] <= room:
            used, last, grown = used + costs[after], after, True
        if not grown:
            break
    return first, last


def grow(costs: Sequence[int], first: int, last: int, room: int) -> tuple[int, int]:
    """Add whole lines around ``first`` .. ``last`` while they fit ``room``: two after for each one before."""
    used = sum(costs[first : last + 1])
    step = 0
    while True:
        before_turn = step % (AFTER_PER_BEFORE + 1) == AFTER_PER_BEFORE
        grown = False
        for take_before in (before_turn, not before_turn):
            candidate = first - 1 if take_before else last + 1
            if 0 <= candidate < len(costs) and used + costs[candidate] <= room:
                used += costs[candidate]
                if take_before:
                    first = candidate
                else:
                    last = candidate
                grown = True
                break
        if not grown:
            return first, last
        step += 1


def far_sentence(
    raws: Sequence[str],
    costs: Sequence[int],
    hidden: Sequence[bool],
    rarest: Sequence[int],
    core: tuple[int, int],
    room: int,
) -> tuple[int, int] | None:
    """The lines of one sentence past the window grown from ``core``, to show apart (after a cut
    mark), or None: from the first of ``rarest`` (lines holding the query's rarest word, best
    first) that starts a paragraph past the window grown in what a far sentence leaves of
    ``room`` (a quarter less), else from the
    first past the window grown in all of ``room``, with the rest of its sentence
    (:func:`finish_sentences`: all of it when a third of ``room`` holds it, else what a quarter
    holds; "To mark parameters as *keyword-only*, indicating the parameters must be passed" ends
    a line, and the answer, "place an ``*`` in the arguments list", is on the next), when ``room`` is at least
    :data:`FAR_ROOM` and the core leaves room for it. The window then grows in what is left (the
    lines it would have grown last give way). A paragraph's first line names what it is about
    ("If *maxsize* is set to None, the LRU feature is disabled"; "If *onerror* is provided, it
    must be a callable"), a later mention is its detail, and a far sentence taken past the whole
    room's window could leave out, between, the paragraph the window no longer reaches."""
    if room < FAR_ROOM:
        return None
    core_first, core_last = core
    _, last = grow(costs, core_first, core_last, room)
    _, near = grow(costs, core_first, core_last, room - room // 4 - FAR_MARK_COST)
    leading = [line for line in rarest if line > near and line > 0 and not raws[line - 1].strip()]
    used = sum(costs[core_first : core_last + 1]) + FAR_MARK_COST
    for line in (*leading, *(line for line in rarest if line > last)):
        first_of, last_of = finish_sentences(raws, costs, hidden, line, line, room // _WHOLE_SHARE)
        if not _SENTENCE_END.search(raws[last_of]):  # not whole in a third: what a quarter holds
            first_of, last_of = finish_sentences(raws, costs, hidden, line, line, room // 4)
        if used + sum(costs[first_of : last_of + 1]) <= room:
            return first_of, last_of
    return None


def rarest_lines(found: Sequence[AbstractSet[int]], weights: Sequence[float]) -> list[int]:
    """The lines holding one of the query's rarest words (by ``weights``; ``found``: the words each
    line holds) that the text holds, i.e. weighing at least :data:`_RAREST_SHARE` of the rarest's
    weight; those holding the most weight first, then in order."""
    top = max((weights[word] for words in found for word in words), default=0.0)
    if top <= 0:
        return []
    held = {n: sum(weights[word] for word in words) for n, words in enumerate(found) if words}
    rarest = [n for n in held if any(weights[word] >= _RAREST_SHARE * top for word in found[n])]
    return sorted(rarest, key=lambda n: (-held[n], n))


def lead_sentence(
    raws: Sequence[str],
    costs: Sequence[int],
    hidden: Sequence[bool],
    defining: Sequence[int],
    core_first: int,
    most: float,
    *,
    touching: bool = False,
) -> tuple[int, int] | None:
    """The lines of a definition above the window, to show apart (before a cut mark), or None: the
    first of ``defining`` (lines that define the query's rarest word, or start the API entry the
    window lies in, in order), then its first sentence (after blank and hidden lines, which are not
    shown: an entry's ``.. index::`` lines; to the end of its paragraph at most, and :data:`_SENTENCE_LINES`
    lines more than its first), when they cost at most ``most`` tokens and a line at least is left
    between them and the core (which starts at ``core_first``). An API directive's block, its other
    signatures and options up to its first blank line, goes with it: the sentence is its content's
    (``.. decorator:: lru_cache(user_function)`` / ``lru_cache(maxsize=128, typed=False)``, or a
    signature continued after a backslash, was taken for the first sentence). With ``touching`` the sentence may
    end on the line just above the core (no line left between)."""
    if not defining:
        return None
    first = defining[0]
    start = first + 1
    if API_ENTRY.match(raws[first]):
        while start < core_first and raws[start].strip():
            start += 1
    while start < core_first and (hidden[start] or not raws[start].strip()):
        start += 1
    last = start
    while last - start < _SENTENCE_LINES and last + 1 < core_first and raws[last + 1].strip():
        if _SENTENCE_END.search(raws[last]):
            break
        last += 1
    reach = core_first if touching else core_first - 1  # the line the sentence may not end on or after
    if last >= reach or any(hidden[start : last + 1]) or sum(costs[first : last + 1]) > most:
        return None
    return first, last


def paragraph_head(
    raws: Sequence[str],
    costs: Sequence[int],
    hidden: Sequence[bool],
    asked: tuple[Sequence[bool], AbstractSet[int]],
    window: tuple[int, int],
    core: tuple[int, int],
    top: int,
    room: int,
) -> tuple[int, int]:
    """The grown ``window`` (first and last line) without the tail of a paragraph above its ``core``
    (first and last line) that it starts on. ``asked``: whether each line holds a query word, and
    the lines of code. From where the paragraph starts, when that is at most :data:`_HEAD_LINES` lines
    up, not above ``top`` (its entry's start), a line of it above the window holds a query word, and
    what ``room`` has left, then the lines grown below the core (the last first), pay for them: a
    paragraph's first sentence says what it is about, and a window on deepcopy started on "is compatible
    with the way these are treated by the :mod:`pickle` module.", three lines under the answer, "This
    module does not copy types like module, method, ...". Else, when the tail is code, from the line
    after it, the lines below taking its room: the last lines of an example say nothing without its
    first ones (a window on ``TypeVar``'s ``bound`` started on ``add_logging``'s last six, and the hit
    after it, the answer, did not fit). Else as it was: the tail of prose is its sentence's end,
    perhaps the answer ("32 bytes (256 bits) of randomness is sufficient" for how long a token
    should be), and the lines grown below are those after the words that name it (an answer follows them:
    ``max_connections (integer)`` and "The default is typically 100 connections"), not to be given
    for a paragraph that does not name them."""
    first, last = window
    if first >= core[0] or first == top or hidden[first] or not raws[first].strip() or _ITEM.match(raws[first]):
        return window
    if hidden[first - 1] or not raws[first - 1].strip():
        return window  # it starts a paragraph
    wanted, code = asked
    head = first
    while head > top and first - head < _HEAD_LINES and raws[head - 1].strip() and not hidden[head - 1]:
        if _ITEM.match(raws[head]):
            break
        head -= 1
    reached = head == top or not raws[head - 1].strip() or hidden[head - 1] or bool(_ITEM.match(raws[head]))
    if reached and any(wanted[head:first]):
        need, free, end = sum(costs[head:first]), room - sum(costs[first : last + 1]), last
        while need > free and end > core[1]:
            free, end = free + costs[end], end - 1
        if need <= free:
            return head, end
    tail = first
    while tail < core[0] and raws[tail].strip() and not hidden[tail]:
        tail += 1
    if tail >= core[0] or any(n not in code for n in range(first, tail)):
        return window  # the tail runs into the core, or is prose
    free = room - sum(costs[tail : last + 1])
    while last + 1 < len(costs) and costs[last + 1] <= free:
        free, last = free - costs[last + 1], last + 1
    return tail, last
