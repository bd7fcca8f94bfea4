"""The parts chunking packs: blocks of a text of any kind, each with its heading trail.

:func:`iter_parts` picks the splitter for a :class:`~ctxtrio.text.kinds.Kind`:
markdown (:mod:`.blocks`), AsciiDoc (:mod:`.asciidoc`), reST and plain paragraphs (:mod:`.markup`), or
source code (:mod:`.code`). Parts tile the text in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.text.asciidoc import asciidoc_blocks
from ctxtrio.text.blocks import iter_blocks
from ctxtrio.text.code import Part, code_parts
from ctxtrio.text.kinds import CODE_KINDS, Kind
from ctxtrio.text.markup import plain_blocks, rst_blocks

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ctxtrio.text.blocks import Block

__all__ = ["Part", "iter_parts", "trailed"]


def iter_parts(text: str, kind: Kind = Kind.MARKDOWN) -> Iterator[Part]:
    """(start, end, trail, heading) of each part of ``text`` read as ``kind``."""
    if kind in CODE_KINDS:
        return code_parts(text, kind)
    if kind is Kind.RST:
        return trailed(rst_blocks(text))
    if kind is Kind.ASCIIDOC:
        return trailed(asciidoc_blocks(text))
    if kind is Kind.TEXT:
        return trailed(plain_blocks(text))
    return trailed(iter_blocks(text))


def trailed(blocks: Iterable[Block]) -> Iterator[Part]:
    """Parts from headed blocks: a heading closes the headings of its level and deeper."""
    stack: list[tuple[int, str]] = []
    trail: tuple[str, ...] = ()
    for block in blocks:
        level = block.level
        if block.closes and stack and stack[-1][0] >= block.closes:
            while stack and stack[-1][0] >= block.closes:
                stack.pop()
            trail = tuple(title for _, title in stack)
        if level:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, block.title))
            trail = tuple(title for _, title in stack)
        yield block.start, block.end, trail, level > 0
