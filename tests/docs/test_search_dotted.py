"""A short query holding a dotted name (``Buffer.allocUnsafe``) brings the definition of its
last part under that qualifier first: on Node's real ``buffer.md`` the entry is a heading after
a label (``### Static method: `Buffer.allocUnsafe(size)```), and chunks that name it in their
own headings (``Buffer.from()``, ``Buffer.alloc()``, and ``Buffer.allocUnsafe()``) outrank it by BM25."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.definitions import Name, asked_name, defines
from ctxtrio.text.query import query_terms

from .conftest import opened

FIXTURES = Path(__file__).resolve().parent / "fixtures"


async def test_the_definition_of_a_dotted_name_comes_first(tmp_path: Path) -> None:
    """The first hit of ``Buffer.allocUnsafe`` holds its entry's heading (before: a chunk on
    Buffer.from/alloc/allocUnsafe in general, the entry not in the first two)."""
    async with opened(tmp_path, FIXTURES) as ctx:
        await ctx.documents.ingest(file_path=str(FIXTURES / "node_buffer.md"))
        result = await ctx.documents.search("Buffer.allocUnsafe", budget_tokens=100_000)
        heading = "### Static method: `Buffer.allocUnsafe(size)`"
        assert heading in result.hits[0].text, [hit.trail for hit in result.hits]


def test_a_dotted_name_asks_for_its_last_part_under_its_qualifier() -> None:
    """``Buffer.allocUnsafe`` asks for allocunsafe of buffer; headings as Node writes them define it."""
    assert asked_name("Buffer.allocUnsafe", query_terms("Buffer.allocUnsafe")) == Name("allocunsafe", "buffer")
    assert asked_name("threading.Event.wait", query_terms("threading.Event.wait")) == Name("wait", "event")
    assert asked_name("json decode error", query_terms("json decode error")) == Name("jsondecodeerror")
    assert (
        asked_name("What does fs.rm do to a folder and what is returned", ["fs", "rm", "folder", "returned", "x"])
        is None
    )
    assert defines("### Static method: `Buffer.allocUnsafe(size)`\n", "allocunsafe", "buffer")
    assert defines("## Class: `Timeout`\n", "timeout", "timers")
    assert not defines("### Static method: `Buffer.allocUnsafeSlow(size)`\n", "allocunsafe", "buffer")
    assert defines("### `fs.rm(path[, options], callback)`\n", "rm", "fs")
    assert not defines("### `fsPromises.rm(path[, options])`\n", "rm", "fs")
    assert defines("   .. method:: wait(timeout=None)\n", "wait", "event")  # an entry nested in its class
