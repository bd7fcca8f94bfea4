"""JSON-RPC messages as a test writes them to a server's stdin: one line each (the stdio transport's framing), and
the ``_meta`` a 2026-07-28 client puts in every request (no ``initialize`` handshake in that revision)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["INITIALIZED", "line", "modern_meta", "modern_request"]

#: The notification a 2025 client sends after ``initialize``'s answer.
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: object) -> bytes:
    """``message`` as one line of JSON, as a stdio client writes it."""
    return json.dumps(message).encode() + b"\n"


def modern_meta(client: str = "t") -> dict[str, object]:
    """The request ``_meta`` of a 2026-07-28 client named ``client``: its protocol version, who it is, what it can do."""
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def modern_request(
    request_id: int, method: str, params: Mapping[str, object] | None = None, *, client: str = "t"
) -> bytes:
    """A 2026-07-28 request line: ``params`` with the client's ``_meta`` (:func:`modern_meta`)."""
    meta = modern_meta(client)
    return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}})
