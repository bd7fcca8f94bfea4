"""doc_search at a small budget: passages of whole words within the budget, or a plain reason and the budget to pass."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from testkit.results import text_of
from tests.docs.conftest import PY_SOURCES
from tests.tools.test_sessions import call, opened

if TYPE_CHECKING:
    from pathlib import Path

_WORDS = re.compile(r"[^\W_]+")


async def test_a_small_search_shows_whole_words_within_its_budget_or_says_what_to_pass(tmp_path: Path) -> None:
    """Pages ingested as text (their title a long first line) searched at budget_tokens=50 to 150: budget_tokens=50
    answered 83 tokens, '[...] : Tim [...]' under a 30-token title. Now every answer is within its budget and its
    text is words of the page, or it is refused naming a larger budget that answers."""
    pages = {name: PY_SOURCES / "library" / f"{name}.rst.txt" for name in ("subprocess", "json")}
    if not all(page.is_file() for page in pages.values()):
        pytest.skip("apt-get install python3.11-doc")
    words = {word for page in pages.values() for word in _WORDS.findall(page.read_text(encoding="utf-8"))}
    refused: dict[int, str] = {}
    async with opened(tmp_path) as (ctx, client):
        for name, page in pages.items():
            await call(client, "doc_ingest", doc_id=name, text=page.read_text(encoding="utf-8"))
        model = ctx.live.counter.model
        for query in ("timeout", "Popen returncode", "json dumps indent"):
            for budget in range(50, 160, 10):
                answer = text_of(await call(client, "doc_search", query=query, budget_tokens=budget))
                assert model.estimate(answer) <= budget, (query, budget, answer)
                found = re.fullmatch(r"Error: .* pass budget_tokens=(\d+) or more\.", answer)
                if found is not None:
                    refused[budget] = query
                    advised = int(found.group(1))
                    assert advised > budget, answer
                    shown = text_of(await call(client, "doc_search", query=query, budget_tokens=advised))
                    assert not shown.startswith("Error") and model.estimate(shown) <= advised, shown
                    continue
                hits = re.split(r"^\[\w+ (?:\"[^\n]*\" )?#\d+[^\n]*\]$", answer, flags=re.MULTILINE)[1:]
                assert hits, answer
                assert set(_WORDS.findall(" ".join(hits))) <= words, (query, budget, answer)
    assert 50 in refused, refused


async def test_a_small_search_showing_a_chunk_whole_does_not_mark_it_cut(tmp_path: Path) -> None:
    """Under a long title, a one-sentence chunk shown whole at budget_tokens=80 (the header leaving the title out)
    ended in '[...]' as if cut, while the head said the hit fits whole; it ends where the chunk does."""
    sentence = "Set the retry timeout in seconds with the timeout key of the widget section."
    title = "The reference manual of the widget framework, chapter seven: configuration files and their many options"
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="w", text=sentence, title=title)
        answers = [
            text_of(await call(client, "doc_search", query="timeout", budget_tokens=budget)) for budget in (80, 90)
        ]
    for answer in answers:
        assert answer.endswith(f"[w #0]\n{sentence}"), answer
