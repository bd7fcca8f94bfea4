"""Anyone's text made safe to show where a terminal or a person's screen obeys controls. Pure.

Titles, file names, entries and chunks are anyone's text: an ESC sequence in them would
clear or rewrite the terminal of whoever lists them, and a bidi override reorders what
follows it on the line, so a name can hide its end (git quotes such names too). They are
shown as escapes (``\\x1b``, ``\\u202e``): what was there stays readable and two names that
differ only there stay apart.
"""

from __future__ import annotations

__all__ = ["BIDI", "CONTROLS", "harmless", "one_line"]

#: Bidi embeddings, overrides and isolates: they reorder what follows them on the line (a name can hide its end).
BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
#: The characters a terminal may act on rather than show: C0 but tab and newline, DEL, C1 (CSI is U+009B).
CONTROLS = tuple(c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\t\n")
_HARMLESS = str.maketrans({**{c: f"\\x{c:02x}" for c in CONTROLS}, **{c: f"\\u{c:04x}" for c in BIDI}})


def harmless(text: str) -> str:
    """``text`` with what a terminal would obey shown as escapes (``\\x1b``, ``\\u202e``); tab and newline kept.

    A CR before a newline goes quietly: on a terminal it is only the line's end.
    """
    return text.replace("\r\n", "\n").translate(_HARMLESS)


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` as one harmless line, as a title is shown: every run of whitespace one space (a
    newline in a name would start a line of its own in a list), other controls as escapes.

    ``limit``: at most that many characters, cut between the text's characters, never inside an
    escape (a title cut at 200 after escaping could end in "\\x1", which reads as another text)."""
    line = " ".join(text.split())
    shown = harmless(line)
    if limit is None or len(shown) <= limit:
        return shown
    size = 0
    for at, char in enumerate(line[:limit]):  # each character shows as 1 (itself) to 6 characters
        size += len(char.translate(_HARMLESS))
        if size > limit:
            return harmless(line[:at])
    return harmless(line[:limit])
