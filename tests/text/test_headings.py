"""``only_headed`` (from the line terms ranking cached, only lines that may hold a query term)
gives the answer the full term split of the text gives, on real files and tricky identifiers."""

from __future__ import annotations

import random
from pathlib import Path

from ctxtrio.text.headings import only_headed
from ctxtrio.text.query import query_terms
from ctxtrio.text.terms import terms
from ctxtrio.text.words import held_words, identifier_parts, word_groups

FIXTURES = [
    *sorted((Path(__file__).resolve().parent / "fixtures").iterdir()),
    *sorted((Path(__file__).resolve().parents[1] / "docs" / "fixtures").glob("*.*t*")),
]


def _exact(query: list[str], headings: tuple[str, ...], text: str) -> bool:
    group = word_groups(tuple(query), stem=False)
    parts = identifier_parts(group)
    return bool(held_words(terms(" ".join(headings)), group, parts) - held_words(terms(text), group, parts))


def test_only_headed_agrees_with_the_full_split_on_real_text() -> None:
    """Pieces of real files, queries of their own words and of words elsewhere, headings
    holding some of them: the cached line terms never disagree with splitting the text into terms."""
    rng = random.Random(20)
    checked = 0
    for path in FIXTURES:
        text = path.read_text(encoding="utf-8", errors="replace")
        words = [word for word in text.split() if len(word) > 3][:5000]
        if len(text) < 2000 or not words:
            continue
        for _ in range(60):
            start = rng.randrange(0, len(text) - 1500)
            piece = text[start : start + 1500]
            query = query_terms(" ".join(rng.sample(words, 3)))
            headings = (" ".join(rng.sample(words, 2)), rng.choice(["", *query]))
            assert only_headed(query, headings, piece) == _exact(query, headings, piece), (query, headings)
            checked += 1
    assert checked >= 300


def test_identifiers_held_by_their_parts_or_whole() -> None:
    """``pg_hba`` in the heading: a text writing ``pg_hba`` or ``PgHba`` holds it, one with only
    ``hba`` does not; the same for a word with no parts."""
    query = query_terms("pg_hba rules")
    assert not only_headed(query, ("The pg_hba.conf File",), "Each record of pg_hba names a host.")
    assert not only_headed(query, ("The pg_hba.conf File",), "class PgHba: pass")
    assert only_headed(query, ("The pg_hba.conf File",), "Each record names an hba host.")
    assert only_headed(query, ("Client rules",), "Nothing here about the question.")
    assert not only_headed(query, ("Unrelated",), "Nothing here.")
