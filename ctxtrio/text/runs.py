"""Runs of lines scored by the query's words they hold, for :mod:`.passages`. Pure.

A text's lines (:class:`Line`: where each is, its size, the query's words, phrases and
definition it holds) are scored in runs: :func:`best_run` is the window's core,
:func:`run_score` a run's score for ranking. A run scores

* the distinct words of the query it holds, each once (weighed by rarity when given); a
  word held only on lines of code or a program's output counts :data:`CODE_SHARE`,
* :data:`_LINE_BONUS` for each further word on its densest line of prose,
* :data:`_PHRASE_BONUS` for each pair of the query's words side by side as in the query,
* :data:`_DEFINES_BONUS` times the share of the query its best definition line names;

a word held only by one of the documentation's words the search looked for it by (a thesaurus
word: ``CPUs`` for "processors", :attr:`Line.alike`) counts a share of it, never more than the word
itself: :data:`RANK_SHARE` in a score for ranking (unweighed), :data:`ALIKE_SHARE` of its weight in
choosing a window (weighed by rarity; see :func:`~.words.alike_weights`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from collections.abc import Set as AbstractSet

__all__ = ["ALIKE_SHARE", "ANCHOR_WEIGHT", "CODE_SHARE", "Line", "best_run", "run_score"]

#: Score of each further distinct query term on one line (proximity), per term.
_LINE_BONUS: Final = 0.5
#: Score of each pair of query terms that stand next to each other in the text.
_PHRASE_BONUS: Final = 0.5
#: Score of a window holding a line that starts with a name the query asks for (a definition).
_DEFINES_BONUS: Final = 1.0
#: Weighed by rarity, a line whose query words all weigh less than this (the rarest weighs 1.0) starts
#: or ends no window: a word that common ("path", "module" in Node's API reference: 0.05) adds to
#: a run it lies in, but a run stretched over 250 tokens to reach it pushed the answer out.
ANCHOR_WEIGHT: Final = 0.1
#: What a word held only on lines of code or output counts in choosing a window, of its weight: an
#: example repeats the name asked for (``from contextlib import suppress``), the prose says what it
#: does (``.. function:: suppress(*exceptions)`` / "Return a context manager that suppresses ...").
CODE_SHARE: Final = 0.5
#: What a word held only by one of its alike words (:attr:`Line.alike`) counts in choosing a window,
#: of its weight: the window of a chunk found by the documentation's word ("Return the number of CPUs"
#: for "how many processors") settles on the line that says it, not on the question's other, common
#: words; a line holding the word itself still wins. 0.5 drew the window of lru_cache's entry for
#: "remember what a slow function returned ..." to its signature (lru_cache holds "cache") above the
#: sentence holding "function", "same", "arguments": one answer fewer at 500 tokens over the six dev
#: sets of stress/retrieval_bench.py, the same at 1,000 and 2,000.
ALIKE_SHARE: Final = 0.25
#: What such a word counts in a passage score for ranking (:func:`run_score`), where each word of the
#: query counts 1: 0.5 ranked a chunk of Node's deprecations that says "throw" above net's answer
#: for "What error is raised ..." (one answer fewer at 500 tokens), 0.25 does not; 0.75 as 0.5.
RANK_SHARE: Final = 0.25


@dataclass(frozen=True, slots=True)
class Line:
    start: int
    end: int  # excluding the line break
    cost: int
    found: frozenset[int]  # the query's words (see words.word_groups) it holds
    phrases: frozenset[tuple[int, int]]
    defines: float
    #: Part of an HTML comment block: left out of the window shown (see :func:`~.edges.hidden_lines`).
    hidden: bool = False
    #: Code or a program's output (:func:`~.literal.literal_lines`): its words count less.
    code: bool = False
    #: The query's words it holds only by an alike word (:func:`~.words.alike_words`), not in ``found``.
    alike: frozenset[int] = frozenset()


@dataclass(slots=True)
class _Run:
    """What a run of lines holds so far, line by line."""

    cost: int = 0
    densest: int = 0
    defines: float = 0.0
    found: set[int] = field(default_factory=set)
    coded: set[int] = field(default_factory=set)  # held on lines of code
    phrases: set[tuple[int, int]] = field(default_factory=set)
    liked: set[int] = field(default_factory=set)  # held by an alike word

    def extend(self, lines: Sequence[Line]) -> None:
        """Take in ``lines``, the ones after the run."""
        for line in lines:
            self.cost += line.cost
            if line.alike:
                self.liked |= line.alike
            if not line.found:
                continue
            self.phrases |= line.phrases
            self.defines = max(self.defines, line.defines)
            if line.code and not line.defines:
                self.coded |= line.found
            else:
                self.found |= line.found
                self.densest = max(self.densest, len(line.found))

    def score(self, weights: Sequence[float] | None, alike_weights: Sequence[float] | None = None) -> float:
        held = _held(self.found, weights)
        score = held + _LINE_BONUS * max(0, self.densest - 1) + _PHRASE_BONUS * len(self.phrases)
        score += _DEFINES_BONUS * self.defines
        coded = self.coded - self.found
        if coded:
            score += CODE_SHARE * _held(coded, weights)
        liked = self.liked - self.found - coded if self.liked else self.liked
        if not liked:
            return score
        share = RANK_SHARE if weights is None else ALIKE_SHARE
        return score + (share * _held(liked, weights) if alike_weights is None else _held(liked, alike_weights))


def _anchors(line: Line, weights: Sequence[float], alike_weights: Sequence[float] | None) -> bool:
    """Whether ``line`` may start or end a window: a word it holds weighs :data:`ANCHOR_WEIGHT` or more."""
    if any(weights[word] >= ANCHOR_WEIGHT for word in line.found):
        return True
    if alike_weights is not None:
        return any(alike_weights[word] >= ANCHOR_WEIGHT for word in line.alike)
    return any(ALIKE_SHARE * weights[word] >= ANCHOR_WEIGHT for word in line.alike)


def _held(words: set[int], weights: Sequence[float] | None) -> float:
    return sum(weights[word] for word in words) if weights is not None else len(words)


def run_score(lines: Sequence[Line], first: int, last: int) -> float:
    """The score of lines ``first`` .. ``last``, unweighed."""
    run = _Run()
    run.extend(lines[first : last + 1])
    return run.score(None)


def best_run(
    lines: Sequence[Line],
    room: int,
    *,
    long_lines: bool = False,
    weights: Sequence[float] | None = None,
    starts: AbstractSet[int] = frozenset(),
    alike_weights: Sequence[float] | None = None,
) -> tuple[int, int]:
    """The best-scoring, then earliest, then cheapest run of lines within ``room`` that starts
    and ends on a line holding a query term (with ``weights``, one of :data:`ANCHOR_WEIGHT` or
    more, if any line holds one); of equal scores, one that holds none of ``starts`` (the lines
    that start an entry, :func:`~.sections.entry_starts`) past its first line comes before one
    that spans entries (``.. method:: wait(timeout=None)`` alone before the lines about
    ``wait`` in ``set()`` and ``clear()`` above it); the first line that fits when none holds one;
    (-1, -1) when every line holding one is longer than ``room``. With ``long_lines`` a
    single line counts as a run whatever its size (for scoring: an unwrapped paragraph
    is one line)."""
    matching = [n for n, line in enumerate(lines) if line.found or line.alike]
    if weights is not None:
        anchors = [n for n in matching if _anchors(lines[n], weights, alike_weights)]
        matching = anchors or matching
    if not long_lines and any(lines[n].cost > room for n in matching):
        matching = [n for n in matching if lines[n].cost <= room]
        if not matching:
            return -1, -1  # the matches lie on lines longer than the room: the caller cuts by characters
    best: tuple[float, bool, int, int] | None = None  # (-score, spans entries, first, cost)
    found_at = (-1, -1)
    before = list(itertools.accumulate((n in starts for n in range(len(lines))), initial=0))  # starts above each line
    for position, first in enumerate(matching):
        run = _Run()
        following = first  # the next line not yet in the run
        for last in matching[position:]:
            run.extend(lines[following : last + 1])
            following = last + 1
            if run.cost > room and (last != first or not long_lines):
                break
            key = (-run.score(weights, alike_weights), before[last + 1] > before[first + 1], first, run.cost)
            if best is None or key < best:
                best, found_at = key, (first, last)
    if best is not None:
        return found_at
    for n, line in enumerate(lines):
        if line.cost <= room:
            return n, n
    return -1, -1
