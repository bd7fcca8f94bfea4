"""A cut entry's headline: its first sentence shown above a passage cut from further down. Pure.

A note a model writes (a commit message, a decision, a finding) says its point first: the subject
line, the opening claim, then the detail. When an entry is too large for its room and its passage
densest in the query's words (:func:`~ctxtrio.text.long_lines.cut_by_sentences`) lies further
down, the line that says what the entry is about was cut away, and it is often the answer: asked
'QUESTION_WORDS', recall showed the paragraph of a note that names it, not the note's subject line
'query: a question word the query writes in capitals is kept'. :func:`with_headline` shows that first
sentence, then the passage cut again in the room it leaves, when the sentence holds a word of the
query and takes at most :data:`HEAD_SHARE` of the room, so the passage keeps most of it (doc_search
shows a definition's lead above a window of 200 tokens or more in the same quarter: ``text/passages``).

The same holds when the passage densest in the query's words starts at the top: the subject line
holds the query's words (a question is asked in the words of what the note is about), and the
lines right after it won the window only by standing next to it. The answer is in the detail,
where the rest's own words point: asked "Why was starting the writer's thread with no loop turn
reverted?", a 500-token recall showed the note's subject line and the measurements after it, not
"Starting the writer's thread in the same loop batch as its receive costs more than the turn it
saves" further down. So such a passage too is the first sentence and the rest cut on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..text.cutting import CUT_MARK
from ..text.long_lines import cut_by_sentences, sentence_lines
from ..text.terms import unique_terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.tokens import TokenModel

__all__ = ["HEAD_SHARE", "with_headline"]

#: The most of a cut entry's room its first sentence may take. Over the five committed recall sets
#: (stress/recall_bench.py, 300 questions) a quarter found 3 / 5 / 3 more answers at 250 / 500 / 1,000
#: tokens and lost none; 0.35 lost one at 250, a half three: answers in the passage, squeezed out by
#: the sentence above it.
HEAD_SHARE: Final = 0.25


def with_headline(text: str, cut: str, query_terms: Sequence[str], room: int, model: TokenModel) -> str:
    """``cut`` (``text`` cut to ``room`` tokens for ``query_terms``) with ``text``'s first sentence
    above it, the rest of ``text`` cut again in what that sentence leaves (also when ``cut`` starts
    where ``text`` does: the rest's passage is then chosen by the rest's own words, not taken as the
    lines after the first sentence, when the rest holds a word of the query); ``cut`` itself when it
    is ``text`` whole, when the first sentence holds no query term or takes more than
    :data:`HEAD_SHARE` of ``room``, or when the two do not fit ``room`` together."""
    if cut == text:
        return cut
    cut_at_start = not cut.startswith(CUT_MARK)
    first = sentence_lines(text).split("\n", 1)[0]  # same offsets as ``text``
    if len(first) >= len(text):
        return cut
    head = model.estimate(first)
    if head > room * HEAD_SHARE or set(unique_terms(first)).isdisjoint(query_terms):
        return cut
    rest = text[len(first) + 1 :]
    tail = cut_by_sentences(rest, query_terms, room - head - 1, model)
    if tail == rest:
        return text
    if cut_at_start and set(unique_terms(tail)).isdisjoint(query_terms):
        # No word of the query below the first sentence: the passage from the top stays as it was,
        # not the rest's first characters (a short line, then one too long to add: that room is
        # left to the other matches, :mod:`.cuts`).
        return cut
    # The character after the sentence (a space or a line break; a full-width end mark in Chinese
    # and Japanese, which sentence_lines turns into the break itself) joins the two as written.
    joined = first + text[len(first)] + tail
    return joined if model.estimate(joined) <= room else cut
