"""What :class:`~ctxtrio.docs.service.DocumentService` returns: frozen value objects.

The tool layer renders them as compact text for the model (:mod:`ctxtrio.docs.render`);
library users get them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "DocSummary",
    "DocumentCheck",
    "DocumentInfo",
    "IndexCheck",
    "IngestResult",
    "Outline",
    "OutlineEntry",
    "SearchHit",
    "SearchResult",
    "Window",
    "WindowChunk",
]


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """One ingested document as the catalog knows it.

    ``source`` is ``"inline"`` or the resolved file path; ``ingested_at`` is a Unix time.
    ``content_hash`` is the SHA-256 (hex) of the text's UTF-8 bytes, for telling whether
    a file changed since it was ingested ("" for documents ingested before it was kept).
    """

    doc_id: str
    title: str
    source: str
    chunks: int
    chars: int
    tokens: int
    ingested_at: float
    content_hash: str = ""


@dataclass(frozen=True, slots=True)
class IngestResult:
    """A committed ingest: the document, and whether it replaced an earlier version.

    ``unchanged`` when a file was ingested again (same path, no ``doc_id``) with the same
    content and title: nothing was written and ``doc`` is the document as it stood.
    """

    doc: DocumentInfo
    replaced: bool
    elapsed_s: float
    unchanged: bool = False


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One chunk in an outline; ``summary`` only when summaries were asked for."""

    index: int
    trail: tuple[str, ...]
    tokens: int
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class Outline:
    """Chunks ``start`` .. ``start + len(entries) - 1`` of a document.

    ``note`` says why summaries degraded (LLM down, deadline) and how to continue.
    """

    doc: DocumentInfo
    entries: tuple[OutlineEntry, ...]
    start: int
    note: str = ""
    #: The answer as the tools send it, rendered once: the text counted against the budget.
    rendered: str = ""

    @property
    def remaining(self) -> int:
        """Chunks after the last entry, not shown."""
        return max(0, self.doc.chunks - self.start - len(self.entries))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A matching chunk, verbatim: whole, or when ``cut`` its best passage with ``[...]``
    where text was left out; ``lines`` is then (first, last, of) the chunk's lines,
    1-based and inclusive (None when the passage is not whole lines: a long line cut by characters)."""

    doc_id: str
    title: str
    index: int
    trail: tuple[str, ...]
    score: float
    text: str
    tokens: int
    cut: bool = False
    #: Found by semantic recall (``--embed-model``) and not by keyword search; ``score``
    #: is then the cosine similarity, not BM25.
    by_meaning: bool = False
    lines: tuple[int, int, int] | None = None
    #: The heading trail is shown in the hit's header: its headings hold a query word its
    #: chunk's text does not (found under that heading; the text alone would not say why).
    under: bool = False
    #: False: the header leaves the document's title out (the id names the document), for a first
    #: hit at a budget where the title would leave its text a few tokens.
    titled: bool = True


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The best hits that fit the budget, best first.

    ``omitted`` hits matched within ``limit`` but did not fit ``budget_tokens``;
    ``more`` is true when further chunks matched beyond ``limit``; ``words_left_out``
    when the query had more distinct words than a search uses (:data:`~ctxtrio._limits.SEARCH_WORDS`).
    ``estimated`` when the answer was checked against the budget by an estimate, not by
    the server's tokenizer (none, or not in time: a summary was streaming).
    """

    query: str
    hits: tuple[SearchHit, ...]
    omitted: int
    more: bool
    budget_tokens: int
    used_tokens: int
    words_left_out: bool = False
    #: Why semantic recall did not take part in this search, when it is on and could not.
    semantic_skipped: str | None = None
    estimated: bool = False
    #: The answer as the tools send it, rendered once: the text counted against the budget
    #: (its "estimated" mark included).
    rendered: str = ""


@dataclass(frozen=True, slots=True)
class WindowChunk:
    """A chunk read in order. ``text`` skips what the previous chunk of the window showed
    (the overlap), so consecutive chunks read as the continuous source; ``cut`` marks a
    chunk shortened to fit the budget. ``offset``: the characters of the chunk's text before
    ``text``; ``lines``, for a chunk whose reading starts inside it (where doc_window's cursor
    stood after a cut), is (first, last, of) its lines shown, 1-based and inclusive."""

    index: int
    trail: tuple[str, ...]
    text: str
    tokens: int
    cut: bool = False
    offset: int = 0
    lines: tuple[int, int, int] | None = None
    #: The character of line ``lines[0]`` that ``text`` starts at (1: the line's start; more when a
    #: window read on inside a long line, whose pieces the lines alone do not tell apart).
    column: int = 1


@dataclass(frozen=True, slots=True)
class Window:
    """Consecutive chunks of a document, and where the cursor now stands.

    Empty ``chunks`` with ``at_end`` means the read started past the last chunk.
    ``estimated`` when the answer was checked against the budget by an estimate, not by
    the server's tokenizer (none, or not in time: a summary was streaming).
    """

    doc: DocumentInfo
    session_id: str | None
    chunks: tuple[WindowChunk, ...]
    next_index: int
    budget_tokens: int
    estimated: bool = False
    #: The answer as the tools send it, rendered once: the text counted against the budget
    #: (its "estimated" mark included).
    rendered: str = ""
    #: Characters into chunk ``next_index``'s text where reading goes on: not 0 only when
    #: :meth:`~.service.DocumentService.window` ended in a chunk cut to fit its budget (the cursor
    #: then stands inside it, so the next window shows the rest; the chunks resource and
    #: :meth:`~.service.DocumentService.read` name whole chunks, and go on with the next one).
    next_offset: int = 0
    #: The line of chunk ``next_index`` where reading goes on (1 at its start).
    next_line: int = 1
    #: The character of ``next_line`` where reading goes on (1 at its start).
    next_column: int = 1

    @property
    def at_end(self) -> bool:
        """True when no chunk follows the cursor."""
        return self.next_index >= self.doc.chunks

    @property
    def cut(self) -> bool:
        """True when a chunk was shortened to fit the budget."""
        return any(chunk.cut for chunk in self.chunks)

    @property
    def next_from(self) -> int | None:
        """The chunk a window ``from`` it reads on at; None while the cursor stands inside a chunk, whose rest
        only a window without ``from`` shows (from= starts at a chunk's start: a model paging with
        from=<this> re-read the same cut window for ever, rev23). Structured content's ``next``."""
        return None if self.next_offset else self.next_index


@dataclass(frozen=True, slots=True)
class DocSummary:
    """A summary of chunks ``start`` .. ``end`` (inclusive) of a document.

    ``method`` is ``verbatim``, ``llm``, ``extractive`` or ``llm+extractive``; ``cached``
    is true when a stored whole-document summary was returned; ``note`` says why it
    degraded and how to continue.
    """

    doc: DocumentInfo
    start: int
    end: int
    text: str
    method: str
    cached: bool = False
    note: str = ""


@dataclass(frozen=True, slots=True)
class DocumentCheck:
    """What reading the catalog and every current document's journal as stored found."""

    #: The current documents' journals (as the index names them) -> the chunks the catalog promises each.
    journals: Mapping[str, int]
    #: Journals whose last line is torn (a crash mid-write; skipped, healed by the next append), the catalog's too.
    torn: int
    #: Malformed lines, copied to quarantine/ and skipped.
    malformed: int
    #: (doc_id, chunks found, chunks promised) of each document whose journal holds fewer chunks than promised.
    short: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class IndexCheck:
    """The search index beside the current documents (after a rebuild, if one was asked for)."""

    #: Current documents (as the catalog says now).
    documents: int
    #: Journals the index has rows for (documents' and any other).
    journals: int
    #: Index rows of the current documents.
    rows: int
    #: Current documents' journals whose rows are not one per promised chunk.
    behind: tuple[str, ...]
    #: Journals with rows whose file is gone.
    stale: tuple[str, ...]
    #: Journals indexed again from their files, and stale journals whose rows were dropped (by a rebuild).
    rebuilt: int = 0
    dropped: int = 0
