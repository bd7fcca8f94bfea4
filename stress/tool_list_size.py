"""What ``tools/list`` costs, and what each further cut of the full profile would save.

    python stress/tool_list_size.py

Sizes are ``len(json.dumps({"tools": [...]}, separators=(",", ":")))``, the tools/list
result as compact JSON, the measure of tests/tools/test_tool_list.py and
test_compact_profile.py. Prints the full and compact profiles, with and without their
output schemas, then the full profile after each cut below applied on top of the ones
before it. The cuts are not applied by the server: each one drops information a client
or the model uses, and the table shows how far they would get toward a whole list of
7,000 characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

from ctxtrio.store.records import JSON
from ctxtrio.tools.compact import COMPACT_TOOLS
from ctxtrio.tools.table import TOOLS, listing
from testkit.tool_list import listed_chars

if TYPE_CHECKING:
    from collections.abc import Callable

Listed = list[dict[str, JSON]]


def without(value: JSON, keys: set[str]) -> JSON:
    if isinstance(value, dict):
        return {key: without(item, keys) for key, item in value.items() if key not in keys}
    if isinstance(value, list):
        return [without(item, keys) for item in value]
    return value


def _drop_output_required(tool: dict[str, JSON]) -> dict[str, JSON]:
    return {**tool, "outputSchema": without(tool["outputSchema"], {"required"})}


def _drop_title(tool: dict[str, JSON]) -> dict[str, JSON]:
    return {key: value for key, value in tool.items() if key != "title"}


def _drop_bounds(tool: dict[str, JSON]) -> dict[str, JSON]:
    return {**tool, "inputSchema": without(tool["inputSchema"], {"minimum", "maximum", "default"})}


def _drop_descriptions(tool: dict[str, JSON]) -> dict[str, JSON]:
    return {**tool, "description": "", "inputSchema": without(tool["inputSchema"], {"description"})}


CUTS: list[tuple[str, Callable[[dict[str, JSON]], dict[str, JSON]]]] = [
    ("output schemas without 'required' (clients lose: every key is always present)", _drop_output_required),
    ("no tool titles (hosts show the name instead)", _drop_title),
    ("no bounds or defaults in input schemas (the model guesses limits)", _drop_bounds),
    ("no descriptions at all (the model guesses what each tool is for)", _drop_descriptions),
]


def main() -> None:
    full = [listing(tool) for tool in TOOLS]
    compact = [listing(tool) for tool in COMPACT_TOOLS]
    model = [{key: value for key, value in tool.items() if key != "outputSchema"} for tool in full]
    print(
        f"full profile ({len(full)} tools): {listed_chars(full):,} characters; without outputSchema {listed_chars(model):,}"
    )
    small = [{key: value for key, value in tool.items() if key != "outputSchema"} for tool in compact]
    print(
        f"compact profile ({len(compact)} tools): {listed_chars(compact):,} characters; without outputSchema {listed_chars(small):,}"
    )
    print("full profile after each cut, on top of the ones above it:")
    for label, cut in CUTS:
        full = [cut(tool) for tool in full]
        print(f"  {listed_chars(full):6,}  {label}")


if __name__ == "__main__":
    main()
