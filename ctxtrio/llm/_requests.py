"""The path every request to the endpoint takes: queue, breaker, deadline, translated errors.

::

    breaker.check()            fail fast while the breaker is open (before queueing)
    async with limiter:        one request at a time by default; waiting is a checkpoint,
                               so the caller's own cancel scope covers the queue too
        breaker.admit()        re-checked now; in half-open only one caller probes
        fail_after(...)        the settings' deadline for the kind of request (chat, probe,
                               embed), translated to LLMTimeoutError here
        httpx request          transport errors translated once to the LLMError family

:class:`Requests` is that path for one endpoint; :class:`~.client.LLMClient` and its
streamed chats (:mod:`._chat`) send everything through it. It owns no connection (the
client's ``httpx.AsyncClient`` does) and starts no tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import httpx
import trio

from .._errors import LLMError, LLMInterruptedError, LLMResponseError, LLMTimeoutError, LLMUnavailableError
from ._wire import InputRefusedError, OneChunk

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ._json import JSON
    from .breaker import Breaker
    from .messages import LLMSettings, RequestKind

__all__ = ["UNANSWERED_FAILURE_S", "Requests"]

_T = TypeVar("_T")

#: An abandoned request that waited this long without any answer counts as a failure.
UNANSWERED_FAILURE_S = 5.0


class Requests:
    """Requests to one endpoint, behind its circuit breaker and capacity limiter.

    Safe to share between tasks.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        settings: LLMSettings,
        breaker: Breaker,
        limiter: trio.CapacityLimiter,
    ) -> None:
        self._http = http
        self.settings = settings
        self.breaker = breaker
        self._limiter = limiter
        self._answered_at: float | None = None  # when the endpoint last answered usably
        self.probe_stretch = 1.0  # probes wait this many times probe_timeout_s

    def heard(self) -> None:
        """The endpoint sent something just now (a byte of a stream): it is alive."""
        self._answered_at = trio.current_time()

    async def call(
        self,
        method: str,
        url: str,
        body: JSON,
        judge: Callable[[httpx.Response], _T],
        *,
        kind: RequestKind = "probe",
    ) -> _T:
        """One plain request: queue, pass the breaker, send within the deadline of ``kind``, judge the answer."""

        async def exchange() -> _T:
            return judge(await self.send(method, url, body, kind=kind))

        return await self.guarded(exchange)

    async def guarded(self, exchange: Callable[[], Awaitable[_T]]) -> _T:
        """Queue, pass the breaker, run ``exchange``; record the verdict.

        A request its caller abandons (a tool call's deadline) after waiting at least
        :data:`UNANSWERED_FAILURE_S`, from an endpoint that had sent nothing in that
        long before it was sent and nothing since, counts as a failure: without this a
        hung server would never open the breaker and every later call would wait out
        its whole deadline. An endpoint that answered recently, or whose stream is
        still delivering tokens, is slow, not hung: cutting it is no verdict, and the
        next call resumes with it. An interrupted stream (:class:`LLMInterruptedError`)
        came from a server that works, and counts as an answer; so does an input the
        embeddings endpoint refuses (:class:`~._wire.InputRefusedError`): one text it will
        not take must not make every other text wait out a cooldown.
        """
        self.breaker.check()
        async with self._limiter:
            ticket = self.breaker.admit()
            sent_at = trio.current_time()
            judged = False
            try:
                result = await exchange()
            except (LLMInterruptedError, InputRefusedError):
                judged = True
                self.heard()
                self.breaker.succeeded(ticket)
                raise
            except LLMError:
                judged = True
                self.breaker.failed(ticket)
                raise
            else:
                judged = True
                self.heard()
                self.breaker.succeeded(ticket)
                return result
            finally:
                if not judged and self._looks_hung(sent_at):
                    self.breaker.failed(ticket)
                self.breaker.release(ticket)

    def _looks_hung(self, sent_at: float) -> bool:
        """An abandoned request waited long, and the endpoint was silent before it too."""
        waited = trio.current_time() - sent_at
        silent = self._answered_at is None or self._answered_at < sent_at - UNANSWERED_FAILURE_S
        return waited >= UNANSWERED_FAILURE_S and silent

    async def send(
        self, method: str, url: str, body: JSON, *, stream: bool = False, kind: RequestKind = "chat"
    ) -> httpx.Response:
        """One HTTP exchange under the settings' deadline for ``kind``; foreign errors translated here.

        With ``stream`` it returns once the headers are in, and the caller's own cancel
        scope is the deadline (the body is read, and closed, by the caller).
        """
        seconds = self.settings.timeout_for(kind) * (self.probe_stretch if kind == "probe" else 1.0)
        try:
            request = self._http.build_request(method, url, json=body)
            request.stream = OneChunk(request.content)
            if stream:
                return await self._http.send(request, stream=True)
            with trio.fail_after(seconds):
                return await self._http.send(request)
        except trio.TooSlowError as exc:
            raise LLMTimeoutError(f"{method} {url}: no answer within {seconds:g} s") from exc
        except httpx.TimeoutException as exc:
            raise LLMTimeoutError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
        except httpx.ConnectError as exc:
            raise LLMUnavailableError(f"{method} {url}: cannot connect: {exc}") from exc
        except httpx.TransportError as exc:
            raise LLMUnavailableError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
        except httpx.InvalidURL as exc:
            raise LLMUnavailableError(f"{method} {url}: invalid URL: {exc}") from exc
        except httpx.HTTPError as exc:
            raise LLMResponseError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
