"""One object with everything the SDK boundary asks of the surface (``ctxtrio._sdk.surface.Surface``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import StoppingError
from ..tools.advice import advised_read
from ..tools.stopping import CutOff, Stopping
from . import complete, prompts, resources

if TYPE_CHECKING:
    from collections.abc import Awaitable, Collection, Mapping, Sequence

    from .._errors import CtxError
    from .._wiring import Wiring

__all__ = ["ServedSurface"]

T = TypeVar("T")


class ServedSurface:
    """The resources, prompts and completions of ``ctx``, in the protocol's JSON; ``offered``: the names of
    the tools served beside them (None: the full profile's), which a refusal's advice may name.

    Each request that reads the store runs under ``stopping``'s deadline, as a tool call does
    (:class:`~ctxtrio.tools.runner.ToolRunner`): one the shutdown grace cuts off raises
    :class:`~ctxtrio._errors.StoppingError`, which the SDK boundary answers, instead of being
    cancelled unanswered with its connection.
    """

    def __init__(self, ctx: Wiring, offered: Collection[str] | None = None, stopping: Stopping | None = None) -> None:
        self._ctx = ctx
        self._offered = offered
        self._stopping = stopping if stopping is not None else Stopping()

    def templates(self) -> Sequence[Mapping[str, Any]]:
        return resources.TEMPLATES

    def prompts(self) -> Sequence[Mapping[str, Any]]:
        return prompts.PROMPTS

    async def list_resources(self, cursor: str | None) -> tuple[Sequence[Mapping[str, Any]], str | None]:
        return await self._bounded("resources/list", "list the resources again", resources.list_page(self._ctx, cursor))

    async def read_resource(self, uri: str) -> Mapping[str, Any]:
        text = await self._bounded("resources/read", f"read {uri[:200]} again", resources.read(self._ctx, uri))
        return {"uri": uri, "mimeType": resources.MIME, "text": text}

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> Mapping[str, Any]:
        again = f"get prompt {name[:80]!r} again"
        return await self._bounded("prompts/get", again, prompts.get_prompt(self._ctx, name, arguments))

    async def complete(self, ref_type: str, ref: str, argument: str, value: str) -> tuple[Sequence[str], int]:
        asked = complete.complete(self._ctx, ref_type, ref, argument, value)
        return await self._bounded("completion/complete", "ask again", asked)

    def refusal(self, exc: CtxError, request: str) -> str:
        return advised_read(exc, request, self._offered)

    async def _bounded(self, request: str, again: str, reading: Awaitable[T]) -> T:
        """``reading``'s value, or StoppingError when the shutdown grace ends before it does."""
        answer = await self._stopping.finish(request, reading)
        if answer is CutOff.CUT_OFF:
            raise StoppingError(self._stopping.not_done("this request", again))
        return answer
