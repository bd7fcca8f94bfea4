"""A word of the query that a text holds only by the documentation's word for it (a thesaurus word
the search looked for: ``CPUs`` for "processors") counts a share of that word: in the passage score
that ranks a chunk, in the window shown; never as much as the word itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate
from ctxtrio.docs.ranking import rerank
from ctxtrio.text.neighbours import Group, SearchWord, alike_of
from ctxtrio.text.passages import best_passage, marked_text, passage_score
from ctxtrio.text.query import query_terms
from ctxtrio.text.runs import ALIKE_SHARE, RANK_SHARE
from ctxtrio.text.tokens import TokenModel
from ctxtrio.text.words import alike_weights, rarity_weights

MODEL = TokenModel.flat()
OS_RST = Path("/usr/share/doc/python3.11/html/_sources/library/os.rst.txt")
#: What the search would pass for "processors" had the thesaurus given it "cpus" (the manual's word).
ALIKE = (("processors", ("cpus",)),)
TERMS = query_terms("how many processors does this system have")
FILLER = [f"   Line {n} tells of another matter entirely, at some length." for n in range(30)]
#: Rows holding each word in a corpus of 10,000: the question's word is rare, the manual's less so.
RARITY = rarity_weights({"processors": 3, "system": 900}, 10_000, {"cpus": 40})


def _text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_the_query_words_are_the_ones_the_tests_expect() -> None:
    assert TERMS == ["processors", "system"]


def test_a_line_holding_the_alike_word_scores_a_share_of_the_word() -> None:
    """'the number of CPUs in the system' holds 'system', and 'processors' by 'CPUs': RANK_SHARE more
    than without the alike word; the line that says 'processors' itself scores more still."""
    text = _text("Return the number of CPUs in the system.")
    alone = passage_score(text, TERMS, 120, 0.25)
    liked = passage_score(text, TERMS, 120, 0.25, ALIKE)
    own = passage_score(_text("Return the number of processors in the system."), TERMS, 120, 0.25, ALIKE)
    assert alone == 1.0
    assert liked == pytest.approx(1.0 + RANK_SHARE) and RANK_SHARE > 0
    assert own > liked


def test_a_text_holding_only_the_alike_word_scores() -> None:
    """Without any of the query's own words, the alike word alone gives the text a score (it had none)."""
    text = _text("The count of CPUs.")
    assert passage_score(text, TERMS, 120, 0.25) == 0.0
    assert passage_score(text, TERMS, 120, 0.25, ALIKE) == pytest.approx(RANK_SHARE) and RANK_SHARE > 0


def test_the_window_settles_on_the_line_holding_the_alike_word() -> None:
    """A line saying 'system' comes first; the window for "how many processors does this system have"
    shows the one saying CPUs, which holds no word of the query: as the query's own words alone chose,
    it showed the first."""
    text = _text(
        ".. function:: confstr(name)",
        "",
        "   Return string-valued system configuration values.",
        *FILLER[:12],
        ".. function:: cpu_count()",
        "",
        "   Return how many CPUs there are.",
        *FILLER[12:],
    )
    liked = best_passage(text, TERMS, 30, MODEL, rarity=RARITY, named=TERMS, alike=ALIKE)
    alone = best_passage(text, TERMS, 30, MODEL, rarity=RARITY, named=TERMS)
    assert liked is not None and alone is not None
    assert "how many CPUs" in marked_text(text, liked)
    assert "how many CPUs" not in marked_text(text, alone)


def test_the_query_own_word_outweighs_its_alike_word() -> None:
    """A line saying 'processors' beats one saying 'CPUs', whichever comes first."""
    text = _text(
        "   Return the number of CPUs in the system.",
        *FILLER[:12],
        "   The processors of the system are counted here.",
        *FILLER[12:],
    )
    passage = best_passage(text, TERMS, 30, MODEL, rarity=RARITY, named=TERMS, alike=ALIKE)
    assert passage is not None
    shown = marked_text(text, passage)
    assert "processors of the system" in shown and "CPUs" not in shown


def test_an_alike_word_weighs_as_the_most_common_of_the_words_for_it() -> None:
    """'remember' is the rarest word of the query (1.0); 'cache' and 'cached' are the manual's words
    for it: a line holding one counts ALIKE_SHARE of the more common one's weight, at most of the word's."""
    rarity = {"remember": 1.0, "function": 0.1, "cache": 0.3, "cached": 0.6}
    weights = alike_weights((("remember", ("cache", "cached")),), ["remember", "function"], rarity, ALIKE_SHARE)
    assert weights == pytest.approx((ALIKE_SHARE * 0.3, ALIKE_SHARE * 0.1))
    rare = alike_weights((("function", ("callable",)),), ["remember", "function"], {**rarity, "callable": 0.9}, 0.5)
    assert rare == pytest.approx((0.5, 0.05))  # never more than the word's own


def test_the_alike_words_are_weighed_against_the_query_rarest() -> None:
    """rarity_weights' ``also``: the alike words' weights beside the query's, by the same highest."""
    plain = rarity_weights({"processors": 3, "system": 900}, 10_000)
    assert {term: RARITY[term] for term in plain} == plain
    assert plain["system"] < RARITY["cpus"] < 1.0
    assert rarity_weights({"cpus": 40}, 10_000, {"processors": 3})["processors"] == 1.0  # at most 1.0


def test_only_the_words_the_corpus_seldom_says_lend_their_alike_words() -> None:
    """A word searched with its thesaurus words at every level (the corpus seldom says it) passes them on;
    one the corpus says often ('total', with 'add') does not: the documentation's word already."""
    words: list[SearchWord] = [
        Group(("processors",), alike=("cpus",), everywhere=True),
        Group(("total",), alike=("add",)),
        "system",
    ]
    assert alike_of(words) == (("processors", ("cpus",)),)


def _candidate(doc_id: str, text: str) -> Candidate:
    return Candidate(doc_id, doc_id, StoredChunk(0, text, 0, len(text), ("Functions",), MODEL.estimate(text)), 10.0)


def test_reranking_puts_the_chunk_holding_the_alike_word_first() -> None:
    """Equal BM25 and headings: the chunk saying CPUs comes before the one saying only 'system'."""
    configuration = _candidate("configuration", "Return string-valued system configuration values.\n")
    cpus = _candidate("cpus", "Return the number of CPUs in the system.\n")
    assert [c.doc_id for c in rerank([configuration, cpus], TERMS)] == ["configuration", "cpus"]
    assert [c.doc_id for c in rerank([configuration, cpus], TERMS, alike=ALIKE)] == ["cpus", "configuration"]


@pytest.mark.skipif(not OS_RST.is_file(), reason="Debian's python3.11-doc is not installed")
def test_the_window_over_os_miscellaneous_system_information() -> None:
    """os.rst's 'Miscellaneous System Information', from its heading to cpu_count's entry (Python 3.11,
    Debian's python3.11-doc): by the query's words alone the window settles on confstr's lines that
    say 'system'; with 'cpus' for 'processors' it shows "Return the number of CPUs in the system."."""
    source = OS_RST.read_text(encoding="utf-8")
    start = source.index("Miscellaneous System Information\n")
    text = source[start : source.index(".. function:: getloadavg()", start)]
    liked = best_passage(text, TERMS, 60, MODEL, rarity=RARITY, named=TERMS, alike=ALIKE)
    alone = best_passage(text, TERMS, 60, MODEL, rarity=RARITY, named=TERMS)
    assert liked is not None and alone is not None
    assert "Return the number of CPUs in the system." in marked_text(text, liked)
    assert "Return the number of CPUs in the system." not in marked_text(text, alone)
