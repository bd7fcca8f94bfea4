"""Checking an LLM summary before it is kept. Pure: no trio, no I/O.

Small models fail in recognisable ways (issue 10, Gemma 3 270M): they echo the prompt
(instructions and all), continue the input word for word, answer nothing, ramble past
the length of what they were given, or change the figures ("8003" became "8011").
:func:`rejection` names the first such fault, or returns None for an answer worth
keeping. A rejected answer is never cached nor labelled ``llm``: the caller treats it
as a failed LLM call and falls back to an extractive summary, labelled as such.

The thresholds, and why:

* **verbatim share** — the share of the answer's words (figures aside: they are meant
  to be kept as written) that sit in a run of :data:`COPY_RUN_WORDS` or more
  consecutive words copied from the input; above
  :data:`MAX_COPIED_SHARE` the answer is a copy, not a summary (a faithful summary
  quotes names and short phrases, rarely eight words in a row);
* **figures** — every number in the answer must occur in the input or the instruction
  ("part 3 of 9"; list markers at the start of a line aside), and of the numbers and identifiers the input states the
  answer must keep at least a third, or as many as its length allows (one per
  :data:`TOKENS_PER_FIGURE` tokens of target), whichever is fewer. A figure counts as
  kept only where the answer states it as a figure of its own ("1" inside "8011", or a
  list marker, keeps nothing);
* **names** — an identifier, path or URL in the answer must occur in the input or the
  instruction (its first letter capitalized to open a sentence aside), like a number (a small model invents ``/api/v2/users`` as readily as 8011).
  What must be kept is counted without the markup's metadata (HTML comments, YAML front
  matter, link targets: :func:`without_markup`), and a figure the answer writes in words
  counts as kept where the same word follows it ("three times" keeps "3 times");
* **grounding** — of the answer's distinct content words (four letters or more, common
  function words aside, compared by a crude stem), at least :data:`MIN_GROUNDED_SHARE`
  must occur in the input or the instruction. Gemma 3 270M, given a session log of test
  runs, answered with a fluent text about "10-bit integers" and "storage devices" that
  kept enough small numbers to pass the figure check; a summary, even in its own words,
  mostly reuses the vocabulary of what it summarizes.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..text.tokens import TokenModel

__all__ = [
    "COPY_RUN_WORDS", "MAX_COPIED_SHARE", "MIN_GROUNDED_SHARE", "copied_share", "echo_so_far", "figures",
    "grounded_share", "rejection", "without_markup",
]  # fmt: skip

COPY_RUN_WORDS: Final = 8
MAX_COPIED_SHARE: Final = 0.4
ECHO_RUN_WORDS: Final = 6
TOKENS_PER_FIGURE: Final = 30
MIN_GROUNDED_SHARE: Final = 0.5
#: Below this many content words an answer is too short to judge by its vocabulary.
GROUNDING_MIN_WORDS: Final = 8

_WORD: Final = re.compile(r"\w+(?:[-'./:]\w+)*")
_NUMBER: Final = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
_LIST_MARKER: Final = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]", re.MULTILINE)
_IDENTIFIER: Final = re.compile(
    r"\b[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"  # snake_case
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b"  # camelCase
    r"|[\w.-]*/[\w./-]+"  # paths
    r"|\b[A-Za-z]+[0-9][A-Za-z0-9]*\b"  # e2e, v2, utf8
)
_URL: Final = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s<>()\[\]\"'`]+", re.IGNORECASE)
_WORD_PAIR: Final = re.compile(r"[A-Za-z]+/[A-Za-z]+")  # and/or, read/write: no path
_COMMENT: Final = re.compile(r"<!--.*?-->", re.DOTALL)
_FRONT_MATTER: Final = re.compile(r"\A\ufeff?---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_LINK_TARGET: Final = re.compile(r"\]\([^)\n]*\)")
_REFERENCE: Final = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$", re.MULTILINE)
_ATTRIBUTE: Final = re.compile(r"\b(?:href|src)\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+)", re.IGNORECASE)
_NUMBER_WORDS: Final = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {word: 10 * tens for tens, word in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), start=3)}
_WORD_THEN_WORD: Final = re.compile(r"\b([A-Za-z]+)(?=[ \t-]+([^\W\d_]+))")
_NUMBER_THEN_WORD: Final = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*)[ \t-]*([^\W\d_]+)")
_CONTENT: Final = re.compile(r"[^\W\d_]{4,}")
_SUFFIX: Final = re.compile(r"(?:ing|ies|ied|es|ed|s|y|e)$")
_FUNCTION_WORDS: Final = frozenset(
    "that this with from have been were they them their there which what when where then than also into only "
    "some such each more most other about after before over under both will would could should these those "
    "does done here very just like make made many much part parts text summary".split()
)
_MARKUP: Final = ("<text>", "</text>", "text:\n", "end of text")


def _words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def _runs(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def copied_share(answer: str, source: str, *, run: int = COPY_RUN_WORDS) -> float:
    """The share of ``answer``'s words (figures aside) in a run of ``run`` or more words copied from ``source``."""
    words = _words(answer)
    if len(words) < run:
        return 0.0
    seen = _runs(_words(source), run)
    covered = [False] * len(words)
    for start in range(len(words) - run + 1):
        if tuple(words[start : start + run]) in seen:
            for index in range(start, start + run):
                covered[index] = True
    # Figures are meant to be kept as written: a list of them copied is no copy of the text.
    prose = [index for index, word in enumerate(words) if not any(char.isdigit() for char in word)]
    if not prose:
        return 0.0
    return sum(covered[index] for index in prose) / len(prose)


def _stem(word: str) -> str:
    return _SUFFIX.sub("", word.casefold())[:6]


def _content(text: str) -> set[str]:
    return {_stem(word) for word in _CONTENT.findall(text) if word.casefold() not in _FUNCTION_WORDS}


def grounded_share(answer: str, source: str) -> float | None:
    """The share of ``answer``'s distinct content words found in ``source`` (None: too few to judge)."""
    words = _content(answer)
    if len(words) < GROUNDING_MIN_WORDS:
        return None
    return len(words & _content(source)) / len(words)


def _normal_number(number: str) -> str:
    return re.sub(r"(?<=\d),(?=\d{3}\b)", "", number)


def figures(text: str) -> set[str]:
    """The numbers (thousands separators removed) and identifiers ``text`` states."""
    found = {_normal_number(n) for n in _NUMBER.findall(_LIST_MARKER.sub(" ", text))}
    found.update(match.group() for match in _IDENTIFIER.finditer(text))
    return found


def echo_so_far(answer: str, instruction: str, source: str) -> str | None:
    """Why a partial answer is already certain junk (it began as a copy), else None.

    Cheap enough to run on every streamed token: only the answer's opening is read.
    """
    if any(mark in answer[:400].casefold() for mark in _MARKUP):
        return "it echoes the prompt's markup"  # Gemma 3 270M: "TEXT:" and the input, to max_tokens
    head = _words(answer[:400])
    if len(head) < ECHO_RUN_WORDS:
        return None
    opening = tuple(head[:ECHO_RUN_WORDS])
    if opening in _runs(_words(instruction), ECHO_RUN_WORDS):
        return "it echoes the instructions"
    if len(head) >= 2 * COPY_RUN_WORDS and copied_share(" ".join(head), source) >= 0.9:
        return "it repeats the text word for word"
    return None


def rejection(answer: str, *, source: str, instruction: str, target_tokens: int, model: TokenModel) -> str | None:
    """Why ``answer`` is no summary of ``source`` (asked for with ``instruction``), or None."""
    if not answer.strip():
        return "empty answer"
    lowered = answer.casefold()
    if any(mark in lowered for mark in _MARKUP):
        return "it echoes the prompt's markup"
    if _runs(_words(answer), ECHO_RUN_WORDS) & _runs(_words(instruction), ECHO_RUN_WORDS):
        return "it echoes the instructions"
    if answer.rstrip().endswith(":"):
        return "it announces an answer instead of giving one"
    if model.estimate(answer) >= model.estimate(source):
        return "it is not shorter than the text"
    share = copied_share(answer, source)
    if share > MAX_COPIED_SHARE:
        return f"it repeats the text verbatim ({share:.0%} of its words)"
    fault = _figure_fault(answer, source, instruction, target_tokens)
    if fault is not None:
        return fault
    grounded = grounded_share(answer, f"{source}\n{instruction}")
    if grounded is not None and grounded < MIN_GROUNDED_SHARE:
        return f"it is not about the text (only {grounded:.0%} of its words occur in it)"
    return None


def _occurs(number: str, text: str) -> bool:
    """``number`` in ``text`` as a whole number ("8" is not in "8003"; "3" is in "v3")."""
    return re.search(rf"(?<![\d.,]){re.escape(number)}(?![\d]|[.,]\d)", text) is not None


def without_markup(text: str) -> str:
    """``text`` without the metadata of its markup: HTML comments, YAML front matter, link
    targets (Markdown ``](...)``, reference definitions, ``href``/``src`` values).

    Their numbers and paths are no figures a summary must keep (an invented one is still
    caught: the answer is checked against the whole text).
    """
    text = _FRONT_MATTER.sub("", _COMMENT.sub(" ", text))
    text = _LINK_TARGET.sub("]", _REFERENCE.sub("", text))
    return _ATTRIBUTE.sub("", text)


def _identifiers(text: str) -> set[str]:
    """The identifiers, paths and URLs ``text`` states (plain ``word/word`` pairs aside)."""
    found = set(_URL.findall(text))
    found.update(m.group() for m in _IDENTIFIER.finditer(_URL.sub(" ", text)) if not _WORD_PAIR.fullmatch(m.group()))
    return {name.rstrip(".,;:!?") for name in found} - {""}


def _uncapitalized(name: str) -> str:
    """``name`` with its first letter in lower case: a model opening a sentence with ``test_tz_boundary`` writes
    'Test_tz_boundary' (SmolLM2-135M did)."""
    return name[:1].lower() + name[1:]


def _stated(name: str, source: str, instruction: str) -> bool:
    """Whether ``name`` occurs in ``source`` or ``instruction``, also as opening a sentence (:func:`_uncapitalized`)."""
    return any(form in text for form in {name, _uncapitalized(name)} for text in (source, instruction))


def _in_words(answer: str, source: str) -> set[str]:
    """The source's numbers the answer writes in words, each with the same following word
    ("three times" for "3 times", "ten minutes" for "10 minutes")."""
    said = {
        (str(_NUMBER_WORDS[word.casefold()]), _stem(after))
        for word, after in _WORD_THEN_WORD.findall(answer)
        if word.casefold() in _NUMBER_WORDS
    }
    if not said:
        return set()
    stated = {(_normal_number(number), _stem(after)) for number, after in _NUMBER_THEN_WORD.findall(source)}
    return {number for number, after in said & stated}


def _figure_fault(answer: str, source: str, instruction: str, target_tokens: int) -> str | None:
    stated = figures(without_markup(source))
    numbers = {_normal_number(n) for n in _NUMBER.findall(_LIST_MARKER.sub(" ", answer))}
    given = figures(source) | figures(instruction)  # "part 3 of 9" is the prompt's own figure
    invented = sorted(n for n in numbers if n not in given and not _occurs(n, source))
    if invented:
        return f"it states figures the text does not ({', '.join(invented[:4])})"
    named = sorted(n for n in _identifiers(answer) if not _stated(n, source, instruction))
    if named:
        return f"it states identifiers the text does not ({', '.join(named[:4])})"
    if not stated:
        return None
    said = figures(answer)
    said |= {_uncapitalized(name) for name in said}  # 'Test_tz_boundary' opening a sentence keeps it
    kept = stated & (said | _in_words(answer, source))
    needed = min(math.ceil(len(stated) / 3), max(1, target_tokens // TOKENS_PER_FIGURE))
    if len(kept) < needed:
        missing = sorted(stated - kept)[:4]
        return f"it drops the figures the text states (kept {len(kept)} of {len(stated)}; e.g. {', '.join(missing)})"
    return None
