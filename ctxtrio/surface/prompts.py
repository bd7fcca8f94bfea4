"""Prompts: the workflows of ``context_guide`` as slash commands a person picks.

The text is written for small models that skim tool descriptions: short numbered steps,
each naming the exact tool and its arguments (the tools of the profile being served),
with the ids already filled in. ``resume_session`` attaches the session resource
(status, pins, latest summary), so the model starts from what matters without a call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import InputError, NotFoundError
from ..store.ids import validate_id
from .resources import MIME, read, session_uri

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._wiring import Wiring

__all__ = ["PROMPTS", "get_prompt"]

#: The longest free-text argument (a question, a task) taken into a prompt.
TEXT_ARGUMENT_CHARS = 2_000

_SESSION_ID = {"name": "session_id", "description": "The session (completed from the stored ones).", "required": True}
_DOC_ID = {"name": "doc_id", "description": "The document (completed from the stored ones).", "required": True}

PROMPTS: tuple[dict[str, Any], ...] = (
    {
        "name": "resume_session",
        "title": "Resume a session",
        "description": "Continue earlier work: attaches the session's status, pins and latest summary, "
        "and tells the model how to recall and store.",
        "arguments": [_SESSION_ID],
    },
    {
        "name": "answer_from_document",
        "title": "Answer from a document",
        "description": "Answer a question from a stored document by searching it and reading around the hits.",
        "arguments": [_DOC_ID, {"name": "question", "description": "What to find out.", "required": True}],
    },
    {
        "name": "compact_session",
        "title": "Compact a session",
        "description": "Pin what must survive, then fold old entries into a summary to free the budget.",
        "arguments": [_SESSION_ID],
    },
    {
        "name": "start_task",
        "title": "Start a task with memory",
        "description": "Open a session for a new task and pin its goal, so later turns can recall it.",
        "arguments": [
            {"name": "task", "description": "The task, in a sentence or two.", "required": True},
            {
                "name": "session_id",
                "description": "A session to use (default: one named for the task).",
                "required": False,
            },
        ],
    },
)
_NAMES = {prompt["name"] for prompt in PROMPTS}


def _text(arguments: Mapping[str, str], name: str, *, required: bool = True) -> str | None:
    value = arguments.get(name)
    if value is None or not value.strip():
        if required:
            raise InputError(f"argument {name!r} is required")
        return None
    if len(value) > TEXT_ARGUMENT_CHARS:
        raise InputError(f"argument {name!r} is longer than {TEXT_ARGUMENT_CHARS} characters")
    return value.strip()


async def get_prompt(ctx: Wiring, name: str, arguments: Mapping[str, str]) -> dict[str, Any]:
    """The ``GetPromptResult`` (as JSON) of prompt ``name``; InputError / NotFoundError for bad input."""
    if name not in _NAMES:
        raise NotFoundError(f"no prompt {name[:80]!r}; prompts/list names them")
    compact = ctx.config.tools == "compact"
    if name == "resume_session":
        session_id = validate_id(_text(arguments, "session_id") or "", "session_id")
        uri = session_uri(session_id)
        attached = await read(ctx, uri)
        steps = _resume_compact(session_id) if compact else _resume(session_id)
        return _result(f"Resume session {session_id}", steps, {"uri": uri, "mimeType": MIME, "text": attached})
    if name == "answer_from_document":
        doc_id = validate_id(_text(arguments, "doc_id") or "", "doc_id")
        question = _text(arguments, "question") or ""
        info = await ctx.documents.get(doc_id)
        steps = _answer(doc_id, info.title, question, compact=compact)
        return _result(f"Answer from {doc_id}", steps)
    if name == "compact_session":
        session_id = validate_id(_text(arguments, "session_id") or "", "session_id")
        await ctx.sessions.status(session_id)  # NotFoundError for an unknown session
        return _result(f"Compact session {session_id}", _compact(session_id, compact=compact))
    task = _text(arguments, "task") or ""
    chosen = _text(arguments, "session_id", required=False)
    if chosen is not None:
        validate_id(chosen, "session_id")
    return _result("Start a task", _start(task, chosen, compact=compact))


def _result(description: str, text: str, attached: Mapping[str, str] | None = None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": {"type": "text", "text": text}}]
    if attached is not None:
        messages.append({"role": "user", "content": {"type": "resource", "resource": dict(attached)}})
    return {"description": description, "messages": messages}


def _resume(session_id: str) -> str:
    return (
        f'You are resuming session "{session_id}". Its status, pinned notes and latest summary are attached.\n'
        "Do this:\n"
        f'1. Call context_open with session_id="{session_id}".\n'
        f'2. Before you act on earlier work, call context_recall with session_id="{session_id}" and a short query.\n'
        "3. Call context_append for each new fact, decision or dead end. Use pinned=true only for goals and rules.\n"
        "4. When context_status says to compact, call context_compact."
    )


def _resume_compact(session_id: str) -> str:
    return (
        f'You are resuming session "{session_id}". Its status, pinned notes and latest summary are attached.\n'
        "Do this:\n"
        f'1. Before you act on earlier work, call memory with session_id="{session_id}" and a short query.\n'
        f'2. Call memory with session_id="{session_id}" and note="..." for each new fact or decision. '
        "Add pinned=true only for goals and rules.\n"
        "3. When memory says the session is nearly full, call context_compact."
    )


def _answer(doc_id: str, title: str, question: str, *, compact: bool) -> str:
    search, read = ("doc_read", "doc_read") if compact else ("doc_search", "doc_window")
    query = "query= " if compact else ""
    return (
        f'Answer this question from the document "{title}" (doc_id "{doc_id}"):\n{question}\n'
        "Do this:\n"
        f'1. Call {search} with doc_id="{doc_id}" and {query}2 to 4 distinctive words from the question.\n'
        f'2. If that is not enough, call {read} with doc_id="{doc_id}" and from=N, '
        "where N is a chunk number (#N) from a hit, to read around it.\n"
        "3. Answer in a few sentences and name the chunks (#N) you used. "
        "If the document does not say, say so. Do not guess."
    )


def _compact(session_id: str, *, compact: bool) -> str:
    if compact:
        first = f'1. Call memory with session_id="{session_id}" and no query to see the recent entries.\n'
        pin = f'2. Store anything that must survive with memory, session_id="{session_id}", note="...", pinned=true.\n'
    else:
        first = f'1. Call context_status with session_id="{session_id}".\n'
        pin = "2. Pin entries that must survive: context_update with their entry_id and pinned=true.\n"
    return (
        f'Free up session "{session_id}".\n'
        "Do this:\n"
        + first
        + pin
        + f'3. Call context_compact with session_id="{session_id}". Old entries become one summary; '
        "nothing is lost (a summary can be restored).\n"
        "4. Say in one sentence what was compacted."
    )


def _start(task: str, session_id: str | None, *, compact: bool) -> str:
    name = f'session_id="{session_id}"' if session_id else "a short session_id named after the task"
    if compact:
        steps = (
            f"1. Call memory with {name} and note= the goal, pinned=true.\n"
            "2. Store each fact, decision or dead end with memory and note=.\n"
            "3. Before you act on earlier work, call memory with the same session_id and a short query.\n"
        )
    else:
        steps = (
            f"1. Call context_open with {name}.\n"
            "2. Call context_append with the goal and pinned=true.\n"
            "3. Call context_append for each fact, decision or dead end as you go.\n"
            "4. Before you act on earlier work, call context_recall with a short query.\n"
            "Large text (files, logs) goes to doc_ingest, never into a session entry.\n"
        )
    return f"New task: {task}\nKeep your notes in ctxtrio so nothing is lost when your context fills up.\nDo this:\n{steps}"
