"""outputSchema and structuredContent both come from one projection of the library's result types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import jsonschema
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.docs.model import SearchHit, SearchResult
from ctxtrio.memory.model import CompactResult
from ctxtrio.tools.output import Output
from ctxtrio.tools.table import TOOLS

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class _Inner:
    name: str
    size: int


@dataclass(frozen=True, slots=True)
class _Outer:
    inner: _Inner | None
    items: tuple[_Inner, ...]
    ratio: float

    @property
    def count(self) -> int:
        return len(self.items)


def test_field_specs_are_parsed_once_per_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """An Output parses its field specs when built, its nested ones too; dumping a result parses none."""
    from ctxtrio.tools import output

    out = Output(_Outer, ("name=inner.name", "items", "count"), items={"items": Output(_Inner, ("name",))})
    parses: list[tuple[str, ...]] = []

    def parsed(fields: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
        parses.append(fields)
        return []

    monkeypatch.setattr(output, "_parsed", parsed)
    value = _Outer(_Inner("a", 1), (_Inner("b", 2),), 0.5)
    assert out.dump(value) == out.dump(value) == {"name": "a", "items": [{"name": "b"}], "count": 1}
    assert parses == []


def test_paths_renames_properties_and_nulls() -> None:
    """Dotted paths, renames, mapped sequences, properties and optional parents give matching schema and content."""
    out = Output(_Outer, ("name=inner.name", "sizes=items.size", "ratio", "count"))
    assert out.schema() == {
        "type": "object",
        "properties": {
            "name": {"type": ["string", "null"]},
            "sizes": {"type": "array", "items": {"type": "integer"}},
            "ratio": {"type": "number"},
            "count": {"type": "integer"},
        },
        "required": ["name", "sizes", "ratio", "count"],
    }
    value = _Outer(None, (_Inner("a", 1), _Inner("b", 2)), 0.123456)
    dumped = out.dump(value)
    assert dumped == {"name": None, "sizes": [1, 2], "ratio": 0.123, "count": 2}
    jsonschema.validate(dumped, out.schema())


def test_search_hits_are_objects_with_named_fields() -> None:
    """A search result's hits become objects, never bare arrays, and validate against the schema."""
    out = Output(SearchResult, ("hits", "omitted"), items={"hits": Output(SearchHit, ("doc_id", "index", "score"))})
    hit = SearchHit("build-log", "build log", 5, ("Build",), 5.9641, "text", 3)
    dumped = out.dump(SearchResult("q", (hit,), 0, False, 100, 3))
    assert dumped == {"hits": [{"doc_id": "build-log", "index": 5, "score": 5.964}], "omitted": 0}
    jsonschema.validate(dumped, out.schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"hits": [["build-log", 5, 5.964]], "omitted": 0}, out.schema())


def test_unprojected_objects_are_refused() -> None:
    """A field holding a dataclass without a nested projection fails loudly, at schema time."""
    with pytest.raises(TypeError, match="project it"):
        Output(CompactResult, ("status",)).schema()


def test_every_tool_declares_an_object_schema() -> None:
    """Every row of the table has an output projection whose schema is a JSON-schema object."""
    for tool in TOOLS:
        assert tool.output is not None, tool.name
        schema = tool.output.schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["required"], tool.name


async def test_every_tool_result_validates_through_the_sdk_client(tmp_path: Path) -> None:
    """All 15 tools, called through the SDK client (which validates structuredContent against outputSchema)."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    notes: list[tuple[str, dict[str, object]]] = [
        ("context_append", {"session_id": "s", "text": f"note {n} about cookies"}) for n in range(6)
    ]
    calls: list[tuple[str, dict[str, object]]] = [
        ("context_guide", {}),
        ("context_open", {"session_id": "s", "title": "t"}),
        *notes,
        ("context_append", {"session_id": "s", "text": "goal", "pinned": True}),
        ("context_recall", {"session_id": "s", "query": "cookies"}),
        ("context_status", {"session_id": "s"}),
        ("context_compact", {"session_id": "s", "keep_recent": 2, "dry_run": True}),
        ("context_compact", {"session_id": "s", "keep_recent": 2}),
        ("context_update", {"session_id": "s", "entry_id": "<the pinned goal>", "pinned": False}),
        ("context_list_sessions", {}),
        ("doc_ingest", {"text": "# A\n\nalpha words\n\n# B\n\nbeta words\n", "doc_id": "d"}),
        ("doc_outline", {"doc_id": "d"}),
        ("doc_search", {"query": "beta"}),
        ("doc_window", {"doc_id": "d"}),
        ("doc_summarize", {"doc_id": "d"}),
        ("doc_list", {}),
        ("doc_forget", {"doc_id": "d"}),
    ]
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        results: dict[str, CallToolResult] = {}
        for name, arguments in calls:
            if name == "context_update":
                goal = results["context_append"].structured_content
                assert goal is not None
                arguments = {**arguments, "entry_id": goal["id"]}
            results[name] = await client.call_tool(name, arguments)  # raises on a schema mismatch
            assert not results[name].is_error, (name, results[name].content)
        wrong = CallToolResult(content=[TextContent(type="text", text="x")], structured_content={"hits": [[1]]})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.session.validate_tool_result("doc_search", wrong)
    assert set(results) == set(listed)
    for name, result in results.items():
        schema = listed[name].output_schema
        assert schema is not None and result.structured_content is not None
        jsonschema.validate(result.structured_content, schema)
        assert set(result.structured_content) == set(schema["properties"]), name
