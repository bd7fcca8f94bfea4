"""Build the word-neighbour table (``ctxtrio/text/neighbours.txt.gz``) from all-MiniLM-L6-v2, by rule.

Run from the repository root with the real-model venv's python (it has torch and
transformers; numpy alone is enough when ``--raw`` exists already)::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/build_neighbours.py --raw /tmp/static/raw_mean.npy

What it does, deterministically, and untouched by hand afterwards:

1. takes each WordPiece token of the model's 30,522-token vocabulary passed through the
   model alone and mean-pooled (``stress/distill_static.py``'s token outputs, the
   ``--raw`` cache; computed here when it is missing);
2. keeps the whole English words: tokens of ``--min-letters`` or more ASCII letters
   after the special tokens and single characters (not ``##`` pieces, digits or
   punctuation), 21,719 tokens with the default of 2 (the first ``--words`` by the
   vocabulary's frequency order, all by default);
3. centres their vectors (the mean removed) and normalises them; of each word's
   ``--candidates`` others most similar by cosine, its neighbours are the first ``--k``
   of similarity at least ``--floor`` (rounded to hundredths) that are neither a word
   that names no topic (``ctxtrio.text.terms.STOPWORDS`` and
   ``ctxtrio.text.query.QUESTION_WORDS``) nor a form of the word itself (the same first
   four letters: ``sleep`` and ``sleeping``; what BM25 over exact terms needs least);
4. writes one line per word that has any: ``word neighbour:similarity ...``
   (similarity in hundredths, best first), gzip-compressed with a fixed mtime.

The model (sentence-transformers/all-MiniLM-L6-v2) is Apache-2.0; the table is
derived from its weights.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import tempfile
import time
import zipfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import numpy as np

from ctxtrio.text.query import QUESTION_WORDS
from ctxtrio.text.terms import STOPWORDS

NO_TOPIC = STOPWORDS | QUESTION_WORDS

ZIP = Path.home() / ".cache/ctxtrio-realmodel/venv/lib/python3.11/site-packages/all_minilm_l6_v2/model.zip"
OUT = Path(__file__).resolve().parents[1] / "ctxtrio" / "text" / "neighbours.txt.gz"
#: Ids below this are [PAD], [unused*], [UNK], [CLS], [SEP], [MASK] and single characters.
FIRST_WORD_ID = 1996


def vocabulary(zip_path: Path, tokenizer: Path | None) -> list[str]:
    """The model's WordPiece tokens in id order."""
    if tokenizer is not None:
        raw = tokenizer.read_text(encoding="utf-8")
    else:
        with zipfile.ZipFile(zip_path) as archive:
            name = next(n for n in archive.namelist() if n.endswith("tokenizer.json"))
            raw = archive.read(name).decode("utf-8")
    vocab_map: dict[str, int] = json.loads(raw)["model"]["vocab"]
    return sorted(vocab_map, key=vocab_map.__getitem__)


def token_vectors(raw: Path, zip_path: Path) -> np.ndarray:
    """The token outputs (read from ``raw``, else computed by distill_static and saved there)."""
    if raw.exists():
        loaded: np.ndarray = np.load(raw).astype(np.float32)
        return loaded
    from distill_static import token_outputs  # needs torch: the real-model venv

    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(tmp)
        vectors: np.ndarray = token_outputs(Path(tmp), "mean")
    np.save(raw, vectors)
    return vectors.astype(np.float32)


def neighbours(
    words: list[str], vectors: np.ndarray, candidates: int, k: int, floor: float
) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each word's neighbours (see the module's docstring, step 3), best first."""
    centred = vectors - vectors.mean(axis=0)
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    table: list[tuple[str, list[tuple[str, int]]]] = []
    for start in range(0, len(words), 1024):
        block = centred[start : start + 1024] @ centred.T
        for row, similarities in enumerate(block):
            similarities[start + row] = -1.0
            word = words[start + row]
            best = np.argsort(-similarities, kind="stable")[:candidates]
            scored = [(words[n], round(float(similarities[n]) * 100)) for n in best]
            near = [(w, s) for w, s in scored if s >= round(floor * 100) and w not in NO_TOPIC and w[:4] != word[:4]]
            if near[:k]:
                table.append((word, near[:k]))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, required=True, help="token outputs (.npy, mean pooling)")
    parser.add_argument("--zip", type=Path, default=ZIP, help="the model's zip (for its tokenizer)")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer.json instead of the zip's")
    parser.add_argument("--min-letters", type=int, default=2)
    parser.add_argument("--words", type=int, default=0, help="keep the first N words only (0: all)")
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--k", type=int, default=6)
    parser.add_argument("--floor", type=float, default=0.45)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.process_time()
    vocab = vocabulary(args.zip, args.tokenizer)
    vectors = token_vectors(args.raw, args.zip)
    word = re.compile(f"[a-z]{{{args.min_letters},}}")
    kept = [n for n in range(FIRST_WORD_ID, len(vocab)) if word.fullmatch(vocab[n])]
    if args.words:
        kept = kept[: args.words]
    words = [vocab[n] for n in kept]
    table = neighbours(words, vectors[kept], args.candidates, args.k, args.floor)
    text = "".join(f"{w} " + " ".join(f"{n}:{s}" for n, s in near) + "\n" for w, near in table)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(text.encode("ascii"))
    args.out.write_bytes(buffer.getvalue())
    pairs = sum(len(near) for _, near in table)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:16]
    print(
        f"{len(words)} words, {len(table)} with neighbours, {pairs} pairs "
        f"(of {args.candidates} candidates, k {args.k}, floor {args.floor}); "
        f"wrote {args.out}: {args.out.stat().st_size / 1e3:.0f} KB gzip ({len(text) / 1e3:.0f} KB text), sha256 {digest}; "
        f"{time.process_time() - started:.1f} CPU-s"
    )


if __name__ == "__main__":
    main()
