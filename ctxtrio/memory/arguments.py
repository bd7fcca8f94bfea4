"""Argument checks for the session service: each failure is an InputError saying the fix.

Every check runs before anything is read or written, so bad input never stores anything.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final

from .._errors import InputError
from .._limits import called
from ..store.records import check_storable
from ..text.harmless import one_line
from .model import MAX_ENTRY_CHARS, MAX_TAGS, ROLES, Role

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "check_role",
    "check_tags",
    "check_text",
    "check_title",
]

_TAG: Final = re.compile(r"[\w.:/+-]{1,32}")
MAX_TITLE_CHARS: Final = 200


def check_text(text: str) -> str:
    """The entry text, stripped; not empty and not larger than an entry should be."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{called('text')} is empty: give the fact, decision or note to store")
    text = text.strip()
    if len(text) > MAX_ENTRY_CHARS:
        raise InputError(
            f"{called('text')} has {len(text)} characters, over the {MAX_ENTRY_CHARS} an entry may hold: "
            "store large material as a document and append a short note that points to it",
            hint="store_as_document",
        )
    check_storable(text, called("text"))
    return text


def check_role(role: str) -> Role:
    role = role.strip().lower() if isinstance(role, str) else role
    if role not in ROLES:
        raise InputError(f"role {role!r} is unknown: use one of {', '.join(ROLES)}")
    return role


def check_tags(tags: Sequence[str] | None) -> tuple[str, ...]:
    """Tags casefolded, deduplicated in order; at most ten, each a short word."""
    if not tags:
        return ()
    if isinstance(tags, str):
        raise InputError('tags must be a list of strings, e.g. ["auth", "bug"]')
    cleaned: dict[str, None] = {}
    for tag in tags:
        value = tag.strip().lstrip("#").casefold() if isinstance(tag, str) else ""
        if _TAG.fullmatch(value) is None:
            raise InputError(_invalid_tag(tag))
        cleaned[value] = None
    if len(cleaned) > MAX_TAGS:
        raise InputError(f"{len(cleaned)} tags given: at most {MAX_TAGS} are allowed")
    return tuple(cleaned)


def _invalid_tag(tag: object) -> str:
    """Why a tag is refused. A small model often sends its tags as one comma string (tags="a,b" reaches here as
    the one tag 'a,b'): when the words of it would each be a tag, say that tags is a list and show it. Words
    apart by spaces alone may be one tag of two words ("build failure"): the hyphened tag is shown too."""
    words = [word.lstrip("#") for word in re.split(r"[\s,;]+", tag) if word] if isinstance(tag, str) else []
    if len(words) > 1 and all(_TAG.fullmatch(word) for word in words):
        one = "-".join(words)
        spaced = isinstance(tag, str) and not re.search(r"[,;]", tag) and _TAG.fullmatch(one.casefold())
        either = f', or tags=["{one}"] for one tag' if spaced else ""
        return f"tag {tag!r} is invalid: tags is a list, one tag per item: send tags={json.dumps(words)}{either}"
    return f"tag {tag!r} is invalid: use 1-32 letters, digits or . _ : / + - (no spaces)"


def check_title(title: str | None) -> str | None:
    if title is None:
        return None
    value = " ".join(title.split()) if isinstance(title, str) else ""
    if not value:
        return None
    if len(value) > MAX_TITLE_CHARS:
        raise InputError(f"title has {len(value)} characters: keep it under {MAX_TITLE_CHARS}")
    check_storable(value, "title")
    # Anyone's text, shown in answers, resources and the CLI's lines: made harmless once, here (after the
    # length check, which counts what was given, not the escapes).
    return one_line(value)
