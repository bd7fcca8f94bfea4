"""Reading a document: :class:`ReadingMethods`, the window, read, outline and summarize of :class:`~.service.DocumentService`.

Each packs what it returns into a token budget and checks the text it renders in the
model's own tokens where the server can count; the summary of a range condenses it
extractively first when it is too long for the summarizer to see whole.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import trio

from .._errors import InputError, NotFoundError
from .._limits import CHUNK_INDEX, OUTLINE_CHUNKS, SUMMARY_TARGET, check_budget, check_range
from ..llm._notes import notes_in_one
from ..llm.summarizer import Summarizer, Wait, to_the_end
from ..store.ids import validate_id
from ..text.extractive import summarize_extractive
from ..text.kinds import CODE_KINDS, kind_for
from .arguments import check_start_end, past_the_end
from .loaded import GenerationCache
from .model import DocSummary, Outline, OutlineEntry, Window, WindowChunk
from .render import chunk_header, render_outline, render_window, window_head
from .sharing import GAP_TOKENS
from .window_packing import LONG_LINE_CHARS, contiguous_text, fresh_text, line_column, pack_outline, pack_window

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from .._live import Live
    from .._progress import Progress
    from ..text.tokens import TokenModel
    from .chunks import LoadedDoc, StoredChunk
    from .repository import Repository


__all__ = ["ReadingMethods"]

#: Ranges larger than this are condensed extractively (in a worker thread) before the
#: summarizer sees them, so neither an LLM loop nor the extractive scorer runs unbounded.
CONDENSE_ABOVE_TOKENS = 24_000
CONDENSE_TO_TOKENS = 12_000
_METHODS = ("llm", "verbatim", "llm+extractive", "extractive")
#: Numbers in a note (a breaker's "retry in 1.9 s"): notes that differ only there are said once.
_NOTE_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


class ReadingMethods:
    """Paging through documents: methods of :class:`~ctxtrio.docs.service.DocumentService`."""

    _live: Live
    _repo: Repository
    _summarizer: Summarizer
    _cursor_locks: dict[tuple[str, str], trio.Lock]
    #: NotFoundError unless a session_id names a live session (``_wiring.py`` gives the session
    #: service's status): a cursor belongs to a session. None: any id names a cursor of its own.
    sessions: Callable[[str], Awaitable[object]] | None

    async def window(
        self,
        doc_id: str,
        *,
        start: int | None = None,
        end: int | None = None,
        budget_tokens: int | None = None,
        reset: bool = False,
        session_id: str | None = None,
    ) -> Window:
        """Read chunks in order from ``start`` (default: the cursor of (doc, session)).

        At least one chunk is returned (cut to fit a small budget); the cursor moves
        past the last chunk returned, or, when that chunk was cut to fit, to where the cut left
        off inside it: the next window without ``start`` shows the rest of it (its lines in its
        header), so a reader paging at a budget smaller than a chunk skips nothing. ``start``
        and ``reset`` read from a chunk's start. A budget too small for the answer's own lines and a few
        tokens of text is an InputError saying what budget to pass (the cursor stays). ``end`` is inclusive. A ``session_id`` that names no
        session (deleted, or never opened) is a NotFoundError, and nothing is written: its
        cursor would stay in the catalog until the document is forgotten.
        """
        validate_id(doc_id, "doc_id")
        session = validate_id(session_id, "session_id") if session_id is not None else ""
        budget = check_budget(budget_tokens, self._live.budget_tokens)
        check_start_end(start, end)
        if session and self.sessions is not None:
            try:
                await self.sessions(session)
            except NotFoundError as exc:
                raise NotFoundError(
                    f"{exc}: a document's cursor belongs to a session, so open the session first, "
                    "or leave session_id out to read with the shared cursor",
                    hint="list_sessions",
                ) from exc
        await self._repo.refresh()
        entry, doc = await self._repo.load(doc_id)
        lock = self._cursor_locks.setdefault((doc_id, session), trio.Lock())
        async with lock:
            cursor, offset = self._repo.state.position(doc_id, session)
            first = start if start is not None else (0 if reset else cursor)
            offset = offset if start is None and not reset else 0
            if end is not None and end < first:
                raise InputError(
                    f"the last chunk to read, #{end}, is before the cursor at #{first}: say where to start, or reset the cursor"
                )
            total = len(doc.chunks)
            if first >= total:
                past = Window(entry.info, session_id, (), first, budget)
                return replace(past, rendered=render_window(past, start=start))
            last = min(end, total - 1) if end is not None else total - 1
            shell = Window(entry.info, session_id, (), first, budget)
            if offset >= len(doc.chunks[first].text):  # a record no window of this generation wrote (hand-edited)
                offset = 0
            window = await self._fit_window(shell, doc.chunks, first, last, given=True, offset=offset)
            await self._repo.set_cursor(entry, session, window.next_index, window.next_offset)
        return window

    async def read(
        self,
        doc_id: str,
        start: int,
        end: int,
        *,
        budget_tokens: int | None = None,
        onward: Callable[[int], str] | None = None,
    ) -> Window:
        """Chunks ``start`` .. ``end`` (inclusive) packed into the budget, like :meth:`window`,
        but no cursor is read or moved (a resource read by the person, not the model's reading).

        ``onward``: the address that reads on from a chunk, said in the head instead of doc_window's
        cursor (:func:`~.render.window_head`); the head counted is the one rendered. A budget too small
        for the head and a few tokens of text is an InputError, as for :meth:`window`.
        """
        validate_id(doc_id, "doc_id")
        budget = check_budget(budget_tokens, self._live.budget_tokens)
        check_start_end(start, end)
        await self._repo.refresh()
        entry = self._repo.entry(doc_id)
        total = entry.info.chunks
        if start >= total:
            raise past_the_end(start, total)
        # No more chunks than the budget could hold (a chunk and its header cost over 16
        # tokens), so a large document is not loaded to show a few of them.
        last = min(end, total - 1, start + budget // 16 + 8)
        chunks = await self._repo.chunk_range(entry, start, last)
        shell = Window(entry.info, None, (), start, budget)
        return await self._fit_window(shell, chunks, 0, len(chunks) - 1, given=budget_tokens is not None, onward=onward)

    async def _fit_window(
        self,
        shell: Window,
        chunks: Sequence[StoredChunk],
        first: int,
        last: int,
        *,
        given: bool,
        onward: Callable[[int], str] | None = None,
        offset: int | None = None,
    ) -> Window:
        """``chunks[first..last]`` packed into ``shell``'s budget, with the widest head ``onward`` can
        give kept out of the chunks' room (shrinking by the overshoot's share alone took four packs to
        reach the smallest answer: budget_tokens=200 showed 8 tokens of text), checked in the model's
        own tokens when the server can count; the text counted, its "estimated" mark inside, is the
        answer. InputError when the head and the least text outgrow the budget (``given``: the caller
        named the budget, which the refusal then names). ``offset``: characters of chunk ``first`` read
        already, for doc_window's cursor (None: :meth:`read`, whose next window starts at a chunk)."""
        budget = shell.budget_tokens
        model = self._live.tokens.current
        # The cursor may stop inside the last chunk shown (pack_window fills the room by cutting it): the
        # head names one of its lines; no more chunks than the budget could hold (see read) are counted.
        reach = range(first, min(last, first + budget // 16 + 8) + 1)
        inside: int | None = None
        inside_column = 1
        if offset is not None:  # read() starts its next window at a chunk: no line or character to name
            inside = max(chunks[at].text.count("\n") + 1 for at in reach)
            # The character of its line the cursor may stand at, named in a long line: at most the longest's length.
            longest = max(len(line) for at in reach for line in chunks[at].text.split("\n"))
            inside_column = longest if longest >= LONG_LINE_CHARS else 1
        head_tokens = _widest_head(shell, chunks[first].index, chunks[last].index, model, onward, inside, inside_column)

        def build(room: int, estimated: bool) -> Window:
            packed = pack_window(
                chunks, first, last, max(1, room - head_tokens), model, offset or 0, fill=offset is not None
            )
            window = replace(shell, chunks=tuple(packed), next_index=packed[-1].index + 1, estimated=estimated)
            ended = packed[-1]
            if offset is None or not ended.cut:
                return window
            text = chunks[first + len(packed) - 1].text
            at = ended.offset + len(ended.text)
            at += text[at : at + 1] in ("\n", " ")  # the cut ends before a break or space: its separator
            if not ended.text or not text[at:].strip():  # nothing left; or no progress (a cursor that never moves)
                return window
            line, column = text.count("\n", 0, at) + 1, line_column(text, at)
            return replace(window, next_index=ended.index, next_offset=at, next_line=line, next_column=column)

        fitted = await self._live.counter.fit_marked(budget, build, lambda window: render_window(window, onward=onward))
        if fitted.tokens > budget:  # the head and the least text (packing's floor) outgrew it
            raise InputError(_too_small(fitted.tokens, fitted.result, chunks[first].tokens, head_tokens, model, given))
        return replace(fitted.result, rendered=fitted.text)

    async def outline(
        self,
        doc_id: str,
        *,
        summarize: bool = False,
        start: int = 0,
        max_chunks: int = 200,
        wait: Wait = to_the_end,
    ) -> Outline:
        """Chunk indices, heading trails and sizes; with ``summarize``, one sentence per chunk.

        Summaries come from the summarizer's ``one_liners``: those not cached in the
        document yet are one background job, waited for by ``wait`` (the caller's cancel
        scope; default: until done); past its deadline the
        rest are the chunks' first sentences, labelled extractive by the note, while the
        job goes on (each line is kept in the document as it is done): call again.
        The answer fits the default budget (in the model's own tokens when the server can
        count): entries past it are left for the next call (``remaining``).
        """
        validate_id(doc_id, "doc_id")
        check_range("start", start, CHUNK_INDEX)
        check_range("max_chunks", max_chunks, OUTLINE_CHUNKS)
        await self._repo.refresh()
        if not summarize:  # the chunks shown only, not the whole document (see Repository.chunk_range)
            info = self._repo.entry(doc_id).info
            if start >= info.chunks:
                raise past_the_end(start, info.chunks)
            shown = await self._repo.chunk_range(
                self._repo.entry(doc_id), start, min(start + max_chunks, info.chunks) - 1
            )
            entries = tuple(OutlineEntry(chunk.index, chunk.trail, chunk.tokens) for chunk in shown)
            return await self._fit_outline(Outline(info, entries, start))
        entry, doc = await self._repo.load(doc_id)
        if start >= len(doc.chunks):
            raise past_the_end(start, len(doc.chunks))
        selected = doc.chunks[start : start + max_chunks]
        await self._repo.top_up(doc)
        cache = GenerationCache(self._repo, doc)
        lines = await self._summarizer.one_liners(
            [chunk.text for chunk in selected],
            cache=cache,
            job_key=f"outline/{doc.doc_id}/{doc.gen}",
            wait=wait,
            fresh=[fresh_text(doc.chunks[chunk.index - 1] if chunk.index else None, chunk) for chunk in selected],
            # As its ingest judged it (the kind is not stored): a file's extension, else the text's look.
            prose=kind_for(doc.chunks[0].text if doc.chunks else "", entry.info.source, entry.info.title)
            not in CODE_KINDS,
        )
        notes: dict[str, str] = {}  # the first note of each kind, keyed without its numbers
        for line in lines:
            if line.note:
                notes.setdefault(_NOTE_NUMBERS.sub("#", line.note), line.note)
        summarized = tuple(
            OutlineEntry(chunk.index, chunk.trail, chunk.tokens, line.text)
            for chunk, line in zip(selected, lines, strict=True)
        )
        return await self._fit_outline(Outline(entry.info, summarized, start, notes_in_one(list(notes.values()))))

    async def _fit_outline(self, outline: Outline) -> Outline:
        """The final check: the first entries that fit the default budget in the model's own tokens
        (an outline has no "estimated" mark); the text counted is the answer."""
        model = self._live.tokens.current
        fitted = await self._live.counter.fit_marked(
            self._live.budget_tokens, lambda room, _: pack_outline(outline, room, model), render_outline
        )
        return replace(fitted.result, rendered=fitted.text)

    async def summarize(
        self,
        doc_id: str,
        *,
        start: int | None = None,
        end: int | None = None,
        target_tokens: int = 500,
        refresh: bool = False,
        progress: Progress | None = None,
        wait: Wait = to_the_end,
    ) -> DocSummary:
        """Summarize chunks ``start`` .. ``end`` (inclusive; default the whole document).

        A whole-document summary written by the LLM is stored with the document and
        returned from there until ``refresh``. LLM work goes on in the background past
        the deadline of ``wait`` (the caller's cancel scope around the wait) and each finished part is kept in the document's journal at once, so
        the next call (or one after a restart) resumes where it stopped; until it is
        done the answer is partly or wholly extractive, and says so. ``progress(done,
        total)`` hears of each part finished while the call waits.
        """
        validate_id(doc_id, "doc_id")
        check_range("target_tokens", target_tokens, SUMMARY_TARGET)
        check_start_end(start, end)
        await self._repo.refresh()
        entry, doc = await self._repo.load(doc_id)
        total = len(doc.chunks)
        first = start if start is not None else 0
        if first >= total:
            raise past_the_end(first, total)
        last = min(end, total - 1) if end is not None else total - 1
        whole = first == 0 and last == total - 1
        await self._repo.top_up(doc)
        key = f"document/v1:{target_tokens}"
        if whole and not refresh:
            for method in _METHODS:
                cached = doc.summaries.get(f"{key}:{method}")
                if cached is not None:
                    return DocSummary(entry.info, first, last, cached, method, cached=True)
        text, condensed = await self._condensed(doc, first, last)
        cache = GenerationCache(self._repo, doc, read=not refresh)
        summary = await self._summarizer.summarize(
            text, target_tokens=target_tokens, cache=cache, progress=progress, wait=wait
        )
        note = "; ".join(part for part in (condensed, summary.note) if part)
        if whole and summary.method in ("llm", "verbatim"):
            await cache.put(f"{key}:{summary.method}", summary.text)
        return DocSummary(entry.info, first, last, summary.text, summary.method, note=note)

    # -- helpers ------------------------------------------------------------------------

    async def _condensed(self, doc: LoadedDoc, first: int, last: int) -> tuple[str, str]:
        """The text of the range, condensed extractively in a thread when very large."""
        model = self._live.tokens.current
        chunks = doc.chunks[first : last + 1]
        if sum(chunk.tokens for chunk in chunks) <= CONDENSE_ABOVE_TOKENS:
            return contiguous_text(chunks), ""

        def condense() -> str:
            return summarize_extractive(contiguous_text(chunks), target_tokens=CONDENSE_TO_TOKENS, model=model)

        text = await trio.to_thread.run_sync(condense)
        before, after = sum(c.tokens for c in chunks), model.estimate(text)
        return text, f"the {before}-token range was condensed extractively to {after} tokens first"


#: Tokens of text the budget doc_window advises for a budget too small shows at least.
_ADVISED_TEXT_TOKENS = 64


def _too_small(tokens: int, window: Window, whole: int, head_tokens: int, model: TokenModel, given: bool) -> str:
    """What a budget that could not hold a window holds, and what to pass: the answer showed a few
    tokens of its first chunk over the budget (a user asking budget_tokens=60 got 7 tokens of text).
    The answer's own lines are what it counted without its text, or what the packing keeps for them
    (the widest head and the chunk's header), whichever is more: a budget advised reads what it says.
    ``given``: the caller passed the budget; else it is the default (a resource's reader has none to pass).

    A chunk shown whole at packing's floor (a heading's chunk) is whole at any budget: the answer
    refused, ``tokens``, is the one every budget from ``tokens`` on gives (the fit only shrinks to
    that floor), so it is the advice; counting the widest head there advised 120 where 80 showed it."""
    chunk = window.chunks[0]
    if len(window.chunks) == 1 and not chunk.cut:
        lines, whole_at = tokens - chunk.tokens, -(-tokens // 10) * 10
        advised = whole_at
    else:
        kept = head_tokens + model.estimate(chunk_header(chunk.index, chunk.trail)) + GAP_TOKENS
        lines = max(tokens - chunk.tokens, kept)
        whole_at = -(-(lines + whole) // 10) * 10  # rounded up to tens: an advice, not a count
        advised = min(whole_at, -(-(lines + _ADVISED_TEXT_TOKENS) // 10) * 10)
    budget = f"budget_tokens={window.budget_tokens}" if given else f"the budget of {window.budget_tokens} tokens"
    held = (
        f"{budget} cannot hold chunk #{chunk.index} of {window.doc.doc_id}: this answer's own lines take about "
        f"{lines} tokens, leaving no room for its text."
    )
    if not given:
        reads = "reads it whole" if advised == whole_at else f"reads its start, or about {whole_at} reads it whole"
        return f"{held} A budget of {advised} tokens or more {reads}."
    reads = "it whole" if advised == whole_at else f"its start, or about {whole_at} to read it whole"
    return f"{held} Pass budget_tokens={advised} or more to read {reads}."  # two sentences: the last closes too


def _widest_head(
    shell: Window,
    first: int,
    last: int,
    model: TokenModel,
    onward: Callable[[int], str] | None = None,
    inside: int | None = None,
    column: int = 1,
) -> int:
    """Tokens of the longest head a window of chunks ``first`` .. ``last`` of ``shell``'s document can
    have (every clause, the largest numbers; ``onward`` as :func:`~.render.window_head` takes it), and
    the gap after it. ``inside``: the lines of the chunk the cursor may stand inside (doc_window's),
    the head then naming one of them, and at most ``column`` characters into it."""
    shown = max(shell.budget_tokens, 9_999)  # the count in the head, at most the budget (or one the advice names)
    chunks = (WindowChunk(first, (), "", shown), WindowChunk(last, (), "", 0, cut=True))
    ends = (min(last + 1, shell.doc.chunks), shell.doc.chunks)  # the next chunk named, or the end said
    heads = [replace(shell, chunks=chunks, estimated=True, next_index=at) for at in ends]
    if inside is not None:  # "Next: #N line L"
        heads.append(replace(heads[0], next_index=last, next_offset=1, next_line=inside, next_column=column))
    return max(model.estimate(window_head(head, onward)) for head in heads) + 1
