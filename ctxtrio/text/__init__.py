"""Pure text functions: token estimates, search terms, chunking, extractive summaries."""

from ctxtrio.text.terms import STOPWORDS, terms, unique_terms
from ctxtrio.text.tokens import ScriptClass, TokenModel, TokenModelRef, class_counts

__all__ = [
    "STOPWORDS",
    "ScriptClass",
    "TokenModel",
    "TokenModelRef",
    "class_counts",
    "terms",
    "unique_terms",
]
