"""A chunk's heading trail is searchable with its text: on real reST, ``threading.Event.wait``
finds the chunk under ``class Event`` that holds the ``wait`` entry, though its text never
names ``threading``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk, chunk_body, chunk_rows
from ctxtrio.docs.render import render_search, search_hit_header
from ctxtrio.store.index_tables import SCHEMA_VERSION, TOKENIZER
from ctxtrio.text.terms import terms

from .conftest import opened

FIXTURES = Path(__file__).resolve().parent / "fixtures"


async def test_a_word_only_the_trail_holds_finds_the_chunk(tmp_path: Path) -> None:
    """threading.rst and multiprocessing.rst (which documents its own Event and wait): the
    threading chunk holding ``.. method:: wait`` of ``class Event`` is among the first two hits."""
    async with opened(tmp_path, FIXTURES) as ctx:
        for name in ("python_threading.rst.txt", "python_multiprocessing.rst.txt"):
            await ctx.documents.ingest(file_path=str(FIXTURES / name), doc_id=name.split(".")[0])
        result = await ctx.documents.search("threading.Event.wait", budget_tokens=100_000)
        first = [(hit.doc_id, hit.trail) for hit in result.hits[:2]]
        wanted = [
            hit
            for hit in result.hits[:2]
            if hit.doc_id == "python_threading" and "class Event" in hit.trail and ".. method:: wait" in hit.text
        ]
        assert wanted, first


def test_chunk_rows_index_the_trail_in_its_own_column() -> None:
    """The row of a chunk record carries its text's terms and its trail's, apart."""
    chunk = StoredChunk(3, "Block until the flag is true.", 0, 29, (":mod:`threading`", "class Event"), 8)
    (row,) = chunk_rows({"kind": "chunk", **chunk_body(chunk)})
    assert row.item == "3" and "block" in terms(row.terms) and "threading" not in terms(row.terms)
    assert {"threading", "event"} <= set(terms(row.heading))


async def test_an_index_of_schema_2_is_rebuilt_with_the_trails(tmp_path: Path) -> None:
    """An index written before trails were indexed (schema 2, fully caught up, so nothing
    looks missing) is emptied and re-indexed from the journals on opening: every document
    stays searchable, and a word only a trail holds now finds its chunk."""
    filler = "".join(f"Paragraph {n} says little of note about the weather on the island.\n\n" for n in range(60))
    text = f"# Quokka habits\n\nThey smile at visitors.\n\n{filler}## Diet\n\nLeaves and grasses, mostly at night.\n"
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=text, doc_id="q")
        await ctx.documents.ingest(text="# Wombats\n\nThey dig burrows.\n", doc_id="w")
        path = ctx.data.index_path
        journals = [(name, mark) for name, (mark, _) in (await ctx.store.inventory()).items()]
    new = sqlite3.connect(path)
    rows = new.execute("SELECT terms, journal, item, line_start, line_end FROM chunks").fetchall()
    new.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE journals (name TEXT PRIMARY KEY, indexed_offset INTEGER NOT NULL);"
        "CREATE VIRTUAL TABLE chunks USING fts5(terms, journal UNINDEXED, item UNINDEXED, line_start UNINDEXED,"
        f' line_end UNINDEXED, tokenize="{TOKENIZER}");'
        "PRAGMA user_version = 2;"
    )
    old.executemany("INSERT INTO journals VALUES (?, ?)", journals)
    old.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", rows)
    old.commit()
    old.close()
    async with opened(tmp_path) as ctx:
        diet = (await ctx.documents.search("quokka night", budget_tokens=100_000)).hits[0]
        assert (diet.doc_id, diet.trail) == ("q", ("Quokka habits", "Diet")) and "Quokka" not in diet.text
        assert [hit.doc_id for hit in (await ctx.documents.search("burrows")).hits] == ["w"]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    check.close()


async def test_a_hit_found_by_its_heading_says_so_in_its_header(tmp_path: Path) -> None:
    """A search for a word only a heading holds: each hit whose chunk lacks the word shows the
    trail in its header (the model sees why it matched); the hit whose text holds it does not."""
    filler = "".join(f"Paragraph {n} says little of note about the weather on the island.\n\n" for n in range(200))
    text = f"# Quokka habits\n\nThey smile at visitors.\n\n{filler}"
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=text, doc_id="q")
        result = await ctx.documents.search("quokka", budget_tokens=2000, limit=5)
    shown = render_search(result)
    assert len(result.hits) >= 2
    for hit in result.hits:
        header = search_hit_header(hit)
        assert f"{header}\n{hit.text}" in shown
        assert not hit.under or "quokka" not in hit.text.lower(), (hit.index, hit.text[:80])
        assert ("| under Quokka habits" in header) == hit.under, header
        assert "quokka" in f"{header}\n{hit.text}".lower()
    assert any(hit.under for hit in result.hits) and any(not hit.under for hit in result.hits)
