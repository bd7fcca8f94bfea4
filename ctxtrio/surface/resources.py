"""Resources: the guide, each document (outline), a document's chunk range, each session.

URIs (the templates are listed by ``resources/templates/list``)::

    ctxtrio://guide                                 the workflow and this server's settings
    ctxtrio://docs/{doc_id}                         metadata and outline of a document
    ctxtrio://docs/{doc_id}/chunks/{from}-{to}      chunks from..to (inclusive), in order
    ctxtrio://sessions/{session_id}                 status, pinned entries, latest summary

Every read is packed into the configured budget like the tools' answers (a chunk range
through the same packing as ``doc_window``, without moving any cursor), so no read
returns a whole large document. All text is ``text/plain``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .._errors import InputError, NotFoundError
from .._limits import calling
from ..memory.render import render_status
from ..text.harmless import harmless
from ..text.plural import plural, token_count
from ..tools.guide import guide_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._wiring import Wiring
    from ..docs.model import DocumentInfo
    from ..memory.model import Entry, SessionInfo

__all__ = [
    "GUIDE_URI",
    "MIME",
    "PAGE_SIZE",
    "TEMPLATES",
    "ResourceRef",
    "doc_uri",
    "list_page",
    "parse_uri",
    "read",
    "session_uri",
]

MIME = "text/plain"
GUIDE_URI = "ctxtrio://guide"
#: Resources per ``resources/list`` page.
PAGE_SIZE = 50
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
_DOC = re.compile(rf"ctxtrio://docs/({_ID})")
_CHUNKS = re.compile(rf"ctxtrio://docs/({_ID})/chunks/(\d{{1,9}})-(\d{{1,9}})")
_SESSION = re.compile(rf"ctxtrio://sessions/({_ID})")
_CURSOR = re.compile(r"[0-9]{1,9}")

TEMPLATES: tuple[dict[str, Any], ...] = (
    {
        "uriTemplate": "ctxtrio://docs/{doc_id}",
        "name": "document",
        "title": "Document outline",
        "description": "A stored document: its metadata and outline (chunk numbers, headings, sizes).",
        "mimeType": MIME,
    },
    {
        "uriTemplate": "ctxtrio://docs/{doc_id}/chunks/{from}-{to}",
        "name": "document-chunks",
        "title": "Document chunks",
        "description": "Chunks from..to (inclusive) of a stored document, in order, packed into the budget.",
        "mimeType": MIME,
    },
    {
        "uriTemplate": "ctxtrio://sessions/{session_id}",
        "name": "session",
        "title": "Session",
        "description": "A session's status, its pinned entries and its latest summary.",
        "mimeType": MIME,
    },
)


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """What a ctxtrio URI names: ``kind`` is guide, doc, chunks or session."""

    kind: str
    ident: str = ""
    start: int = 0
    end: int = 0


def doc_uri(doc_id: str) -> str:
    return f"ctxtrio://docs/{doc_id}"


def session_uri(session_id: str) -> str:
    return f"ctxtrio://sessions/{session_id}"


def parse_uri(uri: str) -> ResourceRef | None:
    """The resource ``uri`` names, or None when it is not one of ours."""
    if uri == GUIDE_URI:
        return ResourceRef("guide")
    if match := _DOC.fullmatch(uri):
        return ResourceRef("doc", match.group(1))
    if match := _CHUNKS.fullmatch(uri):
        return ResourceRef("chunks", match.group(1), int(match.group(2)), int(match.group(3)))
    if match := _SESSION.fullmatch(uri):
        return ResourceRef("session", match.group(1))
    return None


def _guide_resource() -> dict[str, Any]:
    return {
        "uri": GUIDE_URI,
        "name": "guide",
        "title": "How to use ctxtrio",
        "description": "The workflow for sessions and documents, and this server's settings.",
        "mimeType": MIME,
    }


def _doc_resource(info: DocumentInfo) -> dict[str, Any]:
    return {
        "uri": doc_uri(info.doc_id),
        "name": info.doc_id,
        "title": info.title,
        "description": f"Document: {plural(info.chunks, 'chunk')}, {token_count(info.tokens)} (outline and metadata).",
        "mimeType": MIME,
    }


def _session_resource(info: SessionInfo) -> dict[str, Any]:
    return {
        "uri": session_uri(info.session_id),
        "name": info.session_id,
        "title": info.title or info.session_id,
        "description": f"Session: {plural(info.live_entries, 'live entry', 'live entries')} (status, pins, latest summary).",
        "mimeType": MIME,
    }


async def list_page(ctx: Wiring, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of at most PAGE_SIZE resources from ``cursor``: the guide, documents, then sessions."""
    if cursor is not None and not _CURSOR.fullmatch(cursor):
        raise InputError(f"invalid cursor {cursor[:40]!r}: pass back a nextCursor from resources/list")
    offset = int(cursor) if cursor is not None else 0
    page: list[dict[str, Any]] = []
    if offset == 0:
        page.append(_guide_resource())
    docs = await ctx.documents.list_documents()
    first_doc = max(0, offset - 1)
    page.extend(_doc_resource(info) for info in docs[first_doc : first_doc + PAGE_SIZE - len(page)])
    if len(page) < PAGE_SIZE:
        first_session = max(0, offset - 1 - len(docs))
        room = PAGE_SIZE - len(page)
        sessions = await ctx.sessions.list_sessions(offset=first_session, limit=room + 1)
        page.extend(_session_resource(info) for info in sessions[:room])
        more = len(sessions) > room
    else:
        more = True
    return page, (str(offset + len(page)) if more else None)


async def read(ctx: Wiring, uri: str) -> str:
    """The text of the resource at ``uri``, within the configured budget.

    NotFoundError for a URI that is not ours or names nothing stored; InputError for a
    bad chunk range, or a budget too small for a chunk range's head and a few tokens of text.
    """
    ref = parse_uri(uri)
    if ref is None:
        raise NotFoundError(f"no resource {uri[:200]!r}: resources/list and resources/templates/list name them")
    budget = ctx.live.budget_tokens
    if ref.kind == "guide":
        text = guide_text(ctx)
    elif ref.kind == "doc":
        outline = await ctx.documents.outline(ref.ident)
        text = _doc_meta(outline.doc) + "\n" + outline.rendered
    elif ref.kind == "chunks":
        # Fitted already, head and all, in the model's own tokens when the server can count: cutting it
        # again by the estimate (which leans high) would cut what the head says it shows.
        end, uri = ref.end, doc_uri(ref.ident)

        def onward(after: int) -> str:
            """The rest of the range asked for; past it (0-0 read whole), the next chunk: 'chunks/1-0' is no resource."""
            return f"{uri}/chunks/{after}-{max(after, end)}"

        with calling(start="from", end="to"):  # the URI's words: 'chunks/3-1' said 'end=1 is before start=3'
            return (await ctx.documents.read(ref.ident, ref.start, ref.end, onward=onward)).rendered
    else:
        status = await ctx.sessions.status(ref.ident)
        entries = await ctx.sessions.export(ref.ident)
        text = render_status(status) + _pins_and_summary(entries)
    return _fit(ctx, text, budget)


def _doc_meta(info: DocumentInfo) -> str:
    when = datetime.fromtimestamp(info.ingested_at, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"source: {harmless(info.source)}; ingested {when}; {info.chars} characters"


def _pins_and_summary(entries: Sequence[Entry]) -> str:
    live = [entry for entry in entries if entry.status == "live"]
    pins = [entry for entry in live if entry.pinned]
    summaries = [entry for entry in live if entry.role == "summary"]
    parts = [f"\nPinned ({len(pins)}):"] + [f"- [{entry.id} {entry.role}] {entry.text}" for entry in pins]
    if not pins:
        parts.append("(none)")
    if summaries:
        latest = summaries[-1]
        # What it keeps out of recall now: entries restored one by one since are live again (its text is never rewritten).
        still = sum(entry.still_folded_by(latest.id) for entry in entries)
        of = f" of the {len(latest.folds)} it summarizes" if still != len(latest.folds) else ""
        parts.append(f"\nLatest summary ({latest.id}, folds {plural(still, 'entry', 'entries')}{of}):\n{latest.text}")
    else:
        parts.append("\nNo summary yet (context_compact makes one).")
    return "\n".join(parts)


def _fit(ctx: Wiring, text: str, budget: int) -> str:
    """``text``, cut at the budget (estimated tokens) with a note saying so."""
    model = ctx.live.tokens.current
    if model.estimate(text) <= budget:
        return text
    note = f"\n[cut to fit the budget of {budget} tokens; the tools read the rest]"
    keep = model.fitting_prefix(text, max(1, budget - model.estimate(note)))
    return text[:keep] + note
