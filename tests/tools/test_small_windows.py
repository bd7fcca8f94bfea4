"""doc_window at a small budget: text, or a plain reason and the budget to pass (budget_tokens=60 showed 7 tokens)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from testkit.results import text_of
from tests.tools.test_sessions import call, opened

if TYPE_CHECKING:
    from pathlib import Path

_TEXT = "\n\n".join(
    f"# Part {part}\n\n" + " ".join(f"item{part}x{n} says something about the parser and the build" for n in range(60))
    for part in range(3)
)


def _shown(answer: str) -> int:
    """The tokens of text a window says it shows ("(42 tokens, estimated)")."""
    found = re.search(r"\((\d+) tokens, estimated\)", answer)
    assert found is not None, answer
    return int(found.group(1))


def _advised(reason: str, reads: str) -> int:
    """The budget a refusal says to pass to read ``reads``."""
    assert reason.startswith("Error: budget_tokens=60 cannot hold chunk #"), reason
    assert "this answer's own lines take about " in reason, reason
    found = re.search(rf"Pass budget_tokens=(\d+) or more to read {reads}\.$", reason)
    assert found is not None, reason
    return int(found.group(1))


async def test_a_small_window_shows_text_or_says_what_to_pass(tmp_path: Path) -> None:
    """A budget too small for the window's own lines is refused naming a budget that reads text, and
    the cursor stays; that budget shows that much text, and so does one a little larger (the head is
    kept out of the chunks' room: budget_tokens=200 showed 8 tokens when the fit shrank by shares)."""
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="d", text=_TEXT)
        refused = await call(client, "doc_window", doc_id="d", budget_tokens=60)
        assert refused.is_error
        advised = _advised(text_of(refused), "it whole")  # chunk #0 is its heading alone
        window = text_of(await call(client, "doc_window", doc_id="d", budget_tokens=advised))
        assert window.startswith('d "Part 0" chunk #0 of ') and "was cut" not in window, window  # the cursor stayed
        refused = await call(client, "doc_window", doc_id="d", budget_tokens=60, **{"from": 1})
        advised = _advised(text_of(refused), r"its start, or about \d+ to read it whole")
        cut = text_of(await call(client, "doc_window", doc_id="d", budget_tokens=advised, **{"from": 1}))
        assert "#1 was cut: from=1 with more budget_tokens reads it whole." in cut and _shown(cut) >= 48, cut
        larger = text_of(await call(client, "doc_window", doc_id="d", budget_tokens=200, **{"from": 1}))
        assert _shown(larger) >= 80, larger


async def test_a_chunk_shown_whole_at_any_budget_is_advised_the_smallest_that_shows_it(tmp_path: Path) -> None:
    """A heading's chunk is whole at packing's floor: the advice counted the widest head and said 100
    where 70 shows it; now the advice (rounded up to tens) shows it, and ten less is refused."""
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="d", text=_TEXT)
        advised = _advised(text_of(await call(client, "doc_window", doc_id="d", budget_tokens=60)), "it whole")
        less = await call(client, "doc_window", doc_id="d", budget_tokens=advised - 10)
        shown = text_of(await call(client, "doc_window", doc_id="d", budget_tokens=advised))
    assert less.is_error and text_of(less).startswith(f"Error: budget_tokens={advised - 10} cannot hold chunk #0")
    assert shown.startswith('d "Part 0" chunk #0 of ') and "was cut" not in shown, shown


async def test_reading_on_after_a_cut_shows_the_rest_of_the_chunk(tmp_path: Path) -> None:
    """doc_window without from at budget_tokens=400, as a small model pages: the window after one that
    cut #0 shows #0's rest, its lines in its header, and then #1 (user23: Paras 17-40 of 400 one-line
    paragraphs were never shown, the second window starting at #1's Para 41)."""
    text = "\n\n".join(f"Para {n} about retries and backoff number {n}." for n in range(400))
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="d", text=text)
        answers = [text_of(await call(client, "doc_window", doc_id="d", budget_tokens=400)) for _ in range(4)]
    first = answers[0]
    found = re.search(r"Next: #0 line (\d+) \(call doc_window again\)\. #0 was cut", first)
    assert found is not None, first
    assert re.search(rf"^\[#0 lines {found.group(1)}-\d+\]$", answers[1], re.MULTILINE), answers[1]
    shown = {int(n) for answer in answers for n in re.findall(r"^Para (\d+) ", answer, re.MULTILINE)}
    assert set(range(max(shown) + 1)) <= shown and max(shown) > 41, sorted(shown)


async def test_a_window_read_on_inside_a_chunk_fills_its_budget_with_the_next(tmp_path: Path) -> None:
    """doc_window without from at budget_tokens=400 through 400 one-line paragraphs: a window resumed
    inside a cut chunk goes on into the next chunk, cut in its turn, instead of stopping at it (read23:
    the third window showed 198 tokens of 400), and paging to the end shows every paragraph, in order
    (a window from a chunk's start shows the overlap with the chunk before again, as it always did)."""
    text = "\n\n".join(f"Para {n} about retries and backoff number {n}." for n in range(400))
    answers: list[str] = []
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="d", text=text)
        while not answers or "End of document" not in answers[-1]:
            answers.append(text_of(await call(client, "doc_window", doc_id="d", budget_tokens=400)))
            assert len(answers) < 60, answers[-1]
    assert min(_shown(answer) for answer in answers[:-1]) >= 260, [_shown(answer) for answer in answers]
    assert any(re.search(r"^\[#\d+ lines .*\n(?:.*\n)*\[#\d+\]$", answer, re.MULTILINE) for answer in answers)
    shown = [int(n) for answer in answers for n in re.findall(r"^Para (\d+) ", answer, re.MULTILINE)]
    assert list(dict.fromkeys(shown)) == list(range(400)), shown


async def test_a_model_paging_with_from_next_advances(tmp_path: Path) -> None:
    """A model that pages by sending the structured ``next`` back as ``from`` reads on: ``next`` is null
    while the cursor stands inside a cut chunk (null ``from`` is the cursor), where it named that chunk and
    from=0 showed the same cut window call after call (rev23)."""
    text = "\n\n".join(f"Para {n} about retries and backoff number {n}." for n in range(400))
    shown: list[int] = []
    nexts: list[object] = []  # the structured next of every window
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="d", text=text)
        start: object = None
        for _ in range(60):
            answer = await call(client, "doc_window", doc_id="d", budget_tokens=400, **{"from": start})
            assert answer.structured_content is not None, text_of(answer)
            shown += [int(n) for n in re.findall(r"^Para (\d+) ", text_of(answer), re.MULTILINE)]
            if answer.structured_content["at_end"]:
                break
            start = answer.structured_content["next"]
            nexts.append(start)
    assert None in nexts, nexts
    assert list(dict.fromkeys(shown)) == list(range(400)), shown
