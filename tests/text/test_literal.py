"""text/literal.literal_lines: which lines of a text are code, not prose (for passages and headings inside a chunk)."""

from __future__ import annotations

from ctxtrio.text.literal import literal_lines
from ctxtrio.text.sections import inner_headings

#: git-doc's git-bisect-lk2009.txt (AsciiDoc): a section titled over a run of '~' as long as its title.
BISECT = (
    "Skip algorithm\n"
    "~~~~~~~~~~~~~~\n"
    "\n"
    'When some commits have been skipped (using "git bisect skip"), then\n'
    "the bisection algorithm is the same for the steps 1) to 3).\n"
    "\n"
    "Bisection algorithm debugging\n"
    "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
    "\n"
    "----\n"
    "$ GIT_DEBUG_BISECT=1 git rev-list --bisect-vars\n"
    "----\n"
)


def test_a_title_underlined_by_tildes_is_not_a_fence() -> None:
    """A reST or AsciiDoc title over a run of '~' as long as it (give or take two) opens no fenced block: the
    prose under it is prose, and the second title is a heading of the text. Before, the run was read as a
    markdown fence: every line after it was code (its words weighing less in a passage) up to the next run."""
    assert literal_lines(BISECT) == frozenset()
    assert inner_headings(BISECT) == ((0, "Skip algorithm"), (6, "Bisection algorithm debugging"))


def test_a_tilde_fence_is_still_a_fence() -> None:
    """Markdown's '~~~' fences: after a blank line, under a line much longer than the run, or with an info
    string, the block is code, fences included."""
    after_blank = "Install it:\n\n~~~\nnpm install ctxtrio\n~~~\nThen run it.\n"
    assert sorted(literal_lines(after_blank)) == [2, 3, 4]
    under_prose = "Install the package with this command:\n~~~\nnpm install ctxtrio\n~~~\n"
    assert sorted(literal_lines(under_prose)) == [1, 2, 3]
    with_info = "Install:\n~~~sh\nnpm install ctxtrio\n~~~\n"
    assert sorted(literal_lines(with_info)) == [1, 2, 3]
