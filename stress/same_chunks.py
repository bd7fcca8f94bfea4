"""Do two revisions chunk and index every real text identically? Exit 1 at the first difference.

    python stress/same_chunks.py --against main
    python stress/same_chunks.py --against 02f4bb3 --corpora stdlib cjk
    python stress/same_chunks.py --against main --corpora code     # the source trees of code_questions.py

Exports ``--against REV`` (``git archive``) to a temporary folder, runs this script there
with that tree's ``ctxtrio`` first on ``PYTHONPATH`` (the corpora are this tree's
:mod:`real_text`, the same files for both), then does the same work with this tree and
compares. For every text of the corpora (``stdlib``, ``docs``, ``log``, ``cjk`` and
``more``: the ``.js``, ``.go``, ``.cs``, ``.md`` and ``.adoc`` files under ``/usr`` and
the files of ``tests/text/fixtures``, each of the kind its name says; and, asked for by name,
``code``: the files ``ctxtrio ingest`` stores from ``stress/code_questions.py``'s five source trees,
Go, Rust, Java, JavaScript and Python: 3,840 files, 54.6 MB):

* its kind as a file ingest finds it (``kind_for(text, path)``: the kind its path names, as
  ``ctxtrio ingest`` and ``doc_ingest file_path=`` pass it; else sniffed), and as an inline
  ``doc_ingest`` sniffs it (``kind_for(text, None, None)``);
* its chunks of the file's kind, and of the sniffed kind when that differs (what an inline
  ingest of the same text gives), with two token models (cold 800/80, flat 120/30): index,
  start, end, trail, tokens;
* per chunk, a digest of what the index is given (:func:`~ctxtrio.text.terms.index_text`)
  and of its search terms (:func:`~ctxtrio.text.terms.terms`, as passages and queries use).

``--write FILE`` only records this tree's results (what the exported tree is run with);
``--before FILE`` compares with results recorded so, instead of running a revision.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_text import CORPORA, Doc, code_trees, load

from ctxtrio.text.chunking import iter_chunks
from ctxtrio.text.kinds import kind_for
from ctxtrio.text.terms import index_text, terms
from ctxtrio.text.tokens import TokenModel

ROOT = Path(__file__).resolve().parents[1]
MODELS = (("cold 800/80", TokenModel.cold(), 800, 80), ("flat 120/30", TokenModel.flat(), 120, 30))
_MORE_EXTENSIONS = (".js", ".go", ".cs", ".md", ".adoc")
_MORE_LIMIT = 1_500

#: Per text: (corpus, name, "sniffed/file's kind", [per kind (the file's, then the sniffed one when it
#: differs), per model: [(index, start, end, trail, tokens, index digest, terms digest)]]).
Result = tuple[str, str, str, list[list[tuple[int, int, int, tuple[str, ...], int, bytes, bytes]]]]


def _more() -> list[Doc]:
    """Code and markup of kinds the four corpora lack, named so their kind comes from the name."""
    paths: list[Path] = sorted((ROOT / "tests" / "text" / "fixtures").iterdir())
    for folder in ("/usr/share", "/usr/lib"):
        found = [path for path in Path(folder).rglob("*") if path.suffix in _MORE_EXTENSIONS and path.is_file()]
        paths.extend(sorted(found)[:_MORE_LIMIT])
    docs = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if text.strip():
            docs.append(Doc(str(path), text))
    return docs


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()


def results(corpora: list[str]) -> list[Result]:
    """This tree's kinds, chunks and index digests for every text of ``corpora``."""
    out: list[Result] = []
    for corpus in corpora:
        if corpus == "code":
            docs = code_trees(["go", "rust", "java", "js", "python"])
        else:
            docs = _more() if corpus == "more" else load(corpus)
        for doc in docs:
            # The kind from the path, as a file ingest passes it: sniffed alone, 9 of the docs
            # corpus' .rst.txt pages and 193 stdlib modules were chunked as another kind than a
            # file ingest gives them, so their chunks went unchecked ("identical" at bcf4ea5,
            # which changed 4 of those pages' chunks).
            sniffed, kind = kind_for(doc.text, None, None), kind_for(doc.text, doc.name)
            per_model = []
            for chunk_kind in dict.fromkeys((kind, sniffed)):
                for _, model, chunk_tokens, overlap_tokens in MODELS:
                    chunks = iter_chunks(
                        doc.text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, model=model, kind=chunk_kind
                    )
                    per_model.append(
                        [
                            (
                                c.index,
                                c.start,
                                c.end,
                                c.trail,
                                c.tokens,
                                _digest(index_text(c.text)),
                                _digest(" ".join(terms(c.text))),
                            )
                            for c in chunks
                        ]
                    )
            out.append((corpus, doc.name, f"{sniffed}/{kind}", per_model))
    return out


def _exported(revision: str, folder: Path) -> Path:
    tree = folder / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "ctxtrio"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _run(revision: str, corpora: list[str]) -> list[Result]:
    """The results of ``revision``'s ``ctxtrio`` (exported, run in a child process)."""
    with tempfile.TemporaryDirectory(prefix="same-chunks-") as tmp:
        tree = _exported(revision, Path(tmp))
        recorded = Path(tmp) / "before.pickle"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        started = time.monotonic()
        subprocess.run(
            [sys.executable, __file__, "--write", str(recorded), "--corpora", *corpora], check=True, env=env, cwd=tmp
        )
        before: list[Result] = pickle.loads(recorded.read_bytes())  # written just now by this script
    print(f"{revision}: {len(before)} texts in {time.monotonic() - started:.0f} s")
    return before


def _labels(kinds: str) -> list[str]:
    """What each chunking of a text whose kinds are ``kinds`` ("sniffed/file's") was: kind and model."""
    sniffed, kind = kinds.split("/")
    return [f"{chunk_kind} {label}" for chunk_kind in dict.fromkeys((kind, sniffed)) for label, *_ in MODELS]


def compare(before: list[Result], after: list[Result]) -> int:
    """Print the first differences; the number of texts that differ."""
    if [(c, n) for c, n, _, _ in before] != [(c, n) for c, n, _, _ in after]:
        print("the two runs did not read the same texts")
        return 1
    differing = 0
    for (corpus, name, kind_a, chunked_a), (_, _, kind_b, chunked_b) in zip(before, after, strict=True):
        if kind_a == kind_b and chunked_a == chunked_b:
            continue
        differing += 1
        if differing <= 5:
            print(f"DIFFERS {corpus} {name}: kind {kind_a} vs {kind_b}")
            for label, a, b in zip(_labels(kind_b), chunked_a, chunked_b, strict=False):
                for x, y in zip(a, b, strict=False):
                    if x != y:
                        print(f"  {label}: {x[:5]} index {x[5].hex()} terms {x[6].hex()}")
                        print(f"  {' ' * len(label)}  {y[:5]} index {y[5].hex()} terms {y[6].hex()}")
                        break
                if len(a) != len(b):
                    print(f"  {label}: {len(a)} vs {len(b)} chunks")
    return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="git revision to compare this tree with")
    parser.add_argument("--write", metavar="FILE", type=Path, help="only record this tree's results in FILE")
    parser.add_argument("--before", metavar="FILE", type=Path, help="compare with results recorded by --write")
    parser.add_argument("--corpora", nargs="+", choices=[*sorted(CORPORA), "more", "code"], default=[*CORPORA, "more"])
    args = parser.parse_args()
    if args.write is not None:
        args.write.write_bytes(pickle.dumps(results(args.corpora)))
        return 0
    if args.before is not None:
        before: list[Result] = pickle.loads(args.before.read_bytes())  # written by this script (--write)
        print(f"{args.before}: {len(before)} texts")
    elif args.against is not None:
        before = _run(args.against, args.corpora)
    else:
        parser.error("give --against REV, --before FILE or --write FILE")
    after = results(args.corpora)
    differing = compare(before, after)
    chunkings = sum(len(per_model) for *_, per_model in after)
    chunks = sum(len(chunked) for *_, per_model in after for chunked in per_model)
    print(
        f"{len(after)} texts, {chunkings} chunkings, {chunks} chunks over {', '.join(args.corpora)}: "
        + (
            "identical (kind, index, start, end, trail, tokens, index text, terms)"
            if not differing
            else f"{differing} texts differ"
        )
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
