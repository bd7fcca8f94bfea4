"""Every relative link in README.md and docs/*.md names a file that exists, and an anchor that file has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_FENCED = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"(?<!`)\[[^\]\n]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"#{1,6} (.+?)\s*#*\s*$")


def _prose(path: Path) -> str:
    """The page without its fenced code blocks (a link or heading there is text)."""
    return _FENCED.sub("", path.read_text(encoding="utf-8"))


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces to '-', repeats -1, -2."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _prose(path).splitlines():
        if match := _HEADING.match(line):
            slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(f"{slug}-{count}" if count else slug)
    return found


def test_anchors_follow_githubs_rules() -> None:
    """The slug rule on the headings the README links to (a colon, a semicolon and parentheses dropped)."""
    notes = anchors(ROOT / "docs" / "DESIGN-NOTES.md")
    assert {"bm25-by-default-embeddings-if-you-ask", "semantic-recall-opt-in", "fast-first-answer"} <= notes
    assert {"read-this-first-what-an-mcp-server-can-and-cannot-do", "hosts"} <= anchors(ROOT / "README.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for match in _LINK.finditer(_prose(page)):
        target = match.group(1)
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.is_file():
            broken.append(f"{target}: no such file")
        elif fragment and fragment not in anchors(dest):
            broken.append(f"{target}: no such heading")
    assert broken == []
