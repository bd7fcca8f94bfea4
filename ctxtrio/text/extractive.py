"""Extractive summaries: verbatim sentences chosen by TF-ISF, when no LLM can summarize.

Sentences are found by :func:`~.sentences.split_sentences`'s rules (:mod:`.sentences`); each is scored by the summed inverse
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
from typing import TYPE_CHECKING, Final

from ctxtrio.text.prose import without_markup
from ctxtrio.text.sentences import sentences_of
from ctxtrio.text.terms import terms

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctxtrio.text.sentences import Sentence
    from ctxtrio.text.tokens import TokenModel

__all__ = ["first_sentence", "summarize_extractive"]

_LEAD_BOOST: Final = (1.15, 1.10, 1.05)  # multipliers for the first three sentences
_SECTION_LEAD_BOOST: Final = 1.5  # the first sentence after a heading
_MIN_TERMS: Final = 3  # headings and shorter sentences are chosen only as a last resort

_LEADING_CODE: Final = re.compile(r"(?:[ \t]*\r?\n| {4,}[^\n]*\n)+")


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
    sentences = sentences_of(without_markup(text, headings=True, signatures=True)) or sentences_of(text)
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
    sentences: list[Sentence] = []
    for source in _readings(text, past_code):
        sentences = sentences_of(source)
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


def _rank(sentences: list[Sentence]) -> tuple[list[int], int]:
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


def _join(sentences: list[Sentence]) -> str:
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
