"""Pure text functions: token estimates, search terms, chunking, extractive summaries."""

from ctxtrio.text.tokens import ScriptClass, TokenModel, TokenModelRef, class_counts

__all__ = ["ScriptClass", "TokenModel", "TokenModelRef", "class_counts"]
