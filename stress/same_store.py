"""Do two data dirs hold the same documents, chunk for chunk and index row for row? Exit 1 if not.

    python stress/same_store.py /tmp/before-data /tmp/after-data

For the same folder ingested twice (``ctxtrio ingest FOLDER --data-dir ...`` with two
trees), compares what :mod:`stress.same_chunks` cannot see: what the store kept. Documents
are matched by their source (doc ids and generations differ between runs). For each, the
current generation's chunk records (index, text, start, end, trail, tokens) and its rows
in the search index (item, terms, heading) must be equal; and each row's line range
(``line_start``, ``line_end``, which differ with the records' timestamps) must hold the
journal line of the chunk it names. No row of a journal that is not current may remain.
The current generations are the catalog's; folders and files under docs/ that no current
document names (a full disk's failed ingests leave empty folders) are counted and shown,
not compared. A problem in either store is printed, and exits 1 too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: (item, terms, heading, line_start, line_end) of one row of the index's chunks table.
Row = tuple[str, str, str, int, int]


@dataclass
class Store:
    """What one data dir holds: source -> digest of each current document, the problems found in it, and
    what lies under docs/ that no current document names (kept apart: it is not a difference)."""

    digests: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)


def _current(docs: Path) -> dict[str, tuple[str, str]]:
    """Doc id -> (generation, source) of every document the catalog holds: its last commit, unless forgotten."""
    current: dict[str, tuple[str, str]] = {}
    for line in (docs / "catalog.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "commit":
            current[record["doc"]] = (record["gen"], record["source"])
        elif record.get("kind") == "forget":
            current.pop(record["doc"], None)
    return current


def _leftovers(docs: Path, current: dict[str, tuple[str, str]]) -> list[str]:
    """docs/ folders and generation files no current document names. A failed ingest (a full disk) leaves
    its document's folder, empty or with a generation never committed, and a re-ingest its old generation:
    they are removed an hour later by design, and their index rows must be gone already (checked apart)."""
    found: list[str] = []
    for folder in sorted(path for path in docs.iterdir() if path.is_dir()):
        named = current.get(folder.name)
        files = sorted(folder.glob("*.jsonl"))
        if named is None:
            found.append(f"docs/{folder.name}/ ({len(files)} files)" if files else f"docs/{folder.name}/ (empty)")
        else:
            found += [f"docs/{folder.name}/{path.name}" for path in files if path.stem != named[0]]
    return found


def _digest(docs: Path, doc: str, gen: str, rows: list[Row], store: Store) -> str | None:
    """The digest of one document's chunk records and index rows, or None with its problem noted."""
    journal = f"docs/{doc}/{gen}.jsonl"
    try:
        raw = (docs / doc / f"{gen}.jsonl").read_bytes()
    except OSError as exc:
        store.problems.append(f"{journal}: the catalog's current generation cannot be read ({exc.strerror})")
        return None
    chunks = [
        (r["index"], r["text"], r["start"], r["end"], r["trail"], r["tokens"])
        for r in map(json.loads, raw.splitlines())
        if r.get("kind") == "chunk"
    ]
    kept = sorted(rows, key=lambda row: int(row[0]))
    if len(kept) != len(chunks):
        store.problems.append(f"{journal}: {len(kept)} rows for {len(chunks)} chunks")
    for item, _, _, start, end in kept:
        line = json.loads(raw[start:end])
        if line.get("kind") != "chunk" or str(line.get("index")) != item:
            store.problems.append(f"{journal}: row {item} names another line")
            break
    shown = [row[:3] for row in kept]
    return hashlib.sha256(json.dumps([chunks, shown]).encode()).hexdigest()


def digests(data_dir: Path) -> Store:
    """Every current document's digest (the catalog's last commit of each, by source), a row that does not
    hold its chunk's line or a document without rows as a problem, and what no current document names."""
    conn = sqlite3.connect(f"file:{data_dir / 'index.sqlite3'}?mode=ro", uri=True)
    rows: dict[str, list[Row]] = {}
    query = "SELECT journal, item, terms, heading, line_start, line_end FROM chunks"
    for journal, item, terms, heading, start, end in conn.execute(query):
        rows.setdefault(journal, []).append((item, terms, heading, start, end))
    conn.close()
    docs = data_dir / "docs"
    current = _current(docs)
    store = Store(leftovers=_leftovers(docs, current))
    for doc, (gen, source) in sorted(current.items()):
        digest = _digest(docs, doc, gen, rows.pop(f"docs/{doc}/{gen}.jsonl", []), store)
        if digest is not None:
            store.digests[source] = digest
    if rows:
        store.problems.append(f"rows of journals that are not current: {sorted(rows)[:3]}")
    return store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    stores = {"before": digests(args.before), "after": digests(args.after)}
    before, after = stores["before"].digests, stores["after"].digests
    differ = sorted(source for source in before.keys() | after.keys() if before.get(source) != after.get(source))
    print(
        f"{len(before)} / {len(after)} documents; {len(differ)} differ{': ' if differ else ''}{', '.join(differ[:5])}"
    )
    for name, store in stores.items():
        for problem in store.problems:
            print(f"{name}: {problem}")
        if store.leftovers:
            empty = sum(line.endswith("(empty)") for line in store.leftovers)
            print(
                f"{name}: {len(store.leftovers)} left under docs/ by no current document "
                f"({empty} empty folder{'' if empty == 1 else 's'}), "
                f"not compared: {', '.join(store.leftovers[:3])}"
            )
    return 1 if differ or any(store.problems for store in stores.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
