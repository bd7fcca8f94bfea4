"""Which of the models a server lists is which: its language models and its embedding models.
Pure.

``GET /v1/models`` gives each model's id and nothing else on every server ctxtrio talks to
(LM Studio, Ollama, llama.cpp, vLLM), so the id is what tells them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["chat_model_among", "embedding_models_among"]


def embedding_models_among(ids: Sequence[str]) -> list[str]:
    """The ids of ``ids`` that name an embedding model by the word ``embed`` in them.

    A server lists its embedding models beside its language models, in an order of its own:
    LM Studio's ``text-embedding-nomic-embed-text-v1.5`` (the model key its docs' model
    listing shows), Ollama's ``nomic-embed-text``, ``mxbai-embed-large``,
    ``snowflake-arctic-embed``. The id is all ``GET /v1/models`` says about a model on
    every server, so the name is the test; an embedding model named otherwise
    (``all-minilm``, ``bge-m3``) passes for a language model.
    """
    return [model_id for model_id in ids if "embed" in model_id.lower()]


def chat_model_among(ids: Sequence[str]) -> str | None:
    """The model a chat or a calibration should use when none is configured: the first of
    ``ids`` that is not an embedding model (:func:`embedding_models_among`), else the first.

    A summary asked of an embedding model fails, and token rates calibrated against its
    tokenizer would be another model's.
    """
    embedding = set(embedding_models_among(ids))
    return next((model_id for model_id in ids if model_id not in embedding), ids[0] if ids else None)
