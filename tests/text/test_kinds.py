"""Tests for ctxtrio.text.kinds: the kind of a text, by extension, then by content."""

from __future__ import annotations

import json.decoder
import re
from pathlib import Path

import pytest

from ctxtrio.text.kinds import _ANY_SIGN, _MACROS, Kind, kind_for

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("docs/guide.md", Kind.MARKDOWN),
        ("index.RST", Kind.RST),
        ("manual.adoc", Kind.ASCIIDOC),
        ("server.log", Kind.TEXT),
        ("json/decoder.py", Kind.PYTHON),
        ("app.tsx", Kind.JAVASCRIPT),
        ("main.go", Kind.GO),
        ("lib.rs", Kind.RUST),
        ("Program.cs", Kind.JAVA),
        ("Main.java", Kind.JAVA),
        ("_sources/library/json.rst.txt", Kind.RST),
    ],
)
def test_extension_decides(name: str, kind: Kind) -> None:
    """A known extension decides the kind whatever the content looks like."""
    assert kind_for("# Title\n\ndef f():\n    pass\n", name) is kind


def test_first_name_with_a_known_extension_wins() -> None:
    """The path comes first; a title with an extension counts when the path has none."""
    assert kind_for("x", "notes", "decoder.py") is Kind.PYTHON
    assert kind_for("x", "a.rst", "decoder.py") is Kind.RST
    assert kind_for("x", None, "b.md") is Kind.MARKDOWN


def test_content_sniffed_for_real_files() -> None:
    """Without an extension, real files are recognised by their lines."""
    assert kind_for(Path(json.decoder.__file__).read_text(encoding="utf-8")) is Kind.PYTHON
    assert kind_for((FIXTURES / "email_architecture.rst").read_text(encoding="utf-8")) is Kind.RST
    assert kind_for((FIXTURES / "cmake-qt.7.rst").read_text(encoding="utf-8"), "notes.txt") is Kind.RST
    assert kind_for((FIXTURES / "manual.md").read_text(encoding="utf-8")) is Kind.MARKDOWN
    assert kind_for((FIXTURES / "sample.py.txt").read_text(encoding="utf-8"), "sample.py.txt") is Kind.PYTHON


def test_sniffing_other_kinds() -> None:
    """AsciiDoc titles, Go and a shebang are recognised; prose stays markdown."""
    assert kind_for("= Guide\n:toc: left\n\n== Install\n\nRun it.\n") is Kind.ASCIIDOC
    assert kind_for('package main\n\nimport (\n\t"fmt"\n)\n\nfunc main() {\n}\n') is Kind.GO
    assert kind_for("#!/usr/bin/env python3\nprint(1)\n") is Kind.PYTHON
    assert kind_for("Just some words.\n\nAnd more words, def not code.\n") is Kind.MARKDOWN


def test_markdown_with_fenced_code_stays_markdown() -> None:
    """Python inside fences does not make a markdown document code."""
    text = "# API\n\n```python\ndef a():\n    pass\ndef b():\n    pass\nimport os\n```\n\n## More\n"
    assert kind_for(text) is Kind.MARKDOWN


# The patterns these were written from: a leading ``\b``, and a lazy scan for the marker.
_MACROS_BY_BOUNDARY = re.compile(
    r"\b(?:link|linkgit|image|xref|mailto|footnote|kbd|anchor|pass):[^\s\[\]]*\[[^\]\n]*\]"
)
_LABELED_LAZY = re.compile(r"\n(?:[^\s:][^\n]*?(?::{2,4}|;;)[ \t]*\r?\n[ \t]*+[^\s])")


@pytest.mark.parametrize(
    "text",
    [
        "see linkgit:git-add[1] and link:x[y]",
        "hyperlink:x[y] xlink:image:a[b] link:a[b]link:c[d]",
        "footnote:[note] kbd:[Ctrl] mailto:a@b[me] anchor:x[] pass:[<b>] xref:x[] image::a.png[b]",
        "é_link:x[y] 1link:x[y] (link:x[y]) linkgit:[] linkgit :x[y] link:x y[z]",
    ],
)
def test_macros_found_from_their_colon(text: str) -> None:
    """The inline macros counted are those of the ``\\b``-led pattern, ending at the same places."""
    assert [m.end() for m in _MACROS.finditer(text)] == [m.end() for m in _MACROS_BY_BOUNDARY.finditer(text)]


@pytest.mark.parametrize(
    "text",
    [
        "\nterm::\n  text",
        "\n;;\nx",
        "\na;;\nx",
        "\n:a::\nx",
        "\nab:::: \r\n\tx",
        "\na: b :: c\nx",
        "\na::b\nx",
        "\nx;:\ny",
        "\nterm::\n\n",
    ],
)
def test_labeled_items_as_the_lazy_scan_finds_them(text: str) -> None:
    """A labeled-list item is a line whose marker follows its first character, then its text."""
    signs = [(m.end(), m.lastgroup) for m in _ANY_SIGN.finditer(text)]
    lazy = [m.end() for m in _LABELED_LAZY.finditer(text)]
    assert [end for end, name in signs if name == "asciidoc_more"] == lazy
