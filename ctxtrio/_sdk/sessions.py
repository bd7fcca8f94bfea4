"""A cap on the SDK's Streamable HTTP sessions that closes the session idle longest.

The SDK's ``StreamableHTTPSessionManager`` keeps a session (~40 KB: its transport,
streams and server task) until the client deletes it or it has had no request in
flight for ``session_idle_timeout``; at ``max_sessions`` it answers a new client
503. A cap that refuses newcomers lets idle sessions lock active clients out, so at
the cap :func:`evict_idle_at_cap` closes the session that has been idle longest
instead (its client gets 404 on its next request and initializes again, as the MCP
spec says for an expired session), and logs it; only when every session is busy does
the SDK's 503 stand.

It reads SDK internals, each checked by a contract test in ``tests/test_sdk.py``: the
manager's ``_admit_session`` and ``_server_instances``, and each transport's
``idle_scope`` (whose deadline is the moment its idle time runs out, ``inf`` while a
request is in flight) and ``_requests_in_flight``.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["evict_idle_at_cap"]

log = logging.getLogger("ctxtrio.transport")


def evict_idle_at_cap(manager: StreamableHTTPSessionManager, cap: int, idle_s: float) -> None:
    """Make ``manager`` close its longest-idle session when a new one arrives at ``cap``."""
    admit = manager._admit_session

    def admit_evicting(requestor: Any) -> Any:
        sessions = manager._server_instances
        if len(sessions) >= cap:
            idle = [
                (transport.idle_scope.deadline, session_id)
                for session_id, transport in sessions.items()
                if transport.idle_scope is not None
                and math.isfinite(transport.idle_scope.deadline)
                and not getattr(transport, "_requests_in_flight", 0)
            ]
            if idle:
                deadline, session_id = min(idle)
                transport = sessions.pop(session_id)
                manager._session_owners.pop(session_id, None)
                transport.idle_scope.cancel()  # type: ignore[union-attr]  # filtered above
                import anyio

                idle_for = max(0.0, idle_s - (deadline - anyio.current_time()))
                log.info(
                    "HTTP session cap (%d) reached: closed session %s, idle %.0f s, the longest",
                    cap,
                    session_id[:12],
                    idle_for,
                )
        return admit(requestor)

    manager._admit_session = admit_evicting  # type: ignore[method-assign]
