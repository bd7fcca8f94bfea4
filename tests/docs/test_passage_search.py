"""doc_search answers with passages: the definition asked for comes first; hits share the budget."""

from __future__ import annotations

import json.decoder
from pathlib import Path

from ctxtrio.docs.render import render_search

from .conftest import opened

#: A real module of the standard library (its text is whatever this Python ships).
DECODER = Path(json.decoder.__file__)


async def test_a_class_asked_for_by_its_words_comes_first(tmp_path: Path) -> None:
    """'json decode error' brings `class JSONDecodeError` in the first hit, within 1,500 tokens."""
    async with opened(tmp_path, DECODER.parent) as ctx:
        await ctx.documents.ingest(file_path=str(DECODER), doc_id="decoder")
        found = await ctx.documents.search("json decode error", budget_tokens=1500)
    assert "class JSONDecodeError" in found.hits[0].text


async def test_a_function_asked_for_by_its_words_comes_first(tmp_path: Path) -> None:
    """'py scanstring' brings `def py_scanstring` in the first hit, within 1,500 tokens."""
    async with opened(tmp_path, DECODER.parent) as ctx:
        await ctx.documents.ingest(file_path=str(DECODER), doc_id="decoder")
        found = await ctx.documents.search("py scanstring", budget_tokens=1500)
    assert "def py_scanstring" in found.hits[0].text


async def test_hits_share_the_budget_and_say_where_they_are(tmp_path: Path) -> None:
    """At 1,000 tokens several hits are shown, the first the largest; cut ones give their line range."""
    async with opened(tmp_path, DECODER.parent) as ctx:
        await ctx.documents.ingest(file_path=str(DECODER), doc_id="decoder")
        found = await ctx.documents.search("JSONDecodeError raise", budget_tokens=1000)
    assert len(found.hits) >= 3
    assert found.hits[0].tokens >= max(hit.tokens for hit in found.hits[1:])
    text = render_search(found)
    for hit in found.hits:
        if hit.cut and hit.lines is not None:
            first, last, total = hit.lines
            assert 1 <= first <= last <= total
            assert f"#{hit.index} lines {first}-{last}" in text
    assert any(hit.cut for hit in found.hits) and "Whole: doc_window [doc_id #from]." in text


#: Node.js 20's doc/api/timers.md (tests/text/fixtures/NOTICE.txt): a `<!-- YAML -->` history under each entry.
TIMERS = Path(__file__).parents[1] / "text" / "fixtures" / "node_timers.md"


async def test_markdown_comments_are_not_shown_and_leave_room_for_the_answer(tmp_path: Path) -> None:
    """Searching Node's timers reference for `timeout.unref`: no hit shows a `<!-- YAML` history
    (a cut mark stands for it), the entry's sentence is in, the answer is within its budget."""
    async with opened(tmp_path, TIMERS.parent) as ctx:
        await ctx.documents.ingest(file_path=str(TIMERS), doc_id="timers")
        found = await ctx.documents.search("timeout.unref", budget_tokens=400)
        model = ctx.live.tokens.current
    text = render_search(found)
    assert "<!--" not in text and "-->" not in text
    assert "When called, the active `Timeout` object will not require the Node.js event" in text
    assert model.estimate(found.rendered) <= 400
