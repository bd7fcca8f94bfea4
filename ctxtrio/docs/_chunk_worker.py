"""The chunking child process: ``python -m ctxtrio.docs._chunk_worker``. Pure, no trio.

Large documents are chunked here instead of in a thread of the server, so the
server's event loop does not fight a busy thread for the GIL, and its garbage
collector does not walk the chunker's objects (both stall other tool calls).

Protocol, per job, on stdin: one JSON line ``{"bytes", "chunk_tokens",
"overlap_tokens", "rates", "batch", "kind"}`` (``kind``: a
:class:`~ctxtrio.text.kinds.Kind` value, markdown when absent) then ``bytes`` bytes of the text (UTF-8,
``surrogatepass``). On stdout: frames of a 4-byte big-endian length and a
:mod:`marshal` payload, each a list of up to ``batch`` :data:`PreparedChunk` tuples
(the chunk, its index text or only its extras, its record body encoded, its trail's index
text: the server's event loop only slices and wraps them); a frame of length 0 ends the
job. Jobs follow one another until stdin ends; then the process exits 0, as it does, quietly, when
stdout has no reader any more (the server died). Any other failure exits non-zero with a traceback on stderr.
"""

from __future__ import annotations

import json
import marshal
import os
import struct
import sys
from typing import BinaryIO

from ctxtrio.docs.chunks import encoded_body, heading_terms
from ctxtrio.text.chunking import iter_chunks
from ctxtrio.text.kinds import Kind
from ctxtrio.text.terms import ascii_index_extras, index_text
from ctxtrio.text.tokens import ScriptClass, TokenModel

__all__ = ["FRAME_HEADER", "PreparedChunk", "main"]

FRAME_HEADER = struct.Struct(">I")
#: (index, start, end, trail, tokens, whole, terms, encoded, heading) of one chunk, as sent to the
#: parent: ``terms`` is the index text, or only its extras when ``whole`` (the parent adds the
#: text it holds); ``heading`` the trail's index text (:func:`~ctxtrio.docs.chunks.heading_terms`).
PreparedChunk = tuple[int, int, int, tuple[str, ...], int, bool, str, bytes | None, str]


def main(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve jobs until stdin ends, or until nobody reads stdout any more."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    try:
        while line := source.readline():
            _job(json.loads(line), source, sink)
    except BrokenPipeError:
        # The server is gone (killed mid-ingest): nothing is owed to anyone. A traceback here went to the
        # stderr it left behind, the host's log, once per worker; and Python's flush at exit would fail again.
        if stdout is None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _job(header: dict[str, object], source: BinaryIO, sink: BinaryIO) -> None:
    text = source.read(int(str(header["bytes"]))).decode("utf-8", "surrogatepass")
    given = header["rates"]
    assert isinstance(given, dict)
    model = TokenModel({ScriptClass(name): float(rate) for name, rate in given.items()}, "from the server")
    size = int(str(header["batch"]))
    batch: list[PreparedChunk] = []
    chunk_tokens, overlap_tokens = int(str(header["chunk_tokens"])), int(str(header["overlap_tokens"]))
    kind = Kind(str(header.get("kind", Kind.MARKDOWN)))
    chunks = iter_chunks(text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, model=model, kind=kind)
    for chunk in chunks:
        extras = ascii_index_extras(chunk.text)
        whole = extras is not None
        terms = extras if extras is not None else index_text(chunk.text)
        batch.append(
            (
                chunk.index,
                chunk.start,
                chunk.end,
                chunk.trail,
                chunk.tokens,
                whole,
                terms,
                encoded_body(chunk),
                heading_terms(chunk.trail),
            )
        )
        if len(batch) >= size:
            _send(sink, batch)
            batch = []
    if batch:
        _send(sink, batch)
    sink.write(FRAME_HEADER.pack(0))
    sink.flush()


def _send(sink: BinaryIO, batch: list[PreparedChunk]) -> None:
    payload = marshal.dumps(batch)
    sink.write(FRAME_HEADER.pack(len(payload)))
    sink.write(payload)
    sink.flush()


if __name__ == "__main__":
    sys.exit(main())
