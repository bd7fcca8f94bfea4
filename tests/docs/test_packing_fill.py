"""Packing hits whose headers are costly: real commit messages as documents (a 41-character id, the first
line as title, one-line paragraphs), as stress/recall_bench.py --docs ingests them."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.arguments import first_line
from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.render import hit_header, search_hit_header
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()
FIXTURE = Path(__file__).parent / "fixtures" / "commit_messages.txt"


def messages() -> list[Candidate]:
    """The four messages doc_search ranks first for 'vector_upkeep.py' over this repository's history,
    in that order, each one chunk of its own document."""
    out: list[Candidate] = []
    for block in FIXTURE.read_text(encoding="utf-8").split("=== ")[1:]:
        doc_id, _, text = block.partition("\n")
        text = text.strip()
        chunk = StoredChunk(0, text, 0, len(text), (), MODEL.estimate(text))
        out.append(Candidate(doc_id, first_line(text), chunk, 10.0 - len(out)))
    return out


def cost(candidates: list[Candidate], budget: int) -> tuple[list[str], int]:
    hits, _, used = pack_hits(candidates, budget, MODEL, query_terms("vector_upkeep.py"))
    assert used == sum(MODEL.estimate(search_hit_header(hit)) + 1 + hit.tokens for hit in hits)
    assert used <= budget
    return [hit.doc_id for hit in hits], used


def test_the_fixture_is_the_costly_shape() -> None:
    """Each hit's header alone is about a hundred tokens, and the first message is one 579-character line."""
    candidates = messages()
    assert len(candidates) == 4 and len(candidates[0].chunk.text) == 579 and "\n" not in candidates[0].chunk.text
    for candidate in candidates:
        assert MODEL.estimate(hit_header(candidate.doc_id, candidate.title, 0)) >= 80


def test_a_hit_whose_header_leaves_no_room_in_its_share_does_not_end_the_answer() -> None:
    """Over 454 tokens (a 500-token answer less its head line) the first message is cut to its half and the
    second one's share (a quarter) holds its header but no text: the second is shown with a share that
    holds some text, and the answer fills the budget instead of stopping at the first hit (225 tokens)."""
    shown, used = cost(messages(), 454)
    assert shown[:2] == [candidate.doc_id for candidate in messages()[:2]]
    assert used >= 0.8 * 454


def test_when_one_hit_fits_it_is_the_best_not_a_later_one_with_a_cheaper_header() -> None:
    """At 204 tokens only one of these hits fits: it is the first, though its header leaves no text in half
    the budget and a later hit's short header would (skipping it for them lost every answer at 250 tokens)."""
    candidates = messages()
    cheap = [Candidate(f"d{n}", "", c.chunk, c.score) for n, c in enumerate(candidates[1:])]
    shown, used = cost([candidates[0], *cheap], 204)
    assert shown == [candidates[0].doc_id]
    assert used >= 0.8 * 204


def test_a_hit_showing_its_documents_first_line_leaves_the_title_out_and_gives_its_room_to_the_text() -> None:
    """The title of a text ingested inline is its first line: the first message, cut from its start, shows
    it, so its header is the document id alone (62 tokens, not 106) and its text takes those tokens (164
    of its 227-token share, not 120); the fourth, cut from its middle, keeps its title."""
    candidates = messages()
    hits, _, _ = pack_hits(candidates, 454, MODEL, query_terms("vector_upkeep.py"))
    first = hits[0]
    assert first.cut and first.text.startswith(candidates[0].title)
    assert search_hit_header(first) == f"[{candidates[0].doc_id} #0]"
    assert first.tokens > 227 - MODEL.estimate(hit_header(first.doc_id, first.title, 0)) - 1
    last = pack_hits(candidates, 954, MODEL, query_terms("vector_upkeep.py"))[0][-1]
    assert last.lines is not None and last.lines[0] > 1
    assert f'"{candidates[3].title}"' in search_hit_header(last)
