"""Structure-aware chunking: whole blocks packed into a token budget, with overlap.

The document is split into blocks by its kind (:mod:`ctxtrio.text.parts`: markdown
headings, fenced code, list items and paragraphs; reST and AsciiDoc titles; source
code at its definitions; plain paragraphs), each with its heading trail. Whole blocks are packed greedily up to ``chunk_tokens``. A
new chunk starts early at a heading once the current one is at least half full, and
a heading that would end a chunk moves to the next one with the text it introduces.
Trailing whole blocks of up to ``overlap_tokens`` are carried into the next chunk,
so a chunk's text starts at its first overlap block; its ``trail`` is the heading
trail of its first *new* block.

Only a block larger than a whole chunk is split: on line boundaries, and a line that
is itself too large at the last good boundary in the last half of the piece: a
sentence end (with its spaces; 。！？ too), else whitespace, else ``;`` ``,`` ``)`` ``}``
(and ，、；), so an unwrapped paragraph (markdown, text from HTML or PDF, a commit
message, Chinese or Japanese) is not cut inside a word; a line with none of them there
(base64, a long identifier) on characters, never between a character and the combining
marks, joiners or variation selectors that follow it, nor between a CR and its LF.

Guarantees, for every chunk: ``text == source[start:end]``; chunks are in order,
each ends after the previous one ends, and together they cover every character of
the source; ``tokens == model.estimate(text) <= chunk_tokens``, except for a chunk
that is one character with its combining marks whose own estimate exceeds the
budget (only possible when a calibrated rate exceeds ``chunk_tokens``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ctxtrio.text.kinds import CODE_KINDS, Kind
from ctxtrio.text.parts import iter_parts
from ctxtrio.text.sentences import last_sentence_end
from ctxtrio.text.spans import SpanEstimates

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ctxtrio.text.tokens import TokenModel

__all__ = ["Chunk", "chunk_document", "iter_chunks"]

# Upper bound on the characters examined for one hard-split piece, per token of budget.
_PROBE_CHARS_PER_TOKEN: Final = 16
# Where a line too long for a chunk is cut when no sentence ends in the last half of a piece:
# after whitespace (not the no-break space), else after what separates tokens in code (and
# Chinese and Japanese clauses), so no word is cut in two.
_WHITESPACE: Final = (" ", "\t", "\u3000", "\r")
_SEPARATORS: Final = (";", ",", ")", "}", "\uff0c", "\u3001", "\uff1b")
_SPACES: Final = re.compile(r"[ \t\u3000]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a document: ``text == source[start:end]``, verbatim."""

    index: int
    text: str
    start: int
    end: int
    trail: tuple[str, ...]
    tokens: int


#: A packable unit: a whole block, or a part of a block too large for a chunk:
#: (start, end, tokens, trail, heading). A plain tuple: one is made per block.
#: ``heading``: 0, :data:`_TITLE` (a title's lines alone: it moves on with the text it
#: introduces) or :data:`_DEFINITION` (a code definition with the start of its body).
_Piece = tuple[int, int, int, tuple[str, ...], int]
_START: Final = 0
_END: Final = 1
_TOKENS: Final = 2
_TRAIL: Final = 3
_HEADING: Final = 4
_TITLE: Final = 1
_DEFINITION: Final = 2


def chunk_document(
    text: str, *, chunk_tokens: int, overlap_tokens: int, model: TokenModel, kind: Kind = Kind.MARKDOWN
) -> list[Chunk]:
    """Return all chunks of ``text`` (see :func:`iter_chunks`)."""
    return list(iter_chunks(text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, model=model, kind=kind))


def iter_chunks(
    text: str, *, chunk_tokens: int, overlap_tokens: int, model: TokenModel, kind: Kind = Kind.MARKDOWN
) -> Iterator[Chunk]:
    """Yield the chunks of ``text`` read as ``kind`` in order, each as soon as it is complete.

    ``chunk_tokens`` must be at least 1 and ``overlap_tokens`` in
    ``[0, chunk_tokens)``; otherwise ``ValueError``. ``""`` yields nothing.
    """
    if chunk_tokens < 1:
        raise ValueError(f"chunk_tokens must be >= 1, got {chunk_tokens}")
    if not 0 <= overlap_tokens < chunk_tokens:
        raise ValueError(f"overlap_tokens must be in [0, {chunk_tokens}), got {overlap_tokens}")
    spans = SpanEstimates(text, model)
    estimate = spans.estimate
    packer = _Packer(text, chunk_tokens, overlap_tokens, spans)
    budget = chunk_tokens
    marked = _DEFINITION if kind in CODE_KINDS else _TITLE
    # The chunk being built: the pieces after the carried ones, and the tokens of all
    # (its estimate, but where pieces count more together: _Packer._fit). Each piece is
    # added once the next one is known.
    new: list[_Piece] = []
    tokens = 0
    held: _Piece | None = None
    for start, end, trail, heading in iter_parts(text, kind):
        size = estimate(start, end)
        if size <= budget:
            pieces: Iterable[_Piece] = ((start, end, size, trail, marked if heading else 0),)
        else:
            pieces = _split_block(text, start, end, trail, marked if heading else 0, budget, spans)
        for piece in pieces:
            if held is not None:
                # A heading starts a new chunk when the current one is half full, or when
                # the text it introduces (the piece after it) would not fit after it.
                held_size = held[_TOKENS]
                if new and (
                    tokens + held_size > budget
                    or (held[_HEADING] and (tokens * 2 >= budget or tokens + held_size + piece[_TOKENS] > budget))
                ):
                    done, new, tokens = packer.emit(new, held)
                    yield from done
                new.append(held)
                tokens += held_size
            held = piece
    if held is not None:
        if new and (tokens + held[_TOKENS] > budget or (held[_HEADING] and tokens * 2 >= budget)):
            done, new, tokens = packer.emit(new, held)
            yield from done
        new.append(held)
    if new:
        yield from packer.last(new)


def _split_block(
    text: str, start: int, end: int, trail: tuple[str, ...], mark: int, budget: int, spans: SpanEstimates
) -> list[_Piece]:
    """The pieces of a block too large for a chunk; only the first keeps its heading mark."""
    pieces = [
        (piece_start, piece_end, piece_tokens, trail, 0)
        for piece_start, piece_end, piece_tokens in _hard_split(text, start, end, budget, spans)
    ]
    pieces[0] = (*pieces[0][:_HEADING], mark)
    return pieces


def _hard_split(
    text: str, position: int, end: int, budget: int, spans: SpanEstimates
) -> Iterator[tuple[int, int, int]]:
    """Split an oversized block into (start, end, tokens) pieces within ``budget``.

    Each piece is the longest run of whole lines that fits, found from a proportional
    guess; a line that does not fit alone is cut at a boundary (:func:`_word_boundary`).
    """
    while position < end:
        limit = min(end, position + budget * _PROBE_CHARS_PER_TOKEN)
        tokens = spans.estimate(position, limit)
        if tokens <= budget:
            if limit == end:
                yield position, end, tokens
                return
            target = limit  # the probe fits: end at its last line break
        else:
            target = position + max(1, (limit - position) * budget // tokens)
        while True:
            cut = text.rfind("\n", position, target) + 1
            if cut <= position:  # no whole line fits: cut the line between words if it has any
                cut = _word_boundary(text, position, target)
                if cut < end and text[cut - 1 : cut + 1] == "\r\n":  # a CR (whitespace) cut from its LF
                    cut += 1  # the line ends after both; the budget check below still holds
            tokens = spans.estimate(position, cut)
            if tokens <= budget or target - position <= 1:
                break
            target = position + max(1, (target - position) * 9 // 10)
        yield position, cut, tokens
        position = cut


def _word_boundary(text: str, start: int, target: int) -> int:
    """Where to cut a line that starts at ``start`` at or before ``target``, best first: after a
    sentence (and its spaces), after whitespace, after code's separators, in the last half of
    the piece; else on characters (:func:`_char_boundary`).

    Each is one bounded C scan (rfind, a regex over the half): ingest CPU. A cut before a
    combining mark is not taken (a space may carry one).
    """
    low = start + (target - start) // 2
    end = last_sentence_end(text, low, target)
    if end > low:
        spaces = _SPACES.match(text, end, target)
        cut = spaces.end() if spaces is not None else end
        if cut >= len(text) or not _continues_cluster(text[cut]):
            return cut
    for separators in (_WHITESPACE, _SEPARATORS):
        cut = low
        for char in separators:  # each scan only after the best cut so far
            cut = text.rfind(char, cut, target) + 1 or cut
        if cut > low and (cut >= len(text) or not _continues_cluster(text[cut])):
            return cut
    return _char_boundary(text, start, target)


def _char_boundary(text: str, start: int, cut: int) -> int:
    """Move ``cut`` back off combining marks, joiners and variation selectors.

    When the cluster starting at ``start`` reaches past ``cut``, move forward to its end
    instead, so every piece holds at least one whole cluster.
    """
    position = cut
    while position > start + 1 and _continues_cluster(text[position]):
        position -= 1
    if position == start + 1 and position < len(text) and _continues_cluster(text[position]):
        position = cut
        while position < len(text) and _continues_cluster(text[position]):
            position += 1
    return position


def _continues_cluster(char: str) -> bool:
    if char.isascii():
        return False
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char in "\u200c\u200d"
        or "\ufe00" <= char <= "\ufe0f"
        or "\U000e0100" <= char <= "\U000e01ef"
        or "\U0001f3fb" <= char <= "\U0001f3ff"  # skin tone modifiers
        or "\udc00" <= char <= "\udfff"  # a low surrogate never starts a piece
    )


class _Packer:
    """The chunks of greedily packed pieces, carrying overlap pieces forward (:func:`iter_chunks` packs)."""

    def __init__(self, text: str, budget: int, overlap: int, spans: SpanEstimates) -> None:
        self._text = text
        self._budget = budget
        self._overlap = overlap
        self._spans = spans
        self._carried: list[_Piece] = []  # overlap pieces from the previous chunk
        self._index = 0

    def emit(self, new: list[_Piece], following: _Piece) -> tuple[list[Chunk], list[_Piece], int]:
        """Emit the chunk of the carried pieces and ``new``, the next of which is ``following``
        (rarely more than one: :meth:`_fit`).

        Returns them, the pieces of the next chunk after its carried ones (trailing titles, and
        pieces the chunk could not hold, go on with ``following``) and that chunk's tokens so far.
        """
        moved: list[_Piece] = []
        room = self._budget - following[_TOKENS]
        while len(new) > 1 and new[-1][_HEADING] == _TITLE and new[-1][_TOKENS] <= room:
            room -= new[-1][_TOKENS]
            moved.insert(0, new.pop())
        chunks: list[Chunk] = []
        while True:
            chunk, pieces, left = self._fit(new)
            chunks.append(chunk)
            if not left:
                break
            left_tokens = sum(piece[_TOKENS] for piece in left)
            if left_tokens <= room:  # they go on before the following piece
                moved[:0] = left
                room -= left_tokens
                break
            self._carry(pieces, min(self._overlap, self._budget - left_tokens))
            new = left
        carried_tokens = self._carry(pieces, min(self._overlap, room))
        return chunks, moved, carried_tokens + sum(piece[_TOKENS] for piece in moved)

    def last(self, new: list[_Piece]) -> list[Chunk]:
        """The last chunk of the carried pieces and ``new`` (not empty); rarely more than one (:meth:`_fit`)."""
        chunks: list[Chunk] = []
        while True:
            chunk, pieces, left = self._fit(new)
            chunks.append(chunk)
            if not left:
                return chunks
            self._carry(pieces, min(self._overlap, self._budget - sum(piece[_TOKENS] for piece in left)))
            new = left

    def _carry(self, pieces: list[_Piece], limit: int) -> int:
        """Carry the trailing pieces of ``pieces`` within ``limit`` into the next chunk; their tokens."""
        carried: list[_Piece] = []
        carried_tokens = 0
        for piece in reversed(pieces[1:]):  # never all of it: chunk starts must advance
            if carried_tokens + piece[_TOKENS] > limit:
                break
            carried.append(piece)
            carried_tokens += piece[_TOKENS]
        carried.reverse()
        self._carried = carried
        return carried_tokens

    def _fit(self, new: list[_Piece]) -> tuple[Chunk, list[_Piece], list[_Piece]]:
        """The chunk of the carried pieces and ``new``, its pieces, and the new pieces it could not hold.

        Piece estimates are not additive where pieces meet at a line break and whitespace (an indent,
        which neither counts alone) or inside a word cut on characters: with the cold model a chunk
        whose pieces' sum fit came out 1 token over (threading.py as Python, 801 of 800). Such a chunk
        ends before its last new pieces; a chunk of one new piece gives up carried pieces instead.
        The chunk's estimate is made once, as before, unless it is over.
        """
        pieces = self._carried + new
        kept, tokens = len(pieces), self._tokens(pieces)
        if tokens <= self._budget:
            return self._chunk(pieces, tokens), pieces, []
        while tokens > self._budget and kept > 1:
            if kept > len(self._carried) + 1:
                kept -= 1
            else:  # one new piece and some carried: less overlap
                self._carried = self._carried[1:]
                pieces, kept = pieces[1:], kept - 1
            tokens = self._tokens(pieces[:kept])
        return self._chunk(pieces[:kept], tokens), pieces[:kept], pieces[kept:]

    def _tokens(self, pieces: list[_Piece]) -> int:
        # A chunk of one piece spans just that piece, whose estimate is known.
        return pieces[0][_TOKENS] if len(pieces) == 1 else self._spans.estimate(pieces[0][_START], pieces[-1][_END])

    def _chunk(self, pieces: list[_Piece], tokens: int) -> Chunk:
        start, end = pieces[0][_START], pieces[-1][_END]
        first_new = pieces[len(self._carried)] if len(pieces) > len(self._carried) else pieces[0]
        chunk = Chunk(self._index, self._text[start:end], start, end, first_new[_TRAIL], tokens)
        self._index += 1
        return chunk
