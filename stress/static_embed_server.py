"""Serve static token vectors (``stress/distill_static.py``) as an OpenAI-compatible ``POST /v1/embeddings``.

A prototype for measuring the distilled vectors with ``stress/retrieval_bench.py
--embed-model static --embed-base-url http://127.0.0.1:PORT/v1`` before they are built in.
Run with the real-model venv's python (it tokenizes with the model's own ``tokenizer.json``
through ``tokenizers``)::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/static_embed_server.py --vectors /tmp/static.npz --port 8765

Request and answer as OpenAI's API reference, "Create embeddings", documents them (and
llama.cpp's ``llama-server`` ``POST /v1/embeddings`` serves): request ``{"model",
"input": str | [str]}``; answer ``{"object": "list", "data": [{"object": "embedding",
"index": i, "embedding": [float]}], "model", "usage": {"prompt_tokens",
"total_tokens"}}``. A text's vector is the mean of its word pieces' rows ([CLS]/[SEP]
left out), normalised; a text with no known piece gets a zero vector.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import numpy as np
from tokenizers import Tokenizer  # type: ignore[import-not-found,unused-ignore]  # the real-model venv's

ZIP = Path.home() / ".cache/ctxtrio-realmodel/venv/lib/python3.11/site-packages/all_minilm_l6_v2/model.zip"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--max-tokens", type=int, default=512, help="word pieces read of a text at most")
    args = parser.parse_args()
    data = np.load(args.vectors)
    table = data["vectors"].astype(np.float32) * data["scales"][:, None]
    with zipfile.ZipFile(ZIP) as archive:
        tokenizer = Tokenizer.from_str(archive.read("tokenizer.json").decode())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    served = {"tokens": 0}

    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for encoding in tokenizer.encode_batch(texts, add_special_tokens=False):
            ids = encoding.ids[: args.max_tokens]
            served["tokens"] += len(ids)
            vector = table[ids].mean(axis=0) if ids else np.zeros(table.shape[1], np.float32)
            norm = float(np.linalg.norm(vector))
            out.append((vector / norm if norm > 0 else vector).tolist())
        return out

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            before = served["tokens"]
            vectors = embed(texts)
            used = served["tokens"] - before
            answer = {
                "object": "list",
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                "model": body.get("model", "static"),
                "usage": {"prompt_tokens": used, "total_tokens": used},
            }
            raw = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: object) -> None:
            pass

    print(
        f"serving {args.vectors} ({table.shape[0]} x {table.shape[1]}) on http://127.0.0.1:{args.port}/v1", flush=True
    )
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
