"""One object with everything the SDK boundary asks of the surface (``ctxtrio._sdk.surface.Surface``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..tools.advice import advised_read
from . import complete, prompts, resources

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from .._errors import CtxError
    from .._wiring import Wiring

__all__ = ["ServedSurface"]


class ServedSurface:
    """The resources, prompts and completions of ``ctx``, in the protocol's JSON; ``offered``: the names of
    the tools served beside them (None: the full profile's), which a refusal's advice may name."""

    def __init__(self, ctx: Wiring, offered: Collection[str] | None = None) -> None:
        self._ctx = ctx
        self._offered = offered

    def templates(self) -> Sequence[Mapping[str, Any]]:
        return resources.TEMPLATES

    def prompts(self) -> Sequence[Mapping[str, Any]]:
        return prompts.PROMPTS

    async def list_resources(self, cursor: str | None) -> tuple[Sequence[Mapping[str, Any]], str | None]:
        return await resources.list_page(self._ctx, cursor)

    async def read_resource(self, uri: str) -> Mapping[str, Any]:
        return {"uri": uri, "mimeType": resources.MIME, "text": await resources.read(self._ctx, uri)}

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> Mapping[str, Any]:
        return await prompts.get_prompt(self._ctx, name, arguments)

    async def complete(self, ref_type: str, ref: str, argument: str, value: str) -> tuple[Sequence[str], int]:
        return await complete.complete(self._ctx, ref_type, ref, argument, value)

    def refusal(self, exc: CtxError, request: str) -> str:
        return advised_read(exc, request, self._offered)
