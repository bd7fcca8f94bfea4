"""Over whole manuals (skipped without them): a query's identifier brings the chunk of the first
page that defines it (ranking's INTRO_WEIGHT), and release notes stand back (RELEASE_WEIGHT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio.docs import ranking, search

from .conftest import PY_SOURCES, normal, opened

if TYPE_CHECKING:
    from pathlib import Path

#: Debian's python3.11-doc: the reST sources of Python 3.11's documentation (497 files).


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("work_mem default", "The default value is four megabytes (4MB)"),
        ("log_min_duration_statement zero", "Setting this to zero prints all statement durations"),
    ],
)
async def test_the_entry_of_a_written_identifier_is_shown_first(
    tmp_path: Path, pg_manual: Path, query: str, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """runtime-config-resource ranks first, but through the chunk after work_mem's entry, whose
    entries (maintenance_work_mem, ...) name work_mem more often in a window; the chunk holding
    'work_mem (integer)', the setting's own entry, comes first now, its answer inside 500 tokens
    (without the rule it was not). Likewise log_min_duration_statement's in runtime-config-logging."""
    async with opened(tmp_path, pg_manual) as ctx:
        for path in sorted(pg_manual.iterdir()):
            await ctx.documents.ingest(file_path=str(path), doc_id=path.stem)
        found = await ctx.documents.search(query, budget_tokens=500)
        monkeypatch.setattr(ranking, "INTRO_WEIGHT", 0.0)
        before = await ctx.documents.search(query, budget_tokens=500)
    assert normal(answer) in normal(found.rendered)
    assert normal(answer) not in normal(before.rendered)


@pytest.fixture(scope="module")
def python_docs() -> Path:
    if not (PY_SOURCES / "whatsnew" / "2.5.rst.txt").is_file():
        pytest.skip("apt-get install python3.11-doc")
    return PY_SOURCES


async def test_release_notes_give_way_to_the_reference(
    tmp_path: Path, python_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'What happens if both the try block and the finally block return a value?': What's New in
    Python 2.5 (PEP 341: Unified try/except/finally) came first, before the reference's finally
    clause; now the reference's chunk, and its answer, come first (inside 500 tokens; not
    without the rule)."""
    query = "What happens if both the try block and the finally block return a value?"
    answer = "clause will always be the last one executed"
    async with opened(tmp_path, python_docs) as ctx:
        for path in sorted(python_docs.rglob("*.rst.txt")):
            doc_id = str(path.relative_to(python_docs)).removesuffix(".rst.txt").replace("/", ".")
            await ctx.documents.ingest(file_path=str(path), doc_id=doc_id[-64:].lstrip(".-_"))
        found = await ctx.documents.search(query, budget_tokens=500)
        monkeypatch.setattr(ranking, "RELEASE_WEIGHT", 0.0)
        before = await ctx.documents.search(query, budget_tokens=500)
    assert found.hits[0].doc_id == "reference.compound_stmts"
    assert normal(answer) in normal(found.rendered)
    assert normal(answer) not in normal(before.rendered)


async def test_a_statement_named_in_capitals_is_searched_for(tmp_path: Path, pg_manual: Path) -> None:
    """'Does EXPLAIN ANALYZE actually execute the statement?' searched for analyze, execute and
    statement only ('explain' is a question word) and showed EXECUTE's pages; written in capitals,
    EXPLAIN is searched for, and sql-explain's answer is inside 1,000 tokens (the same question in
    lower case, which still leaves 'explain' out, does not find it)."""
    answer = "causes the statement to be actually executed, not only planned"
    async with opened(tmp_path, pg_manual) as ctx:
        for path in sorted(pg_manual.iterdir()):
            await ctx.documents.ingest(file_path=str(path), doc_id=path.stem)
        found = await ctx.documents.search("Does EXPLAIN ANALYZE actually execute the statement?", budget_tokens=1000)
        lower = await ctx.documents.search("Does explain analyze actually execute the statement?", budget_tokens=1000)
    assert normal(answer) in normal(found.rendered)
    assert normal(answer) not in normal(lower.rendered)


async def test_the_definition_of_a_name_among_the_pools_rows_is_found(
    tmp_path: Path, python_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'breakpoint()': bdb's chunks name Breakpoint (its class) more than library.functions'
    entry '.. function:: breakpoint(*args, **kws)' does, which is the 11th row; read among the
    pool's rows because it defines the name asked for, it comes among the first with bdb's
    class Breakpoint (case aside, the same name), and its answer with it (not when only the first
    10 rows are read for a definition)."""
    answer = "This function drops you into the debugger at the call site."
    async with opened(tmp_path, python_docs) as ctx:
        for path in sorted(python_docs.rglob("*.rst.txt")):
            doc_id = str(path.relative_to(python_docs)).removesuffix(".rst.txt").replace("/", ".")
            await ctx.documents.ingest(file_path=str(path), doc_id=doc_id[-64:].lstrip(".-_"))
        found = await ctx.documents.search("breakpoint()", budget_tokens=1000)
        monkeypatch.setattr(search, "_pool_depth", lambda limit: limit)
        before = await ctx.documents.search("breakpoint()", budget_tokens=1000)
    assert "library.functions" in [hit.doc_id for hit in found.hits[:2]]
    assert normal(answer) in normal(found.rendered)
    assert normal(answer) not in normal(before.rendered)
