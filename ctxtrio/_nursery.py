"""A trio nursery whose lone ``CtxError`` comes out as itself, not in an exception group.

Trio nurseries raise ``ExceptionGroup`` even for one failure (strict exception
groups). Nurseries whose errors reach a caller use :func:`open_nursery` instead of
``trio.open_nursery``, so a disk full during an ingest reaches the model as the
StoreError that says "No space left on device" (see :func:`ctxtrio._errors.one_error`).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from ._errors import one_error

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["open_nursery"]


@asynccontextmanager
async def open_nursery() -> AsyncIterator[trio.Nursery]:
    """``trio.open_nursery()``, with a group holding one CtxError re-raised as that CtxError."""
    with one_error():
        async with trio.open_nursery() as nursery:
            yield nursery
