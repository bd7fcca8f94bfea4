"""Query expansion for session recall: the rules doc_search follows (:func:`~ctxtrio.text.neighbours.expand`),
over one session's entries instead of the documents' chunks. Pure, once the tables are read (:func:`load_tables`).

A plain word of a query also searches for its other regular forms that more of the session's entries
hold and, when few entries hold it (at most 1%), for the programming thesaurus's words for it and its
word neighbours that more of them hold: "folder" finds an entry that says "directory". The counts
``expand`` decides by are the session index's document frequencies over live entries, the numbers
its BM25 scores use, as doc_search's are the store's over current chunks. The thesaurus's words for a
word the session says often are left out: doc_search searches them only at its last level, among rows
holding one word of the query at most (:meth:`~ctxtrio.text.neighbours.Group.level_terms`), and recall
ranks every match at once. Over ``stress/recall_bench.py`` they lost two natural questions at 1,000
tokens ("chunks" gaining "chunk", "groups" "group") for one paraphrase.

Weights (:func:`term_weights`), as doc_search's last level gives them (rows.fts_levels): a form and a
word of the thesaurus add their BM25 share as the word asked does, a neighbour half of its share.
Each of them is held by more entries than the word asked (``expand`` takes only such words), so its
IDF is lower: an entry holding a substitute scores below one holding the word asked the same number
of times at the same length, as far as a BM25 score lets it. The words are scored by the index's
postings (:meth:`~.state.bm25.TermIndex.scores`), no pass over the entries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import trio

from ..text import neighbours
from ..text.neighbours import Group, counted_first, expand, expandable, neighbours_of, rare_words

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .state.bm25 import TermIndex

__all__ = ["NEAR_WEIGHT", "load_tables", "term_weights"]

#: A neighbour's share of an entry's BM25 score against the word asked (doc_search's last level
#: names a word with neighbours twice and each neighbour once: ``Group.last_terms``).
NEAR_WEIGHT: Final = 0.5


async def load_tables() -> None:
    """Read the tables query expansion uses (:func:`~ctxtrio.text.neighbours.load_tables`), once a
    process, in a thread, not on the event loop (doc_search: :func:`~ctxtrio.docs.search.load_tables`)."""
    if not neighbours.tables_loaded():
        await trio.to_thread.run_sync(neighbours.load_tables)


def term_weights(index: TermIndex, query: str, terms: Sequence[str]) -> dict[str, float]:
    """The terms a recall of ``query`` (``terms``: its terms) scores, each with the weight of its BM25 share:
    ``terms`` 1, and their other forms, thesaurus words (1) and neighbours (:data:`NEAR_WEIGHT`) that
    :func:`~ctxtrio.text.neighbours.expand` gives by the session's live counts. The tables must be read."""
    # What :func:`~ctxtrio.text.neighbours.wanted` would add, without working out the forms and thesaurus
    # words again: the neighbours of the plain words few entries hold.
    rows = index.live_docs
    counts = {word: index.count(word) for word in dict.fromkeys([*terms, *counted_first(query, terms)])}
    near = (word for term in rare_words(expandable(query, terms), counts, rows) for word in neighbours_of(term))
    counts |= {word: index.count(word) for word in near if word not in counts}
    weights = dict.fromkeys(terms, 1.0)
    for word in expand(query, terms, counts, rows):
        if isinstance(word, Group):
            weights |= dict.fromkeys(word.level_terms(), 1.0)
            weights |= dict.fromkeys(word.near, NEAR_WEIGHT)
    return weights
