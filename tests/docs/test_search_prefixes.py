"""A long question with a hyphenated word (``re-raising``) over the real Python docs: the prefix
alone is left out and the joined word is a form of the word after it, so the page that answers
comes first (before: ``re`` and ``reraising`` made seven terms, and the search went from all of
them straight to any: curses' "before re-raising" came first, add_note's entry not in the answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .conftest import PY_SOURCES, opened

if TYPE_CHECKING:
    from pathlib import Path

#: exceptions.rst (the answer) and the pages that ranked above it before.
_PAGES = (
    "library/exceptions",
    "library/curses",
    "c-api/sys",
    "library/concurrent.futures",
    "library/sys",
    "tutorial/errors",
    "reference/simple_stmts",
    "library/asyncio-task",
    "whatsnew/3.11",
    "whatsnew/3.4",
    "library/dis",
    "library/re",
)


@pytest.mark.skipif(not PY_SOURCES.is_dir(), reason="Debian's python3.11-doc is not installed")
async def test_a_hyphenated_word_of_a_long_question_over_the_python_docs(tmp_path: Path) -> None:
    async with opened(tmp_path) as ctx:
        for page in _PAGES:
            text = (PY_SOURCES / f"{page}.rst.txt").read_text(encoding="utf-8")
            await ctx.documents.ingest(text=text, doc_id=page.replace("/", "."))
        question = "How do I add a note to an exception before re-raising it?"
        ranked = await ctx.documents.search(question, budget_tokens=100_000, limit=3)
        answer = await ctx.documents.search(question, budget_tokens=1000)
    assert [hit.doc_id for hit in ranked.hits][:1] == ["library.exceptions"], [hit.doc_id for hit in ranked.hits]
    assert "Add the string ``note`` to the exception's notes" in "".join(hit.text for hit in answer.hits)
