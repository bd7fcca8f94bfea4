"""HTML documentation pages to plain text with markdown headings, for the retrieval benchmark.

Built on the stdlib's :class:`html.parser.HTMLParser` (no new dependency). Made for
DocBook-generated manuals such as Debian's ``postgresql-doc-15``: the navigation bars
(``navheader``, ``navfooter``) and tables of contents (``toc``) are dropped, ``h1``-``h4``
become ``#`` headings, ``pre`` blocks are kept verbatim in fences, paragraphs are
re-wrapped to 79 columns (as hand-written reST or markdown would be), list items start
with ``- ``, table cells are joined by `` | ``. Deterministic: the same page gives the
same text.

Run ``python stress/html_text.py SRC_DIR DEST_DIR`` to convert every ``*.html`` of
``SRC_DIR`` into ``DEST_DIR/<name>.md``.
"""

from __future__ import annotations

import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

__all__ = ["convert_dir", "html_to_text"]

_SKIPPED_CLASSES: Final = frozenset({"navheader", "navfooter", "toc"})
_SKIPPED_TAGS: Final = frozenset({"head", "script", "style"})
_HEADINGS: Final = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 4, "h6": 4}
_BLOCKS: Final = frozenset(
    {"p", "div", "dl", "dt", "dd", "ul", "ol", "li", "table", "tr", "blockquote", "br", "hr", "caption"}
)
_VOID: Final = frozenset({"br", "hr", "img", "meta", "link", "input", "col", "area", "base", "wbr"})
_WIDTH: Final = 79


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._inline: list[str] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, skipping started here)
        self._skip = 0
        self._pre = 0
        self._heading = 0
        self._prefix = ""

    # -- structure -------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        skipping = tag in _SKIPPED_TAGS or bool(classes & _SKIPPED_CLASSES)
        if tag not in _VOID:
            self._stack.append((tag, skipping))
        if skipping:
            self._skip += 1
        if self._skip:
            return
        if tag == "pre":
            self._flush()
            self._pre += 1
            self._inline.append("")
        elif tag in _HEADINGS:
            self._flush()
            self._heading = _HEADINGS[tag]
        elif tag in _BLOCKS:
            self._flush()
            if tag == "li":
                self._prefix = "- "
        elif tag in ("td", "th") and self._inline and self._inline[-1].strip():
            self._inline.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        while self._stack:
            opened, skipping = self._stack.pop()
            self._close(opened, skipping)
            if opened == tag:
                break

    def _close(self, tag: str, skipping: bool) -> None:
        if skipping:
            self._skip -= 1
            return
        if self._skip:
            return
        if tag == "pre":
            code = "".join(self._inline).strip("\n")
            self._inline = []
            self._pre -= 1
            if code.strip():
                self.out.append(f"```\n{code}\n```")
        elif tag in _HEADINGS:
            title = " ".join("".join(self._inline).split())
            self._inline = []
            self._heading = 0
            if title:
                self.out.append("#" * _HEADINGS[tag] + " " + title)
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._inline.append(data)

    # -- output ----------------------------------------------------------------------

    def _flush(self) -> None:
        if self._pre or self._heading:
            return
        text = " ".join("".join(self._inline).split())
        self._inline = []
        if text:
            prefix, self._prefix = self._prefix, ""
            indent = " " * len(prefix)
            self.out.append(textwrap.fill(text, _WIDTH, initial_indent=prefix, subsequent_indent=indent,
                                          break_long_words=False, break_on_hyphens=False))  # fmt: skip

    def text(self) -> str:
        self._flush()
        return "\n\n".join(self.out) + "\n"


def html_to_text(html: str) -> str:
    """The text of one HTML page, headings as ``#`` lines, blocks separated by blank lines."""
    converter = _Converter()
    converter.feed(html)
    converter.close()
    return converter.text()


def convert_dir(source: Path, dest: Path) -> list[Path]:
    """Convert every ``*.html`` of ``source`` into ``dest/<stem>.md``; return the files written, sorted."""
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for page in sorted(source.glob("*.html")):
        target = dest / (page.stem + ".md")
        target.write_text(html_to_text(page.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        written.append(target)
    return written


def main() -> int:
    if len(sys.argv) != 3:
        sys.stderr.write("usage: python stress/html_text.py SRC_DIR DEST_DIR\n")
        return 2
    files = convert_dir(Path(sys.argv[1]), Path(sys.argv[2]))
    sys.stderr.write(f"{len(files)} pages converted\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
