"""A short query holding a dotted name (``Buffer.allocUnsafe``) brings the definition of its
last part under that qualifier first: on Node's real ``buffer.md`` the entry is a heading after
a label (``### Static method: `Buffer.allocUnsafe(size)```), and chunks that name it in their
own headings (``Buffer.from()``, ``Buffer.alloc()``, and ``Buffer.allocUnsafe()``) outrank it by BM25."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.asked import asked_name
from ctxtrio.text.definitions import Name, defines
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


async def test_a_flag_of_a_multi_signature_entry_is_found_on_its_modules_page(tmp_path: Path) -> None:
    """``re.VERBOSE`` is the second signature of ``.. data:: X`` (Sphinx: one a line) in both the
    library's ``re`` page and the regex HOWTO; the ``re`` page's entry comes first and its answer is
    inside 1,000 tokens (before: the HOWTO's section, then a cut ``re`` chunk without it)."""
    async with opened(tmp_path, FIXTURES) as ctx:
        await ctx.documents.ingest(file_path=str(FIXTURES / "python_regex_howto_flags.rst.txt"), doc_id="howto.regex")
        await ctx.documents.ingest(file_path=str(FIXTURES / "python_re_flags.rst.txt"), doc_id="library.re")
        result = await ctx.documents.search("re.VERBOSE", budget_tokens=1000)
        assert result.hits[0].doc_id == "library.re", [(hit.doc_id, hit.index) for hit in result.hits]
        assert "Whitespace within the pattern is ignored" in result.hits[0].text


def test_every_signature_of_a_sphinx_entry_defines_its_name() -> None:
    """Further signatures of an entry define their names, up to a blank line or the entry's
    options; a line after one ending in a backslash goes on with that signature."""
    entry = ".. data:: X\n          VERBOSE\n   :noindex:\n\n   This flag allows you to write\n"
    assert defines(entry, "verbose", "re") and defines(entry, "x", "re")
    assert not defines(entry, "this")
    assert defines("   .. function:: range(stop)\n                 range(start, stop[, step])\n", "range")
    assert not defines(".. data:: X\n   :noindex:\n\n   VERBOSE is on\n", "verbose")
    assert not defines(".. class:: Parser(prog=None, \\\n                 epilog=None)\n", "epilog")
    assert defines(".. class:: A\n           pkg.B\n", "b", "pkg") and not defines(
        ".. class:: A\n           pkg.B\n", "b", "other"
    )


async def test_a_dotted_name_whose_last_part_is_a_stopword_finds_its_entry(tmp_path: Path) -> None:
    """``shutil.which``: "which" is a stopword many chunks of a manual hold (2,643 of python3.11-doc's
    7,973), so the best 8 rows holding it alone were other pages' and shutil's entry was not among
    the candidates; searched with its qualifier, among more rows, the entry comes first. Here ten
    short notes that say "which" and "shutil" often stand for the rest of the manual (before: they
    took the 8 rows, and shutil's opening chunk came first, its ``which`` entry not shown)."""
    async with opened(tmp_path, FIXTURES) as ctx:
        for n in range(10):
            text = f"Note {n}: which shutil call, which one? shutil.copy or shutil.move, which is faster."
            await ctx.documents.ingest(text=text, doc_id=f"note.{n}")
        await ctx.documents.ingest(file_path=str(FIXTURES / "python_shutil.rst.txt"), doc_id="library.shutil")
        result = await ctx.documents.search("shutil.which", budget_tokens=1000)
        assert ".. function:: which(cmd" in result.hits[0].text, [(hit.doc_id, hit.index) for hit in result.hits]
