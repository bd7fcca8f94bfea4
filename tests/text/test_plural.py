"""Counts and their nouns, and the range a past-the-end answer offers (text/plural.py)."""

from __future__ import annotations

from ctxtrio.text.plural import first_to_last, plural


def test_one_is_singular_and_many_are_plural() -> None:
    """'1 chunk', '2 chunks', '1,200 live entries': an irregular plural is given."""
    assert plural(1, "chunk") == "1 chunk"
    assert plural(0, "chunk") == "0 chunks"
    assert plural(1200, "live entry", "live entries") == "1,200 live entries"


def test_the_range_of_one_item_is_a_single_value() -> None:
    """One item is 'from=0', not 'from=0 to 0'; five are 'from=0 to 4'."""
    assert first_to_last("from", 1) == "from=0"
    assert first_to_last("offset", 5) == "offset=0 to 4"
