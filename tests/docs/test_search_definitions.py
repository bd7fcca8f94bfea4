"""doc_search over real Python modules: a function or class asked for by its words brings its definition first.

The stdlib's ``json/decoder.py`` and ``json/scanner.py`` (read from the installed
Python) are ingested as files, with the rest of the ``json`` package beside them as
competition; the first hit of a 1,500-token answer must hold the definition.
"""

from __future__ import annotations

import json.decoder
import re
from pathlib import Path

import pytest

from ctxtrio.docs import search
from ctxtrio.text.asked import spelled_identifier
from ctxtrio.text.definitions import defines

from .conftest import opened

JSON = Path(json.decoder.__file__).parent


@pytest.mark.parametrize(
    ("query", "definition", "trail"),
    [
        ("json decode error", "class JSONDecodeError(ValueError):", None),
        ("py scanstring", "def py_scanstring(", ("def py_scanstring",)),
        ("py make scanner", "def py_make_scanner(", None),
        ("JSONDecoder raw_decode", "def raw_decode(", ("class JSONDecoder", "def raw_decode")),
        ("JSONDecodeError", "class JSONDecodeError(ValueError):", None),
        ("what is a json decode error", "class JSONDecodeError(ValueError):", None),
    ],
)
async def test_definition_comes_first(
    tmp_path: Path, query: str, definition: str, trail: tuple[str, ...] | None
) -> None:
    """The first hit holds the definition (and, where it starts the chunk, carries its trail)."""
    async with opened(tmp_path, JSON) as ctx:
        for name in ["decoder.py", "scanner.py", "encoder.py", "__init__.py", "tool.py"]:
            await ctx.documents.ingest(file_path=str(JSON / name))
        result = await ctx.documents.search(query, budget_tokens=1500)
        first = result.hits[0]
        assert definition in first.text, [hit.trail for hit in result.hits]
        if trail is not None:
            assert first.trail == trail


async def test_inline_code_with_a_title_is_split_at_definitions(tmp_path: Path) -> None:
    """Inline text titled ``decoder.py`` is read as Python: its chunks carry definition trails."""
    text = (JSON / "decoder.py").read_text(encoding="utf-8")
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=text, title="decoder.py")).doc
        outline = await ctx.documents.outline(doc.doc_id)
        trails = {entry.trail for entry in outline.entries}
        assert ("def py_scanstring",) in trails
        assert not any("Use speedup" in title for trail in trails for title in trail)


def test_defines_recognises_definitions_only() -> None:
    """A definition line of the spelled name counts; a use of it does not."""
    name = spelled_identifier(["json", "decode", "error"])
    assert name == "jsondecodeerror"
    assert defines("x = 1\nclass JSONDecodeError(ValueError):\n", name)
    assert not defines("raise JSONDecodeError('Expecting value', s, err.value)\n", name)
    assert defines(".. exception:: json.JSONDecodeError(msg, doc, pos)\n", name)
    assert defines("### `JSONDecodeError`\n\nRaised when...\n", name)
    # The Python docs' C entries (c-api/list.rst, c-api/typeobj.rst): the declared name, not its type.
    assert defines(".. c:function:: PyObject* PyList_New(Py_ssize_t len)\n", "pylistnew")
    assert not defines(".. c:function:: PyObject* PyList_New(Py_ssize_t len)\n", "pyobject")
    assert defines(".. c:type:: PyObject *(*vectorcallfunc)(PyObject *callable, size_t nargsf)\n", "vectorcallfunc")
    assert defines("   .. c:member:: void *buf\n", "buf")
    assert spelled_identifier(["jsondecodeerror", "json", "decode", "error"]) == "jsondecodeerror"
    assert (
        spelled_identifier(["jsondecoder", "json", "decoder", "rawdecode", "raw", "decode"]) == "jsondecoderrawdecode"
    )
    assert spelled_identifier(["a", "b", "c", "d", "e"]) is None
    assert re.fullmatch(r"[a-z]+", spelled_identifier(["py", "scanstring"]) or "")


async def test_a_definition_below_the_first_rows_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name asked for alone, used more often in 11 other documents than where it is defined:
    its definition is the 12th row and comes first (read among the pool's rows for the definition
    it holds); a row of those that defines nothing does not join."""
    async with opened(tmp_path) as ctx:
        for n in range(11):
            uses = f"Call frobnicate() here; frobnicate again. Example {n} of frobnicate.\n" * 3
            await ctx.documents.ingest(text=uses, title=f"uses{n}.md")
        await ctx.documents.ingest(text="Other words.\n\n" * 40 + "def frobnicate(x):\n    return x\n", title="lib.py")
        found = await ctx.documents.search("frobnicate()", budget_tokens=1000)
        monkeypatch.setattr(search, "_pool_depth", lambda limit: limit)
        before = await ctx.documents.search("frobnicate()", budget_tokens=1000)
    assert "def frobnicate(x):" in found.hits[0].text
    assert all("def frobnicate" not in hit.text for hit in before.hits)
