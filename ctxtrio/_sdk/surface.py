"""Resources, prompts, completion, logging level and subscriptions on the SDK's server.

:func:`install` registers the handlers (``Server.add_request_handler``, public) on a
server :func:`ctxtrio._sdk.make_server` built, so the capabilities the SDK derives from
its handlers (``initialize``, ``server/discover``) are exactly what is served. The
values come from a :class:`Surface` in plain JSON (the protocol's objects), validated
here against the SDK's models; a ``CtxError`` raised by the surface becomes an
``Invalid params`` (-32602) protocol error, with the URI in ``data`` for
``resources/read`` (SEP-2164), except a ``StoppingError`` (the shutdown grace cut the
request off): an ``Internal error`` (-32603) in the surface's words, since the request
was sound.

Caching hints (2026-07-28, SEP-2549) are filled by the SDK from ``Server.cache_hints``:
the fixed lists (tools, prompts, templates) may be reused for a while, what reads the
store (``resources/list``, ``resources/read``) is stale at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .._errors import CtxError, StoppingError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.types import (
        CompleteRequestParams,
        CompleteResult,
        DiscoverResult,
        EmptyResult,
        GetPromptRequestParams,
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        PaginatedRequestParams,
        ReadResourceRequestParams,
        ReadResourceResult,
        RequestParams,
        SetLevelRequestParams,
        SubscribeRequestParams,
        UnsubscribeRequestParams,
    )

    from .events import Hub

__all__ = ["LIST_TTL_MS", "Surface", "install"]

#: How long a client may reuse tools/list, prompts/list and resources/templates/list.
LIST_TTL_MS = 300_000


class Surface(Protocol):
    """The resources, prompts and completions of a server, in the protocol's JSON.

    The async methods raise ``CtxError`` to refuse a request (:meth:`refusal` words it), and
    ``StoppingError`` when the server's shutdown grace cut one off (its message is the answer).
    """

    def templates(self) -> Sequence[Mapping[str, Any]]: ...
    def prompts(self) -> Sequence[Mapping[str, Any]]: ...
    async def list_resources(self, cursor: str | None) -> tuple[Sequence[Mapping[str, Any]], str | None]: ...
    async def read_resource(self, uri: str) -> Mapping[str, Any]:
        """One ``TextResourceContents`` (``uri``, ``mimeType``, ``text``)."""
        ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> Mapping[str, Any]:
        """A ``GetPromptResult``."""
        ...

    async def complete(self, ref_type: str, ref: str, argument: str, value: str) -> tuple[Sequence[str], int]:
        """At most 100 values, and how many match in all."""
        ...

    def refusal(self, exc: CtxError, request: str) -> str:
        """What the client reads when ``request`` (``resources/read``, ...) failed with ``exc``: its message
        and the next step, worded as the tools word theirs."""
        ...


def _refused(surface: Surface, exc: CtxError, request: str, data: Mapping[str, Any] | None = None) -> Exception:
    """The protocol error ``request`` answers for ``exc``: the surface's refusal, or that the server stops."""
    from mcp import types
    from mcp.shared.exceptions import MCPError

    data = dict(data) if data is not None else None
    if isinstance(exc, StoppingError):
        return MCPError(types.INTERNAL_ERROR, str(exc), data)
    return MCPError(types.INVALID_PARAMS, surface.refusal(exc, request), data)


# C901 waived: a flat list of the SDK's handlers, each a few lines; mccabe adds their branches to install's.
def install(server: Server[Any], surface: Surface, hub: Hub) -> None:  # noqa: C901
    """Serve ``surface`` and ``hub``'s subscriptions and log levels on ``server``."""
    from mcp import types
    from mcp.server.caching import CacheHint, validate_cache_hints
    from mcp.shared.exceptions import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    templates = types.ListResourceTemplatesResult(
        resource_templates=[types.ResourceTemplate.model_validate(t) for t in surface.templates()]
    )
    prompts = types.ListPromptsResult(prompts=[types.Prompt.model_validate(p) for p in surface.prompts()])

    async def list_resources(ctx: ServerRequestContext[Any], params: PaginatedRequestParams) -> ListResourcesResult:
        hub.seen(ctx.session)
        try:
            page, cursor = await surface.list_resources(params.cursor)
        except CtxError as exc:
            raise _refused(surface, exc, "resources/list") from None
        return types.ListResourcesResult(resources=[types.Resource.model_validate(r) for r in page], next_cursor=cursor)

    async def list_templates(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams
    ) -> ListResourceTemplatesResult:
        return templates

    async def read_resource(ctx: ServerRequestContext[Any], params: ReadResourceRequestParams) -> ReadResourceResult:
        hub.seen(ctx.session)
        try:
            contents = await surface.read_resource(params.uri)
        except CtxError as exc:
            raise _refused(surface, exc, "resources/read", {"uri": params.uri}) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents.model_validate(contents)])

    async def subscribe(ctx: ServerRequestContext[Any], params: SubscribeRequestParams) -> EmptyResult:
        if not await hub.subscribe(ctx.session, params.uri):
            raise MCPError(types.INVALID_PARAMS, "too many subscriptions on this connection; unsubscribe some first")
        return types.EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams) -> EmptyResult:
        hub.unsubscribe(ctx.session, params.uri)
        return types.EmptyResult()

    async def list_prompts(ctx: ServerRequestContext[Any], params: PaginatedRequestParams) -> ListPromptsResult:
        return prompts

    async def get_prompt(ctx: ServerRequestContext[Any], params: GetPromptRequestParams) -> GetPromptResult:
        hub.seen(ctx.session)
        try:
            result = await surface.get_prompt(params.name, params.arguments or {})
        except CtxError as exc:
            raise _refused(surface, exc, "prompts/get") from None
        return types.GetPromptResult.model_validate(result)

    async def complete(ctx: ServerRequestContext[Any], params: CompleteRequestParams) -> CompleteResult:
        ref = params.ref
        name = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        try:
            values, total = await surface.complete(ref.type, name, params.argument.name, params.argument.value)
        except CtxError as exc:
            raise _refused(surface, exc, "completion/complete") from None
        return types.CompleteResult(
            completion=types.Completion(values=list(values), total=total, has_more=total > len(values))
        )

    async def set_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
        hub.set_level(ctx.session, params.level)
        return types.EmptyResult()

    async def discover(ctx: ServerRequestContext[Any], params: RequestParams) -> DiscoverResult:
        # The SDK's own answer, minus what 2026-07-28 does not get from us: no list of
        # tools or prompts ever changes, and logging is not sent on that revision.
        capabilities = server.get_capabilities(protocol_version=ctx.protocol_version)
        update: dict[str, Any] = {"logging": None}
        if capabilities.tools is not None:
            update["tools"] = capabilities.tools.model_copy(update={"list_changed": False})
        if capabilities.prompts is not None:
            update["prompts"] = capabilities.prompts.model_copy(update={"list_changed": False})
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=capabilities.model_copy(update=update),
            instructions=server.instructions,
        )

    server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, list_templates)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
    server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, hub.listen)
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)
    server.add_request_handler("completion/complete", types.CompleteRequestParams, complete)
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.add_request_handler("server/discover", types.RequestParams, discover)
    fixed, fresh = CacheHint(ttl_ms=LIST_TTL_MS), CacheHint(ttl_ms=0)
    server.cache_hints = validate_cache_hints(
        {
            "tools/list": fixed,
            "prompts/list": fixed,
            "resources/templates/list": fixed,
            "resources/list": fresh,
            "resources/read": fresh,
        }
    )
