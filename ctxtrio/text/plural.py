"""A count and its noun, ``1 chunk`` / ``2 chunks``, for every answer that says how many. Pure.

One helper (it was the CLI's alone) so the tools' answers stop saying "1 sessions" or
"1 live entries": a small model reads numbers and nouns literally.
"""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None, *, grouped: bool = True) -> str:
    """``1 chunk``, ``2 chunks``; ``nouns`` when adding an s is wrong (``entry``, ``entries``);
    ``grouped=False`` writes the digits without thousands separators."""
    digits = f"{count:,}" if grouped else str(count)
    return f"{digits} {noun if count == 1 else nouns or noun + 's'}"


def token_count(count: int) -> str:
    """``1 token``, ``40 tokens``, ``1949 tokens``: a count of tokens as the answers' heads give it, the digits
    without separators, as the search head's "(1949 tokens, estimated)" (a one-token chunk or document said
    "1 tokens"; ``plural``'s "1,949" would make one count read two ways across the answers)."""
    return plural(count, "token", grouped=False)


def first_to_last(arg: str, total: int) -> str:
    """The values of ``arg`` that read ``total`` items: ``from=0`` for one, ``from=0 to 4`` for five
    (a past-the-end answer offered "from=0 to 0")."""
    return f"{arg}=0" if total == 1 else f"{arg}=0 to {total - 1}"
