"""Packing search hits into a token budget, as passages of their chunks. Pure.

Costs are estimated on exactly what the model will see: the chunk header from
:mod:`ctxtrio.docs.render` plus the text, each estimate rounded up (so the sum leans
high, as every estimate here should).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..text.code import comment_start
from ..text.cutting import CUT_MARK, cut_around, cut_to_fit, whole_words
from ..text.documented import documented_line
from ..text.embedding import PART_CHARS
from ..text.focus import passage_around
from ..text.headings import unheaded_terms
from ..text.kinds import of_source
from ..text.long_lines import cut_by_sentences
from ..text.passages import Passage, best_passage, marked_text
from ..text.stems import light_stem
from ..text.words import Alike, stemmed_terms
from .chunks import StoredChunk
from .model import SearchHit
from .render import hit_header, search_hit_header, shown_title
from .sharing import GAP_TOKENS, MIN_SHARE, Shares, shown_trail
from .window_packing import MIN_TEXT_TOKENS, contiguous_text, fresh_text, pack_outline, pack_window

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..text.tokens import TokenModel

# CUT_MARK, cut_around and cut_to_fit live in text/cutting.py (sessions cut entries too), the window and outline
# packing in window_packing.py (doc_window, doc_outline); re-exported here.
__all__ = [
    "CUT_MARK", "Candidate", "contiguous_text", "cut_around", "cut_to_fit", "fresh_text", "headings", "least_hit_tokens",
    "pack_hits", "pack_outline", "pack_window", "tokens_per_char",
]  # fmt: skip

#: Tokens of text under which a hit's header leaves the document's title out, the id naming the document:
#: doc_search budget_tokens=50 showed '[...] : Tim [...]' under a 30-token title, the answer over its budget.
#: As sharing's least text for a hit, so only a first hit at a small budget (a share under its need) drops it.
_TITLED_TEXT_TOKENS = 40


@dataclass(frozen=True, slots=True)
class Candidate:
    """A search match before packing."""

    doc_id: str
    title: str
    chunk: StoredChunk
    score: float
    #: Found by semantic recall and not by keyword search.
    by_meaning: bool = False
    #: Characters of ``chunk.text`` nearest the query in meaning (semantic recall's best part).
    focus: tuple[int, int] | None = None
    #: Placed by semantic recall's ordering (docs/hybrid.py: the vector ranking's first, which keyword
    #: search ranked past its first 10); the re-ranking by passages leaves it at its place.
    placed: bool = False
    #: The vector ranking's first, a keyword hit of a query whose words do not all match (docs/hybrid.py): the
    #: re-ranking by passages leaves it no lower than :data:`~ctxtrio.docs.hybrid.MEANING_FIRST_FLOOR`.
    meaning_first: bool = False
    #: Where in ``chunk.text`` the API entry starts that the hit after it continues (docs/continuation.py):
    #: shown from there, what the entry is, not the window of the query's words.
    start: int | None = None
    #: The document's source (a file's path), whose folders may name a definition's owner (docs/defined.py).
    source: str = ""
    #: Where in ``chunk.text`` the line starts that defines the member the query asks for (docs/defined.py's
    #: :func:`~.defined.members_first`): its passage holds that line, not only the words around it.
    defines_at: int | None = None


#: A passage whose lines, and lines with a query word, are at least this share lines shown above
#: is not shown (see :func:`pack_hits`).
_REPEATED: Final = 0.5


def pack_hits(
    candidates: Sequence[Candidate],
    budget_tokens: int,
    model: TokenModel,
    query_terms: Sequence[str] = (),
    rarity: Mapping[str, float] | None = None,
    alike: Alike = (),
    *,
    worded: bool = True,
) -> tuple[list[SearchHit], int, int]:
    """The best passages of the hits, in the given (rank) order; returns (hits, omitted, tokens used).

    Several hits share the budget, the first the most (:meth:`~ctxtrio.docs.sharing.Shares.share`:
    half of what is left, more for a first hit that leads; the last one that can, all of it), and
    each gets at least what it needs to be worth showing (:meth:`~ctxtrio.docs.sharing.Shares.need`:
    :data:`~ctxtrio.docs.sharing.MIN_SHARE`, or its header and some text); a hit needing more
    than is left is passed over for the hits after it, whose headers may be shorter (counted in
    ``omitted``).
    A hit whose whole chunk fits its share is shown whole; a larger one shows the
    window of its lines densest in ``query_terms`` (:func:`~ctxtrio.text.passages.best_passage`),
    with cut marks where text was left out and its line range in the header. A passage at
    least half of whose lines a hit above already shows (chunks overlap; manuals repeat a
    signature, release notes an item), and half of those that hold a query word (boilerplate
    two entries share word for word is no repeat when what it says of the query is new), is
    left out and the next hit takes its room; it is not counted in ``omitted``, which tells
    the caller how many hits a larger budget would add (a repeat would add nothing). Ranking
    is the caller's: any ordered candidates (BM25, fused) are packed the same way.
    Hits after the last that fits are counted in ``omitted``. When not even a minimal passage of the
    first hit fits, none is shown (the caller says what budget to pass): it was cut by characters
    around its match, '[...] : Tim [...]' at budget_tokens=50, the answer over its budget.
    ``rarity`` weighs the query's terms in choosing windows (:func:`~ctxtrio.text.passages.rarity_weights`);
    ``alike`` (the documentation's words the search also looked for) count there at a share of their word's.
    ``worded``: the query's words match well (:class:`~ctxtrio.docs.sharing.Shares`: else each hit may take more).
    """
    hits: list[SearchHit] = []
    used = 0
    shown: set[str] = set()  # the lines of the hits above (see _lines_of)
    stems = frozenset(map(light_stem, query_terms))
    repeats = 0
    shares = Shares(candidates, model, query_terms, worded=worded)
    for position, candidate in enumerate(candidates):
        remaining = budget_tokens - used
        if hits and remaining < MIN_SHARE:
            break  # no hit needs less
        if hits and remaining < shares.need(position):
            continue  # its header leaves it no room to say anything; a later hit's may
        share = shares.share(position, remaining)
        hit = _passage_hit(candidate, share, model, query_terms, rarity, alike, shares.under(position), first=not hits)
        if hit is None:  # the first hit only: a later one's share holds its header and some text
            break
        lines = _lines_of(hit.text)
        if hits and hit.cut and _repeats(lines, shown, stems):
            repeats += 1
            continue
        shown.update(lines)
        cost = model.estimate(search_hit_header(hit)) + GAP_TOKENS
        hits.append(hit)
        used += cost + hit.tokens
    return hits, len(candidates) - len(hits) - repeats, used


def _repeats(lines: Sequence[str], shown: set[str], stems: frozenset[str]) -> bool:
    """Whether a passage of ``lines`` repeats the hits above: at least :data:`_REPEATED` of its
    lines are ``shown`` already, and so are that share of its lines that hold a query word
    (``stems``), when some do. Entries of one page share boilerplate word for word (Node's fs.rm
    and fs.rmdir: the same retryDelay, callback and err lines), and a passage whose lines about the
    query are new is not a repeat for them; a true repeat (chunks overlap, a signature written
    twice) repeats its lines with the words too."""

    def repeated(counted: Sequence[str]) -> bool:
        return sum(line in shown for line in counted) >= _REPEATED * len(counted)

    if not lines or not repeated(lines):
        return False
    worded = [line for line in lines if stems.intersection(stemmed_terms(line, stem=True))]
    return not worded or repeated(worded)


def _lines_of(text: str) -> list[str]:
    """The lines of a hit's text that say something, whitespace runs as one space, cut marks left out."""
    lines = (" ".join(line.replace(CUT_MARK, " ").split()) for line in text.split("\n"))
    return [line for line in lines if len(line) > 3]


def _passage_hit(
    candidate: Candidate,
    share: int,
    model: TokenModel,
    query_terms: Sequence[str],
    rarity: Mapping[str, float] | None,
    alike: Alike,
    under: tuple[str, ...],
    *,
    first: bool = False,
) -> SearchHit | None:
    """``candidate`` whole when it fits ``share`` tokens with its header (``under``: the trail it
    shows), else its best passage; None if none fits. ``first``: no hit is shown above it
    (:func:`_meaning_passage`)."""
    chunk = candidate.chunk
    title = shown_title(candidate.title, chunk.text)  # "": the chunk opens with its title (and shows it whole)
    whole_header = model.estimate(
        hit_header(candidate.doc_id, title, chunk.index, by_meaning=candidate.by_meaning, under=under)
    )
    text_tokens = model.estimate(chunk.text)
    if whole_header + GAP_TOKENS + text_tokens <= share:
        return _hit(candidate, chunk.text, text_tokens, under=bool(under))
    widest = chunk.text.count("\n") + 1

    def header_tokens(named: str) -> int:
        lines = (widest, widest, widest)
        return model.estimate(
            hit_header(candidate.doc_id, named, chunk.index, lines, by_meaning=candidate.by_meaning, under=under)
        )

    full = header_tokens(candidate.title)
    short = full if title == candidate.title else header_tokens(title)
    room = share - full - GAP_TOKENS
    if room < _TITLED_TEXT_TOKENS:  # only a first hit's share can be under its need (a small budget)
        untitled = share - header_tokens("") - GAP_TOKENS
        if untitled < MIN_TEXT_TOKENS:
            return None
        text, lines, cut = _passage(candidate, untitled, model, query_terms, rarity, alike, first=first)
        if lines is None:  # characters around the match: '[...] : Tim [...]' says nothing
            text = whole_words(candidate.chunk.text, text)
            if not text:
                return None
        return _hit(candidate, text, model.estimate(text), lines, cut=cut, under=bool(under), titled=False)
    text, lines, cut = _passage(candidate, room, model, query_terms, rarity, alike, first=first)
    if short < full and not shown_title(candidate.title, text):
        # It shows the title's line, so its header leaves the title out: that room is the text's.
        wider = _passage(candidate, room + full - short, model, query_terms, rarity, alike, first=first)
        if not shown_title(candidate.title, wider[0]):
            text, lines, cut = wider
    return _hit(candidate, text, model.estimate(text), lines, cut=cut, under=bool(under))


def _passage(
    candidate: Candidate,
    room: int,
    model: TokenModel,
    query_terms: Sequence[str],
    rarity: Mapping[str, float] | None,
    alike: Alike,
    *,
    first: bool = False,
) -> tuple[str, tuple[int, int, int] | None, bool]:
    """The text a hit too large for its share shows in ``room`` tokens, its line range (None when not
    whole lines) and whether it is cut: its best passage; when no whole line fits, its sentences
    densest in the query's words (a one-line paragraph), else the characters around its match.
    ``first``: no hit is shown above it (:func:`_meaning_passage`)."""
    chunk = candidate.chunk
    focus = unheaded_terms(query_terms, headings(candidate))
    passage = (
        _meaning_passage(candidate, room, model, first=first)
        or _start_passage(candidate, room, model)
        or _definition_passage(candidate, room, model)
    ) or best_passage(
        chunk.text, focus, room, model, tokens_per_char(chunk), rarity=rarity, named=query_terms, trail=chunk.trail,
        alike=tuple(pair for pair in alike if pair[0] in focus),
    )  # fmt: skip
    if passage is None:  # not even one line fits: its sentences, else characters around the match
        return cut_by_sentences(chunk.text, query_terms, room, model), None, True
    passage = _with_documented(candidate, passage, room, model)
    lines = (passage.first_line, passage.last_line, passage.lines) if passage.cut else None
    return marked_text(chunk.text, passage), lines, lines is not None


def headings(candidate: Candidate) -> tuple[str, ...]:
    """What a hit says it is about before its text: its heading trail and its document's name
    (the title up to its first dot: ``os`` for ``os.rst.txt``)."""
    return (*candidate.chunk.trail, candidate.title.split(".", 1)[0])


#: Tokens at most for the lines around a hit's part found by meaning (a part is ~130).
FOCUS_TOKENS: Final = 250
#: Those lines take at most this many times the part's own tokens, and at least FOCUS_LEAST: a part
#: found by meaning is what answers (an entry's lead, text/leads.py, is its name and first sentence,
#: ~20-60 tokens), and the room a window would add around it is room for the hits after it.
#: Chosen on the retrieval benchmark with all-MiniLM-L6-v2 over the whole Python manual (answers
#: inside 500 / 1,000 / 2,000 tokens, 1.5 and 40 against 2 and 60; see the commit's message).
FOCUS_MARGIN: Final = 1.5
FOCUS_LEAST: Final = 40
#: The first hit shown, when found by meaning, shows more around its part: FIRST_FOCUS_MARGIN times the part's
#: tokens, at most FIRST_FOCUS_TOKENS. Its part is often a question, a title or an entry's lead, and the answer
#: the lines under it, past what 1.5 times it shows: "Why does the result of id() appear to be not unique?"
#: and the sentence on it, then "the next freshly created object is allocated at the same position" two sentences
#: on; parse_qs's signature and "The dictionary keys are the unique query variable names" under it. A first hit
#: has half the budget or more (docs/sharing.py) and seldom needs it all; a later one's lines are taken from the
#: hits after it (2.5 for every hit lost an answer of python20 at 1,000 tokens, a line of the third hit).
#: A part under FIRST_FOCUS_CHARS characters keeps FOCUS_MARGIN: the tail of a chunk cut into parts, a phrase
#: near the query by a word or two ("used, with replacement texts to make the output in the table consistent",
#: 71 characters, for "...so a printed table lines up"), whose lines grown a few more tokens took the last line
#: of the third hit, the answer. Measured with all-MiniLM-L6-v2 over the whole Python manual (/work/bench/mm.sh,
#: python17-20, answers inside 500 / 1,000 / 2,000 tokens): 111 / 130 / 150 -> 113 / 134 / 150. For every hit
#: (python17-19, 80 / 92 / 108): margin 2.0 at most 350 tokens 80 / 94 / 108, 2.5 82 / 96 / 108, 3.0 82 / 96 /
#: 108; 2.5 at most 250 82 / 95 / 108, at most 500 82 / 96 / 107 (the commit's message has the rest).
FIRST_FOCUS_MARGIN: Final = 2.5
FIRST_FOCUS_TOKENS: Final = 350
FIRST_FOCUS_CHARS: Final = PART_CHARS // 4


def _meaning_passage(candidate: Candidate, room: int, model: TokenModel, *, first: bool = False) -> Passage | None:
    """For a hit with a ``focus`` (semantic recall's best part, kept by ``docs/hybrid.py``
    where the query's words are not what matched): the lines around it; None otherwise.
    ``first``: no hit is shown above it, which gives a part of FIRST_FOCUS_CHARS or more a wider window."""
    focus = candidate.focus
    if focus is None:
        return None
    rate = tokens_per_char(candidate.chunk)
    focus_tokens = math.ceil((focus[1] - focus[0]) * rate)
    margin, most = FOCUS_MARGIN, FOCUS_TOKENS
    if first and focus[1] - focus[0] >= FIRST_FOCUS_CHARS:
        margin, most = FIRST_FOCUS_MARGIN, FIRST_FOCUS_TOKENS
    room = min(room, most, max(FOCUS_LEAST, math.ceil(margin * focus_tokens)))
    return passage_around(candidate.chunk.text, focus, room, model, rate)


def _start_passage(candidate: Candidate, room: int, model: TokenModel) -> Passage | None:
    """For a hit with a ``start`` (an API entry its next chunk continues): the lines from there, as many as fit."""
    if candidate.start is None:
        return None
    chunk = candidate.chunk
    return passage_around(chunk.text, (candidate.start, len(chunk.text)), room, model, tokens_per_char(chunk))


def _definition_passage(candidate: Candidate, room: int, model: TokenModel) -> Passage | None:
    """For a hit that defines the member the query asks for (``defines_at``): the lines around its definition's
    line, from the comment right above it when that fits in half the room (a Javadoc, a Go doc comment), else
    from the line itself. The query's words are its owner's and its callers' too: the densest window of them
    may leave the definition's line out (a long class Javadoc above ``public class ArrayList<E>``)."""
    at = candidate.defines_at
    if at is None:
        return None
    chunk = candidate.chunk
    text, rate = chunk.text, tokens_per_char(chunk)
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    lead = comment_start(text, at)
    if model.estimate(text[lead:end]) > room // 2:
        lead = at
    return passage_around(text, (lead, end), room, model, rate)


def _with_documented(candidate: Candidate, passage: Passage, room: int, model: TokenModel) -> Passage:
    """A source file's passage that holds a definition's doc comment or docstring but not its line, grown to it
    (:func:`~ctxtrio.text.documented.documented_line`), or, where that does not fit, the lines around that line;
    any other passage as it is."""
    if not passage.cut or candidate.defines_at is not None or not of_source(candidate.title):
        return passage
    text, rate = candidate.chunk.text, tokens_per_char(candidate.chunk)
    line = documented_line(text, passage.start, passage.end)
    if line is None:
        return passage
    span = (min(passage.start, line[0]), max(passage.end, line[1]))
    grown = passage_around(text, span, room, model, rate)
    if grown is not None and grown.start <= span[0] and grown.end >= span[1]:
        return grown
    return passage_around(text, line, room, model, rate) or passage


def tokens_per_char(chunk: StoredChunk) -> float:
    """The chunk's recorded size per character: the rate its lines are sized at, for ranking and packing alike."""
    return chunk.tokens / max(1, len(chunk.text))


def least_hit_tokens(candidate: Candidate, model: TokenModel, query_terms: Sequence[str]) -> int:
    """Tokens the first hit of a search takes at least to be worth showing: its header without the title
    (every line number as wide as the chunk's count) and :data:`_TITLED_TEXT_TOKENS` of text."""
    chunk = candidate.chunk
    widest = chunk.text.count("\n") + 1
    under = shown_trail(chunk, query_terms)
    header = hit_header(
        candidate.doc_id, "", chunk.index, (widest, widest, widest), by_meaning=candidate.by_meaning, under=under
    )
    return model.estimate(header) + GAP_TOKENS + _TITLED_TEXT_TOKENS


def _hit(
    candidate: Candidate,
    text: str,
    tokens: int,
    lines: tuple[int, int, int] | None = None,
    *,
    cut: bool = False,
    under: bool = False,
    titled: bool = True,
) -> SearchHit:
    """The hit showing ``text`` of its chunk; ``under``: its header shows the heading trail,
    which holds a query word the chunk's text does not (:func:`~ctxtrio.text.headings.only_headed`):
    found by its heading alone, the text would not say why it matched. (Where the chunk holds
    the word outside the passage shown, the trail is not paid for: the window is chosen for
    the words the headings lack.)"""
    chunk = candidate.chunk
    return SearchHit(
        candidate.doc_id, candidate.title, chunk.index, chunk.trail, candidate.score, text, tokens,
        cut or lines is not None, by_meaning=candidate.by_meaning, lines=lines,
        under=under, titled=titled,
    )  # fmt: skip
