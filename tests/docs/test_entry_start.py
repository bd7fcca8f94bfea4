"""An API entry's continuation ranked above its start: the start comes right above it, shown from its
directive (docs/continuation.entry_starts_first, docs/packing)."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.continuation import entry_start_of, entry_starts_first
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

#: datetime.astimezone's entry, between the end of datetime.replace and datetime.dst (fixtures/NOTICE.txt).
FIXTURE = Path(__file__).parent / "fixtures" / "python_datetime_astimezone.rst.txt"
MODEL = TokenModel.cold()
QUESTION = "How do I convert a datetime to another time zone?"
ANSWER = "adjusting the date and time data so the result is the same UTC time as"
DIRECTIVE = ".. method:: datetime.astimezone(tz=None)"
TRAIL = (":mod:`datetime` --- Basic date and time types", ":class:`.datetime` Objects", "method datetime.astimezone")


def _astimezone() -> tuple[StoredChunk, StoredChunk]:
    """The two chunks the entry is cut into, where the chunker cuts library.datetime's #35 from #36:
    the start and its prose, then the equivalent code, the notes and the next two entries."""
    text = FIXTURE.read_text(encoding="utf-8")
    cut = text.index("      def astimezone(self, tz):")
    head, tail = text[:cut], text[cut:]
    return (
        StoredChunk(35, head, 0, cut, TRAIL, MODEL.estimate(head)),
        StoredChunk(36, tail, cut, len(text), TRAIL, MODEL.estimate(tail)),
    )


def _other() -> Candidate:
    text = "Return a time zone object for the offset.\n"
    return Candidate("zoneinfo", "zoneinfo.rst.txt", StoredChunk(2, text, 0, len(text), ("zoneinfo",), 9), 3.0)


def test_the_start_of_an_entry_comes_right_above_its_continuation() -> None:
    """The continuation (#36, its code says 'Convert ... time zone') ranked above the start (#35, which says
    what astimezone does): #35 moves up to just above it, marked to be shown from its directive."""
    start, continuation = _astimezone()
    candidates = [Candidate("datetime", "datetime.rst.txt", continuation, 3.0), _other()]
    candidates.append(Candidate("datetime", "datetime.rst.txt", start, 2.0))
    ordered = entry_starts_first(candidates, query_terms(QUESTION))
    assert [(c.doc_id, c.chunk.index) for c in ordered] == [("datetime", 35), ("datetime", 36), ("zoneinfo", 2)]
    assert ordered[0].start == start.text.index(DIRECTIVE) and ordered[1].start is None


def test_a_hit_for_the_entry_after_the_continuation_keeps_its_place() -> None:
    """For utcoffset's words, which #36 holds in its own utcoffset entry, not in astimezone's end, nothing moves."""
    start, continuation = _astimezone()
    candidates = [Candidate("datetime", "datetime.rst.txt", continuation, 3.0)]
    candidates.append(Candidate("datetime", "datetime.rst.txt", start, 2.0))
    assert entry_starts_first(candidates, query_terms("utcoffset magnitude less than one day")) == candidates


def test_only_an_api_entry_has_a_start_to_bring() -> None:
    """A section under a plain heading that runs on into the next chunk is no entry: its start is not looked for."""
    before = "Intro\n=====\n\nSome words about time zones.\n"
    after = "More words about time zones.\n"
    first = StoredChunk(0, before, 0, len(before), ("Intro",), 12)
    assert entry_start_of(first, StoredChunk(1, after, len(before), len(before) + len(after), ("Intro",), 6)) is None
    start, continuation = _astimezone()
    assert entry_start_of(start, continuation) == start.text.index(DIRECTIVE)


def test_a_start_is_shown_from_its_directive() -> None:
    """The start, too large for its share, shows the directive and the sentence that says what the entry does,
    where its window of the query's words sat on the notes below them ('attach a time zone object')."""
    start, _ = _astimezone()
    terms = query_terms(QUESTION)
    for budget in (150, 300):
        plain = Candidate("datetime", "datetime.rst.txt", start, 2.0)
        marked = Candidate("datetime", "datetime.rst.txt", start, 2.0, start=start.text.index(DIRECTIVE))
        [shown], _, used = pack_hits([marked], budget, MODEL, terms)
        assert DIRECTIVE in shown.text and ANSWER in " ".join(shown.text.split()) and used <= budget, budget
        [window], _, _ = pack_hits([plain], budget, MODEL, terms)
        assert DIRECTIVE not in window.text, budget
