"""The programming thesaurus (``text/thesaurus.py``): the table's format, the shipped table, and what a query's words gain."""

from __future__ import annotations

from importlib import resources

import pytest

from ctxtrio.text import thesaurus
from ctxtrio.text.terms import unique_terms
from ctxtrio.text.thesaurus import TableError, alike, parse

_SMALL = """# a comment
[a topic]
unchangeable, cannot modify = immutable frozen lru_cache init
checksum = hash digest
"""


def test_a_line_maps_each_user_phrase_to_the_index_terms_of_its_group() -> None:
    """Comments and topic lines are skipped; each phrase of a group gains its terms, identifiers as the index holds them."""
    table = parse(_SMALL)
    assert (table.groups, table.phrases()) == (2, 3)
    assert alike(["unchangeable"], source=table) == {"unchangeable": ("immutable", "frozen", "lrucache", "init")}
    assert alike(["checksums"], source=table) == {"checksums": ("hash", "digest")}
    assert alike(["hash"], source=table) == {}


def test_a_phrase_needs_all_its_words_in_any_order_and_inflection() -> None:
    """'cannot modify' matches 'modifying ... cannot', not 'modify' alone."""
    table = parse(_SMALL)
    assert alike(["modifying", "list", "cannot"], source=table) == {
        "cannot": ("immutable", "frozen", "lrucache", "init")
    }
    assert alike(["modify", "list"], source=table) == {}


def test_a_phrase_goes_to_its_word_that_the_fewest_rows_hold() -> None:
    """Of a phrase's words, the rarer one by the counts gains its terms; of equals (or without counts), the later one."""
    table = parse("leading zeros = zfill\n")
    assert alike(["leading", "zeros"], {"leading": 40, "zeros": 3}, table) == {"zeros": ("zfill",)}
    assert alike(["leading", "zeros"], {"leading": 3, "zeros": 40}, table) == {"leading": ("zfill",)}
    assert alike(["zeros", "leading"], source=table) == {"leading": ("zfill",)}


def test_words_of_two_groups_gain_both() -> None:
    """A word in two groups gains the terms of both, in the table's order, each once."""
    table = parse("checksum = hash digest\nchecksum, fingerprint = digest sha256\n")
    assert alike(["checksum"], source=table) == {"checksum": ("hash", "digest", "sha256")}


@pytest.mark.parametrize(
    "line",
    [
        "no equals sign here",
        "unchangeable = ",
        " = immutable",
        "what type = type",  # a question word: a query never searches for it
        "the file = file",  # a stopword
        "Unchangeable = immutable",  # not lower case
        "base64 = b64encode",  # not letters only: never a plain word of a query
        "path list = sys.path",  # a dotted name is two terms
        "either = or",  # a stopword is never indexed
        "unchangeable, = immutable",  # an empty phrase
        "call an object = __call__",  # a dunder is its bare word in the index: 'call'
        "script folder = __dirname",  # likewise a name with a leading '_'
    ],
)
def test_a_line_off_the_format_is_refused_with_its_number(line: str) -> None:
    """A line without '=', with an empty side, a word a query drops, or a term the index does not hold as one."""
    with pytest.raises(TableError, match="^line 2: "):
        parse("# header\n" + line + "\n")


def test_the_shipped_table_is_large_parsed_and_says_how_it_was_written() -> None:
    """The shipped table parses (every term one index term), holds hundreds of groups, and its header says it
    was written without looking at the benchmark's questions."""
    text = resources.files("ctxtrio.text").joinpath("thesaurus.txt").read_text("ascii")
    assert "WITHOUT looking at" in text[:2_000]
    table = thesaurus.table()
    assert table.groups >= 1_000 and table.phrases() >= 2_000
    for phrases in table.by_first.values():
        for phrase in phrases:
            assert all(unique_terms(term) == [term] for term in phrase.terms), phrase


def test_the_shipped_table_speaks_for_software() -> None:
    """Words people use for a thing map to the documentation's: checksum -> hash, leading zeros -> zfill,
    unchangeable -> immutable, cut spaces -> strip, refcount -> incref, typeface -> font, hashmap -> dict;
    a word for no such thing gains nothing."""
    assert "hash" in alike(["checksum"])["checksum"]
    assert "zfill" in alike(["leading", "zeros"])["zeros"]
    assert "immutable" in alike(["unchangeable"])["unchangeable"]
    assert "strip" in alike(["cut", "spaces"])["spaces"]
    assert "incref" in alike(["refcount"])["refcount"]
    assert "font" in alike(["typeface"])["typeface"]
    assert "dict" in alike(["hashmap"])["hashmap"]
    assert alike(["zzzqx"]) == {}
    assert thesaurus.loaded()
