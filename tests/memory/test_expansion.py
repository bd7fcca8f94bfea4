"""Recall expands a query's plain words as doc_search does: forms, the shipped thesaurus, word neighbours."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.expansion import NEAR_WEIGHT, term_weights
from ctxtrio.memory.state.bm25 import TermIndex
from ctxtrio.text import neighbours, thesaurus
from ctxtrio.text.neighbours import neighbours_of
from ctxtrio.text.terms import terms

if TYPE_CHECKING:
    from pathlib import Path

#: Entries that say none of the words below: the session's other notes (200, so that a word one
#: entry holds is one the session seldom says, at most 1% of its entries).
FILLER = [f"note {n}: the parser reads tabs in cell {n} of the table" for n in range(200)]


def indexed(texts: list[str]) -> tuple[TermIndex, bytearray, list[int]]:
    """An index over ``texts`` (ordinals 0, 1, ...), its live flags and lengths, as a session keeps them."""
    index = TermIndex()
    live = bytearray()
    lengths: list[int] = []
    for ordinal, text in enumerate(texts):
        distinct, length = index.add(ordinal, terms(text))
        index.account(distinct, length, 1)
        live.append(1)
        lengths.append(length)
    return index, live, lengths


@pytest.fixture(autouse=True)
def tables() -> None:
    thesaurus.load()
    neighbours.load()


def test_a_rare_word_gains_the_thesaurus_words_and_its_neighbours_at_half() -> None:
    """'folder', held by one entry of 203: the thesaurus's 'directory' weighs as the word, the neighbour 'files' half."""
    assert "files" in neighbours_of("folder")
    index, _, _ = indexed(
        [*FILLER, "the folder", "a directory", "a directory", "files files", "files", "files", "files"]
    )
    assert term_weights(index, "which folder?", ["folder"]) == {"folder": 1.0, "directory": 1.0, "files": NEAR_WEIGHT}


def test_the_word_asked_ranks_above_its_substitutes_held_the_same_way() -> None:
    """An entry holding the word asked scores above one holding its thesaurus word or its neighbour instead,
    each once at the same length: they are held by more entries (a lower IDF), a neighbour counts half."""
    texts = [*FILLER, "logs go to the folder", "logs go to the directory", "logs go to the files"]
    texts += ["a directory", "files", "files", "files"]
    index, live, lengths = indexed(texts)
    weights = term_weights(index, "which folder?", ["folder"])
    scores = index.scores(list(weights), live, lengths, weights)
    own, alike, near = scores[200], scores[201], scores[202]
    assert own > alike > near > 0
    assert index.scores(["folder"], live, lengths) == {200: own}
    assert alike == index.scores(["directory"], live, lengths)[201]
    assert near == pytest.approx(NEAR_WEIGHT * index.scores(["files"], live, lengths)[202])


def test_a_common_word_does_not_expand_to_its_neighbours() -> None:
    """'folder' held by over 1% of the entries (the session says it that way): no neighbour, and no thesaurus
    word, though more entries hold 'directory' (doc_search searches it only where any one word would do, at the
    last of its levels, which recall has not: :meth:`~ctxtrio.text.neighbours.Group.level_terms`)."""
    index, _, _ = indexed([*FILLER, *["the folder"] * 3, *["a directory"] * 5, *["files"] * 20])
    assert term_weights(index, "which folder?", ["folder"]) == {"folder": 1.0}


@pytest.mark.parametrize("expansion", [True, False])
async def test_recall_finds_the_entry_saying_directory_for_folder(tmp_path: Path, expansion: bool) -> None:
    """Through the service: 'which folder holds them?' brings the entry that says 'directory', only with
    ``query_expansion`` on (the default); off, nothing matches."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, query_expansion=expansion)
    async with open_wiring(config) as ctx:
        for text in FILLER[:20]:
            await ctx.sessions.append("s", text)
        wanted = await ctx.sessions.append("s", "Snapshots are written to the state directory, one per session.")
        await ctx.sessions.append("s", "The journal is fsynced once a group.")
        found = await ctx.sessions.recall("s", "Which folder holds them?", budget_tokens=500)
    assert [entry.id for entry in found.entries] == ([wanted.entry.id] if expansion else [])
    assert found.matched == (1 if expansion else 0)
