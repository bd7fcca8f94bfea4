"""What kind of text a document is, so chunking can follow its structure.

The kind comes from the name's extension (the ingested file's path, or a ``title``
such as ``decoder.py``); a name without a known extension (inline text, ``.txt``,
``README``) is sniffed from its first :data:`SNIFF_CHARS` characters, by counting the
lines each kind would treat as structure. ``.log`` files are plain text.

Kinds: ``markdown`` (ATX and setext headings, fences), ``rst`` (underlined and
overlined titles), ``asciidoc`` (``=``-prefixed titles; sniffed also by its list
continuations ``+``, anchors ``[[id]]``, ``include::``/``ifdef::`` lines and labeled-list
items ``--flag::`` followed by their text, listing blocks opened after a blank line and
inline macros such as ``linkgit:git-add[1]``, as in git's manual), ``text`` (paragraphs and
lines only), and source code split at definitions: ``python``, ``javascript``
(JS and TS), ``go``, ``rust``, ``java`` (Java, C#, Kotlin, Scala, Swift).
"""

from __future__ import annotations

import enum
import functools
import operator
import re
from collections import Counter
from typing import Final

__all__ = ["CODE_KINDS", "SNIFF_CHARS", "Kind", "kind_for", "of_source"]


class Kind(enum.StrEnum):
    """How a text is split into blocks (see :mod:`ctxtrio.text.parts`)."""

    MARKDOWN = "markdown"
    RST = "rst"
    ASCIIDOC = "asciidoc"
    TEXT = "text"
    PYTHON = "python"
    JAVASCRIPT = "javascript"
    GO = "go"
    RUST = "rust"
    JAVA = "java"


CODE_KINDS: Final = frozenset({Kind.PYTHON, Kind.JAVASCRIPT, Kind.GO, Kind.RUST, Kind.JAVA})

#: Characters of a text looked at when its name does not say its kind.
SNIFF_CHARS: Final = 8_000

_EXTENSIONS: Final[dict[str, Kind]] = {
    **dict.fromkeys(["md", "markdown", "mdown", "mkd", "mdx"], Kind.MARKDOWN),
    **dict.fromkeys(["rst", "rest"], Kind.RST),
    **dict.fromkeys(["adoc", "asciidoc", "asc"], Kind.ASCIIDOC),
    **dict.fromkeys(["log"], Kind.TEXT),
    **dict.fromkeys(["py", "pyi", "pyw"], Kind.PYTHON),
    **dict.fromkeys(["js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts"], Kind.JAVASCRIPT),
    **dict.fromkeys(["go"], Kind.GO),
    **dict.fromkeys(["rs"], Kind.RUST),
    **dict.fromkeys(["java", "cs", "kt", "kts", "scala", "swift"], Kind.JAVA),
}

# Lines that speak for one kind, counted over the first SNIFF_CHARS characters: (name, kind,
# pattern of the line's start), each kind's in the order they are tried. Indentation and a
# title line are taken whole (``*+``): what follows them never starts with what they hold,
# so giving characters back could never make a line match; ``re`` would try it at every
# line. An underlined reST title and an AsciiDoc attribute entry have names of their own:
# :func:`sniff` weighs them apart.
_SIGN_LINES: Final[tuple[tuple[str, Kind, str], ...]] = (
    ("markdown", Kind.MARKDOWN, r"#{1,6}[ \t]+\w|```|~~~|\[[^\]\n]+\]\([^)\n]+\)"),
    ("rst", Kind.RST, r"\.\. [\w:-]+::|\.\. _[^:\n]+:"),
    ("rst_title", Kind.RST, r"[^\s\n][^\n]*+\r?\n(?P<underline>[=\-~^\"'`#*+:.<>_])(?P=underline){2,}[ \t]*\r?$"),
    ("asciidoc", Kind.ASCIIDOC, r"={1,5}[ \t]+\w"),
    ("asciidoc_attribute", Kind.ASCIIDOC, r":[\w-]+:[ \t]"),
    (
        "asciidoc_more",
        Kind.ASCIIDOC,
        r"\[(?:source|listing|literal|verse|quote|float|discrete|NOTE|TIP|WARNING|IMPORTANT|CAUTION)\b[^\n]*\]\r?$"
        r"|\+[ \t]*\r?$|\[\[[^\]\n]+\]\][ \t]*\r?$|(?:include|ifdef|ifndef|ifeval|endif)::[^\s\[]*\["
        # A labeled-list item (a line ending in ``::`` to ``::::`` or ``;;``, the marker after
        # the line's first character) followed by its text. The loop stops at each colon or
        # semicolon only, where ``[^\n]*?`` tried the marker at every character.
        r"|[^\s:](?:[^\n:;]*+[:;])+?(?<=[^\n]::|[^\n];;)[ \t]*\r?\n[ \t]*+[^\s]"
        r"|[ \t]*+\r?\n(?P<delimiter>-{4,}|\.{4,})[ \t]*\r?\n[^\n]*\n(?!(?P=delimiter)[ \t]*\r?$)",
    ),
    (
        "python",
        Kind.PYTHON,
        r"[ \t]*+(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[:(]|import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import\b",
    ),
    (
        "javascript",
        Kind.JAVASCRIPT,
        r"[ \t]*+(?:export[ \t]|import[ \t][^\n]*from[ \t]|(?:const|let|var)[ \t]+[\w$]+[ \t]*=|function[ \t*]|module\.exports)",
    ),
    ("go", Kind.GO, r"package[ \t]+\w+\r?$|func[ \t]|import[ \t]+\("),
    (
        "rust",
        Kind.RUST,
        r"[ \t]*+(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:fn[ \t]+\w|impl\b|use[ \t]+\w+::|mod[ \t]+\w|#\[)",
    ),
    (
        "java",
        Kind.JAVA,
        r"[ \t]*+(?:(?:public|private|protected|internal)[ \t]+[\w<>\[\], \t]*\(|package[ \t]+[\w.]+;|using[ \t]+[\w.]+;"
        r"|import[ \t]+[\w.*]+;)",
    ),
)  # fmt: skip
#: The kind each sign's name speaks for.
_SIGN_KIND: Final = {name: kind for name, kind, _ in _SIGN_LINES}
#: All signs in one pattern (one scan of the text), each a named group; a match's
#: ``lastgroup`` is its sign's name (the group that closes last: ``underline`` and
#: ``delimiter`` close inside theirs). It is searched in ``"\n" + head``: a leading line
#: feed in place of ``^`` lets the regex engine jump from line feed to line feed (a literal
#: prefix) instead of trying every position (1.7x faster on the stdlib sources; the same
#: matches, as no sign spans a line's final line feed).
_ANY_SIGN: Final = re.compile(
    "\n(?:" + "|".join(f"(?P<{name}>{pattern})" for name, _, pattern in _SIGN_LINES) + ")", re.MULTILINE
)
_lastgroup: Final = operator.attrgetter("lastgroup")
#: AsciiDoc's inline macros (``name:target[attributes]``, user guide ch. 21, "Macros"): its
#: built-in ones and git's ``linkgit:git-add[1]``. Each counts as a sign wherever it is.
#: Only their number is used: this finds the matches of ``\b(?:link|linkgit|image|...):...``
#: from their colon, with the name and its ``\b`` looked behind (one look-behind per name
#: length), so ``re`` jumps in C from colon to colon. With the leading ``\b`` it tried the
#: whole pattern at every position (half the CPU of :func:`sniff` on the stdlib sources).
#: Each match ends where the ``\b`` one does, at a ``]``, which no name overlaps.
_MACROS: Final = re.compile(
    r":(?:(?<=\b(?:link|xref|pass):)|(?<=\bkbd:)|(?<=\bimage:)|(?<=\b(?:mailto|anchor):)|(?<=\blinkgit:)"
    r"|(?<=\bfootnote:))[^\s\[\]]*\[[^\]\n]*\]"
)
#: A kind needs at least this many signs to be chosen over plain markdown.
_MIN_SIGNS: Final = 2
_SHEBANG: Final = re.compile(r"#![^\n]*\b(?:python[\d.]*|node|deno)\b")


def kind_for(text: str, *names: str | None) -> Kind:
    """The kind of ``text``: from the first of ``names`` with a known extension, else from its content."""
    for name in names:
        if name:
            base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
            if base.endswith(".txt"):
                base = base[:-4]  # Sphinx's _sources/page.rst.txt: the extension inside counts
            if "." in base:
                found = _EXTENSIONS.get(base.rsplit(".", 1)[1])
                if found is not None:
                    return found
    return sniff(text)


def sniff(text: str) -> Kind:
    """The kind ``text`` looks like; markdown (which reads prose as paragraphs) when unsure."""
    head = text[:SNIFF_CHARS]
    if (shebang := _SHEBANG.match(head)) is not None:
        return Kind.PYTHON if "python" in shebang.group() else Kind.JAVASCRIPT
    found = Counter(map(_lastgroup, _ANY_SIGN.finditer("\n" + head)))  # sign names, counted in C
    counts = dict.fromkeys(_SIGN_KIND.values(), 0)
    for name, number in found.items():
        counts[_SIGN_KIND[name]] += number
    counts[Kind.ASCIIDOC] += len(_MACROS.findall(head))
    underlined = found["rst_title"]  # reST signs that are underlined titles (AsciiDoc's two-line titles look the same)
    fields = found["asciidoc_attribute"]  # AsciiDoc attribute entries, which look like reST's fields (``:Author: Me``)
    if counts[Kind.ASCIIDOC] - fields >= _MIN_SIGNS and counts[Kind.RST] == underlined:
        # AsciiDoc's own signs and no reST directive or target: the titles are AsciiDoc's
        counts[Kind.ASCIIDOC] += underlined
        counts[Kind.RST] = 0
    if counts[Kind.MARKDOWN] >= _MIN_SIGNS and "\n```" in head:
        return Kind.MARKDOWN  # fenced code in prose: the code's signs do not count
    best = max(counts, key=lambda kind: counts[kind])
    if counts[best] < _MIN_SIGNS or counts[best] <= counts[Kind.MARKDOWN]:
        return Kind.MARKDOWN  # ties go to markdown: prose with a few code-like lines stays prose
    return best


@functools.lru_cache(maxsize=4096)
def of_source(name: str) -> bool:
    """Whether a document's name (its title) is a source file's, by its extension (:func:`kind_for`): a search
    treats the definitions in it as code's, not a manual's examples. Remembered: asked of every hit."""
    return kind_for("", name) in CODE_KINDS
