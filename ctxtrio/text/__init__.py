"""Pure text functions: token estimates, search terms, chunking, extractive summaries."""

from ctxtrio.text.chunking import Chunk, chunk_document, iter_chunks
from ctxtrio.text.extractive import first_sentence, summarize_extractive
from ctxtrio.text.sentences import split_sentences
from ctxtrio.text.terms import STOPWORDS, terms, unique_terms
from ctxtrio.text.tokens import ScriptClass, TokenModel, TokenModelRef, class_counts

__all__ = [
    "Chunk",
    "STOPWORDS",
    "ScriptClass",
    "TokenModel",
    "TokenModelRef",
    "chunk_document",
    "class_counts",
    "first_sentence",
    "iter_chunks",
    "split_sentences",
    "summarize_extractive",
    "terms",
    "unique_terms",
]
