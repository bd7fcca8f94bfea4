"""Over Python 3.11's whole reST docs (skipped without them): windows without index entries, a
sentence shown apart whole, an API entry's first sentence above a window deep in it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio.text import edges, literal, passages

from .conftest import PY_SOURCES, normal, opened

if TYPE_CHECKING:
    from pathlib import Path

#: Debian's python3.11-doc: the reST sources of Python 3.11's documentation (497 files).

#: (question, budget, page, answer): what a model asks, and the page's words that answer it.
QUESTIONS = [
    ("How do I force some function arguments to be passed by keyword?", 1000, "tutorial.controlflow",
     "place an ``*`` in the arguments list just before the first"),
    ("How do I write a type hint for a callback function parameter?", 1000, "library.typing",
     "``Callable[[int], str]`` is a function of (int) -> str."),
    ("What does the global statement do?", 500, "reference.simple_stmts", "listed identifiers are to be interpreted"),
]  # fmt: skip


@pytest.fixture(scope="module")
def python_docs() -> Path:
    if not (PY_SOURCES / "tutorial" / "controlflow.rst.txt").is_file():
        pytest.skip("apt-get install python3.11-doc")
    return PY_SOURCES


async def test_answers_found_inside_the_window_rules(
    tmp_path: Path, python_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each question's right page is ranked first and its answer is inside the budget: the keyword-only
    sentence shown apart whole (a third of the room; in a quarter it stopped a line before the answer),
    typing's `.. data:: Callable` with its first sentence above the window on callback types, and the
    global statement's first sentence no longer pushed out by its `.. index::` entries. With the three
    rules off (a quarter, no entry line, index entries shown) none of the answers is inside."""
    async with opened(tmp_path, python_docs) as ctx:
        for path in sorted(python_docs.rglob("*.rst.txt")):
            doc_id = str(path.relative_to(python_docs)).removesuffix(".rst.txt").replace("/", ".")
            await ctx.documents.ingest(file_path=str(path), doc_id=doc_id[-64:].lstrip(".-_"))
        found = [await ctx.documents.search(query, budget_tokens=budget) for query, budget, _, _ in QUESTIONS]
        monkeypatch.setattr(edges, "_WHOLE_SHARE", 4)
        monkeypatch.setattr(passages, "_entry_line", lambda *_: [])
        monkeypatch.setattr(edges, "_rst_hidden", lambda _: [])
        passages._lines.cache_clear()  # the lines of a text, with their hidden ones, are cached
        literal.literal_lines.cache_clear()
        before = [await ctx.documents.search(query, budget_tokens=budget) for query, budget, _, _ in QUESTIONS]
        passages._lines.cache_clear()
    for (query, _, page, answer), now, then in zip(QUESTIONS, found, before, strict=True):
        assert now.hits[0].doc_id == page and normal(answer) in normal(now.rendered), query
        assert normal(answer) not in normal(then.rendered), query
