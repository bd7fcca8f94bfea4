"""stress/embed_cache.py: the caching embeddings endpoint answers in order, embeds a text once, refuses bad bodies."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
from embed_cache import Cache, serve


class CountingModel:
    """Stands in for SentenceTransformer.encode: a vector from each text's length, and what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.asked += texts
        return np.array([[float(len(text)), 1.0] for text in texts], dtype=np.float32)


def test_texts_are_embedded_once_and_answered_in_order(tmp_path: Path) -> None:
    model = CountingModel()
    server = serve(0, Cache(tmp_path / "cache.sqlite3"), model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings"
    try:
        first = httpx.post(url, json={"input": ["abc", "a", "abc"], "model": "m"}).json()
        assert [row["index"] for row in first["data"]] == [0, 1, 2]
        assert [row["embedding"] for row in first["data"]] == [[3.0, 1.0], [1.0, 1.0], [3.0, 1.0]]
        assert sorted(model.asked) == ["a", "abc"]  # the repeated text once
        again = httpx.post(url, json={"input": "abc", "model": "m"}).json()
        assert again["data"][0]["embedding"] == [3.0, 1.0] and len(model.asked) == 2  # from the cache
        assert httpx.post(url, content=b"not json").status_code == 400
        assert httpx.post(url, json={"model": "m"}).status_code == 400
    finally:
        server.shutdown()
        server.server_close()
    reopened = Cache(tmp_path / "cache.sqlite3")  # kept on disk for the next run
    assert reopened.get(["a", "zz"])[0] is not None and reopened.get(["zz"]) == [None]
