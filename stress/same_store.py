"""Do two data dirs hold the same documents, chunk for chunk and index row for row? Exit 1 if not.

    python stress/same_store.py /tmp/before-data /tmp/after-data

For the same folder ingested twice (``ctxtrio ingest FOLDER --data-dir ...`` with two
trees), compares what :mod:`stress.same_chunks` cannot see: what the store kept. Documents
are matched by their source (doc ids and generations differ between runs). For each, the
current generation's chunk records (index, text, start, end, trail, tokens) and its rows
in the search index (item, terms, heading) must be equal; and each row's line range
(``line_start``, ``line_end``, which differ with the records' timestamps) must hold the
journal line of the chunk it names. No row of a journal that is not current may remain.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

#: (item, terms, heading, line_start, line_end) of one row of the index's chunks table.
Row = tuple[str, str, str, int, int]


def digests(data_dir: Path) -> dict[str, str]:
    """Source -> digest of the document's chunks and index rows; AssertionError on a row that does not
    hold its chunk's line, or a document without rows."""
    conn = sqlite3.connect(f"file:{data_dir / 'index.sqlite3'}?mode=ro", uri=True)
    rows: dict[str, list[Row]] = {}
    query = "SELECT journal, item, terms, heading, line_start, line_end FROM chunks"
    for journal, item, terms, heading, start, end in conn.execute(query):
        rows.setdefault(journal, []).append((item, terms, heading, start, end))
    conn.close()
    docs = data_dir / "docs"
    sources: dict[str, str] = {}
    for line in (docs / "catalog.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "commit":
            sources[record["doc"]] = record["source"]
    out: dict[str, str] = {}
    for folder in sorted(path for path in docs.iterdir() if path.is_dir()):
        (path,) = folder.glob("*.jsonl")  # one generation each once the ingest is over
        raw = path.read_bytes()
        chunks = [
            (r["index"], r["text"], r["start"], r["end"], r["trail"], r["tokens"])
            for r in map(json.loads, raw.splitlines())
            if r.get("kind") == "chunk"
        ]
        journal = f"docs/{folder.name}/{path.name}"
        kept = sorted(rows.pop(journal, []), key=lambda row: int(row[0]))
        assert len(kept) == len(chunks), f"{journal}: {len(kept)} rows for {len(chunks)} chunks"
        for item, _, _, start, end in kept:
            line = json.loads(raw[start:end])
            assert line["kind"] == "chunk" and str(line["index"]) == item, f"{journal}: row {item} names another line"
        shown = [row[:3] for row in kept]
        out[sources[folder.name]] = hashlib.sha256(json.dumps([chunks, shown]).encode()).hexdigest()
    assert not rows, f"rows of journals that are not current: {sorted(rows)[:3]}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    before, after = digests(args.before), digests(args.after)
    differ = sorted(source for source in before.keys() | after.keys() if before.get(source) != after.get(source))
    print(
        f"{len(before)} / {len(after)} documents; {len(differ)} differ{': ' if differ else ''}{', '.join(differ[:5])}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
