"""Argument completion: every ``doc_id`` and ``session_id`` of a prompt or resource template.

Values are the stored ids that start with what was typed (case-insensitively), sorted,
at most :data:`MAX_VALUES` (the protocol's limit), with the total number that match.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import trio

from .._errors import NotFoundError
from .prompts import PROMPTS
from .resources import TEMPLATES

if TYPE_CHECKING:
    from pathlib import Path

    from .._wiring import Wiring

__all__ = ["MAX_VALUES", "complete", "session_ids"]

#: The protocol allows at most 100 values in one completion.
MAX_VALUES = 100
_PROMPT_ARGS = {prompt["name"]: {arg["name"] for arg in prompt["arguments"]} for prompt in PROMPTS}
_TEMPLATE_ARGS = {
    str(template["uriTemplate"]): {part.split("}")[0] for part in str(template["uriTemplate"]).split("{")[1:]}
    for template in TEMPLATES
}


async def complete(ctx: Wiring, ref_type: str, ref: str, argument: str, value: str) -> tuple[list[str], int]:
    """Up to MAX_VALUES completions of ``argument`` and how many match in all.

    ``ref_type`` is ``ref/prompt`` (``ref`` a prompt name) or ``ref/resource`` (``ref`` a
    URI template). NotFoundError when ``ref`` names no prompt or template of ours.
    """
    known = (_PROMPT_ARGS if ref_type == "ref/prompt" else _TEMPLATE_ARGS).get(ref)
    if known is None:
        what = "prompt" if ref_type == "ref/prompt" else "resource template"
        raise NotFoundError(f"no {what} {ref[:120]!r} to complete arguments of")
    if argument not in known:
        return [], 0
    if argument == "doc_id":
        ids = [info.doc_id for info in await ctx.documents.list_documents()]
    elif argument == "session_id":
        ids = await trio.to_thread.run_sync(session_ids, ctx.data.sessions)
    else:
        return [], 0
    typed = value.casefold()
    matches = sorted(ident for ident in ids if ident.casefold().startswith(typed))
    return matches[:MAX_VALUES], len(matches)


def session_ids(folder: Path) -> list[str]:
    """Session ids from the journal names (one directory listing; no journal is read)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [name[: -len(".jsonl")] for name in names if name.endswith(".jsonl") and not name.startswith(".")]
