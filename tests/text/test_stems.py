"""The light stemmer's forms (``text/stems.py``): which forms of a word a search may also ask for."""

from __future__ import annotations

from ctxtrio.text.stems import inflections, light_stem


def test_inflections_are_the_forms_of_the_same_stem_the_word_first() -> None:
    """A word's regular forms: plural, -ed, -ing, a final -e, a consonant doubled before -ed/-ing; the word first."""
    assert inflections("aborted")[0] == "aborted"
    assert {"abort", "aborts", "aborting"} <= set(inflections("aborted"))
    assert {"dump", "dumps", "dumped"} <= set(inflections("dumping"))
    assert {"generate", "generates", "generating"} <= set(inflections("generated"))
    assert {"skipped", "skipping", "skips"} <= set(inflections("skip"))
    assert {"number", "numbered"} <= set(inflections("numbers"))
    for word in ("aborted", "dumping", "generated", "skip", "numbers", "files"):
        assert all(light_stem(form) == light_stem(word) for form in inflections(word)), word


def test_a_word_the_stemmer_leaves_alone_has_no_other_forms() -> None:
    """Words under 4 letters, with digits or of another script are only themselves; a kept double is not doubled again."""
    assert inflections("ids") == ("ids",)
    assert inflections("utf8") == ("utf8",)
    assert inflections("données") == ("données",)
    assert "callled" not in inflections("call") and "called" in inflections("call")


def test_a_stem_english_doubles_gives_the_forms_of_one_word_only() -> None:
    """notes/noted are note's, stats/statted stat's: one syllable ending in one vowel and one consonant
    doubles it before -ed/-ing, so the undoubled -ed/-ing and the -e forms belong to the word with an e."""
    for word in ("notes", "note", "noted", "noting"):
        assert set(inflections(word)) == {"note", "notes", "noted", "noting"}, word
    assert "not" not in inflections("notes") and "stat" not in inflections("states")
    assert set(inflections("stats")) == {"stat", "stats", "statted", "statting"}
    assert not {"state", "states", "stated"} & set(inflections("stat"))
    assert {"plan", "plans", "planning"} <= set(inflections("planned")) and "plane" not in inflections("planned")
    # Not such a stem: two syllables, a double, x / w / y, or s / z (buses is bus + es).
    assert "open" in inflections("opened") and "add" in inflections("added") and "fix" in inflections("fixed")
    assert "bus" in inflections("buses") and "base" in inflections("bases")
    for word in ("notes", "stats", "planned", "opened", "buses"):
        assert all(light_stem(form) == light_stem(word) for form in inflections(word)), word
