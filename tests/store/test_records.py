"""Journal lines: a body encoded ahead (by a chunking worker) gives the very line the writer would."""

from __future__ import annotations

import pytest

from ctxtrio.store.records import NewRecord, Record, decode_line, encode_members, encode_record

BODY: Record = {
    "index": 5,
    "text": 'quote " backslash \\ newline \n 数据库 \u2028 é',
    "start": 0,
    "end": 42,
    "trail": ["Title", 'Sub "part"'],
    "tokens": 17,
}


@pytest.mark.parametrize("ts", [None, 1.0, 1733240000.1234567, 0.1 + 0.2, 1e-7, 123456789012.5])
@pytest.mark.parametrize(("kind", "record_id"), [("chunk", "c5"), ("chunk", None), ("k\u2028ind", 'we"ird é')])
def test_a_pre_encoded_body_gives_the_same_line(ts: float | None, kind: str, record_id: str | None) -> None:
    """Envelope and body come out byte for byte as from the record's dict, and decode to it."""
    ahead = NewRecord(kind, BODY, id=record_id, id_prefix="s", ts=ts, encoded=encode_members(BODY))
    plain = NewRecord(kind, BODY, id=record_id, id_prefix="s", ts=ts)
    data, line = encode_record(ahead, seq=9, ts=2.000_4)
    assert (data, line) == encode_record(plain, seq=9, ts=2.000_4)
    assert decode_line(line.rstrip(b"\n")) == data


def test_a_lone_surrogate_cannot_be_encoded_ahead() -> None:
    """encode_members refuses what the journal could not hold, as the writer does."""
    with pytest.raises(UnicodeEncodeError):
        encode_members({"text": "half \ud800 pair"})
