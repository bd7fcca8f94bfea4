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
    second one's share (a quarter) holds its header but no text: the second is given a share that holds
    some text, and is shown whole (05e17c6 stopped at the first hit, 225 tokens in all)."""
    hits, _, used = pack_hits(messages(), 454, MODEL, query_terms("vector_upkeep.py"))
    assert [hit.doc_id for hit in hits[:2]] == [candidate.doc_id for candidate in messages()[:2]]
    assert hits[0].cut and not hits[1].cut
    assert cost(messages(), 454) == ([hit.doc_id for hit in hits], used) and used > 300


def test_when_one_hit_fits_it_is_the_best_not_a_later_one_with_a_cheaper_header() -> None:
    """At 204 tokens only one of these hits fits: it is the first, though its header leaves no text in half
    the budget and a later hit's short header would (skipping it for them lost every answer at 250 tokens)."""
    candidates = messages()
    cheap = [Candidate(f"d{n}", "", c.chunk, c.score) for n, c in enumerate(candidates[1:])]
    shown, used = cost([candidates[0], *cheap], 204)
    assert shown == [candidates[0].doc_id]
    assert used >= 0.8 * 204


def test_a_hit_showing_its_documents_first_line_leaves_the_title_out_and_gives_its_room_to_the_text() -> None:
    """The title of a text ingested inline is its first line. A message shown whole, or cut from its start,
    shows it, so its header is the document id alone (66 tokens for the fourth message, not 110), and a
    passage from the start takes the title's tokens: 128 tokens of text in 200, where paying the title
    left 89. A passage from further in keeps its title."""
    candidates = messages()
    whole = pack_hits(candidates, 954, MODEL, query_terms("vector_upkeep.py"))[0]
    assert not whole[0].cut and search_hit_header(whole[0]) == f"[{candidates[0].doc_id} #0]"
    assert whole[-1].lines is not None and whole[-1].lines[0] > 1
    assert f'"{candidates[3].title}"' in search_hit_header(whole[-1])
    fourth = candidates[3]
    start = pack_hits([fourth], 200, MODEL, query_terms("doctor --repair drops rows"))[0][0]
    assert start.lines is not None and start.lines[0] == 1 and start.text.startswith(fourth.title)
    assert search_hit_header(start) == f"[{fourth.doc_id} #0 lines 1-{start.lines[1]}]"
    assert start.tokens > 200 - MODEL.estimate(hit_header(fourth.doc_id, fourth.title, 0, (13, 13, 13))) - 1


def test_a_one_line_message_too_long_for_its_share_shows_its_sentence_densest_in_the_query() -> None:
    """The first message is one 579-character line: in its 120 tokens it shows its last sentence, the one
    naming vector_upkeep.py with its size, not the characters around the file's first mention."""
    first = pack_hits(messages(), 454, MODEL, query_terms("vector_upkeep.py"))[0][0]
    assert first.cut and first.lines is None
    assert first.text.startswith("[...] No behaviour change:")
    assert first.text.endswith("vectors.py 383 lines, vector_upkeep.py 76")
