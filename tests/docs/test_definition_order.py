"""docs/defined.DefinitionOrder: one search's definitions first, each candidate's text read once for the name."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ctxtrio.docs import defined
from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.defined import DefinitionOrder, definitions_first
from ctxtrio.docs.packing import Candidate
from ctxtrio.text.definitions import defines
from ctxtrio.text.query import query_terms

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

#: Python 3.11's json/decoder.py: the class's line, and lines that only use the name.
DEFINING = (
    'class JSONDecodeError(ValueError):\n    """Subclass of ValueError with the following additional properties:\n'
)
USING = '        raise JSONDecodeError("Expecting value", s, err.value) from None\n'
#: Go 1.19's encoding/json/stream.go: a method of Decoder, and a call of it.
DECODE = "func (dec *Decoder) Decode(v any) error {\n\tif dec.err != nil {\n"
CALL = "\tif err := dec.Decode(&v); err != nil {\n"


def _candidates(*rows: tuple[str, str, str]) -> list[Candidate]:
    """Candidates of (document, title, text), each its document's chunk 0."""
    return [
        Candidate(doc, title, StoredChunk(0, text, 0, len(text), (), 9), 1.0, source=f"/src/{title}")
        for doc, title, text in rows
    ]


def test_ordering_again_after_the_candidates_moved_gives_what_ordering_afresh_gives() -> None:
    """The order made before re-ranking, then the candidates moved (here reversed) and ordered again by the same
    DefinitionOrder, is what a fresh ordering of the moved candidates gives: for a name, a qualified name and a
    member (its definitions marked where they start), as the search's two orderings were before, each afresh."""
    cases = {
        "json decode error": _candidates(
            ("a", "a.py", USING), ("b", "decoder.py", DEFINING), ("c", "c.py", USING), ("d", "d.py", DEFINING)
        ),
        "json.JSONDecodeError": _candidates(
            ("x", "x.py", DEFINING), ("json", "json.py", USING), ("json2", "json.py", DEFINING)
        ),
        "json decoder decode": _candidates(("m", "main.go", CALL), ("s", "stream.go", DECODE), ("t", "t.go", CALL)),
    }
    for query, candidates in cases.items():
        terms = query_terms(query)
        order = DefinitionOrder(terms, query)
        assert order.name is not None
        once = order.first(candidates)
        assert once == definitions_first(candidates, terms, query)
        moved = list(reversed(once))
        assert order.first(moved) == definitions_first(moved, terms, query), query
        assert once != candidates, query  # each case moves a definition up


async def test_a_search_reads_each_candidates_text_once_for_the_name_it_asks_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``json decode error`` over 12 files that raise JSONDecodeError and the one that defines it: the search
    orders its candidates before re-ranking and after, and asks which define the name on the way, yet each
    candidate's text is read once (the real :func:`~ctxtrio.text.definitions.defines`, counted); before, each
    ordering read every text again. The definition is still first."""
    texts: Counter[str] = Counter()

    def counting(text: str, identifier: str, qualifier: str | None = None) -> bool:
        texts[text] += 1
        return defines(text, identifier, qualifier)

    monkeypatch.setattr(defined, "defines", counting)
    async with opened(tmp_path) as ctx:
        for n in range(12):
            body = f"def parse{n}(s):\n    # json decode error {n}\n" + USING * 3
            await ctx.documents.ingest(text=body, doc_id=f"user{n}", title=f"user{n}.py")
        await ctx.documents.ingest(text=DEFINING + USING, doc_id="decoder", title="decoder.py")
        result = await ctx.documents.search("json decode error", budget_tokens=1000)
    assert result.hits[0].doc_id == "decoder"
    assert texts
    assert max(texts.values()) == 1, texts.most_common(3)
