"""Which listed model is a language model and which an embedding model (llm/models.py)."""

from __future__ import annotations

from ctxtrio.llm.models import chat_model_among, embedding_models_among


def test_embedding_models_are_told_by_their_ids() -> None:
    """Ids naming "embed" in any case are embedding models (LM Studio's, Ollama's); others are not."""
    listed = [
        "text-embedding-nomic-embed-text-v1.5",
        "qwen2.5-7b-instruct",
        "mxbai-embed-large",
        "Snowflake-Arctic-EMBED",
    ]
    assert embedding_models_among(listed) == [listed[0], listed[2], listed[3]]
    assert embedding_models_among(["gemma-3-270m-it"]) == []


def test_the_chat_model_is_the_first_language_model_listed() -> None:
    """An embedding model listed first is passed over; a server listing only embedding models gets its first;
    one listing nothing gets None."""
    assert chat_model_among(["nomic-embed-text", "llama3.2:3b", "qwen2.5:7b"]) == "llama3.2:3b"
    assert chat_model_among(["qwen2.5:7b", "nomic-embed-text"]) == "qwen2.5:7b"
    assert chat_model_among(["nomic-embed-text", "mxbai-embed-large"]) == "nomic-embed-text"
    assert chat_model_among([]) is None
