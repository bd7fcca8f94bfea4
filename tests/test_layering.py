"""The dependency direction of DESIGN.md, checked on every import in ctxtrio/ (TYPE_CHECKING ones too).

transport -> tools -> memory/docs -> store/llm -> text, and only ``_app.py`` knows every
component: transport and tools never import each other, and each is wired by ``_app``.
No two modules import each other, directly or around a longer loop (TYPE_CHECKING
imports count: a cycle there is still two modules that cannot be read apart).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

PACKAGE = Path(__file__).resolve().parents[1] / "ctxtrio"

#: Modules anyone may import: the error tree, the bounds, the version, the nursery helper, the thread clock,
#: the progress callback type, the lazy names of a package.
BASE = {"_clock", "_errors", "_json", "_lazy", "_limits", "_locks", "_version", "_nursery", "_progress"}

#: Component -> the components it may import (besides itself and BASE).
ALLOWED: dict[str, set[str]] = {
    "text": set(),
    "store": {"text"},
    "llm": {"text"},
    # One settings row and how a setting's text reads (yes/no, loopback host), and the range
    # checks over the values Config holds (a Protocol, not Config): Config's parts.
    "_setting": set(),
    "_config_checks": {"_setting"},
    "_config": {"_setting", "_config_checks"},
    "_platform": set(),
    "_live": {"_config", "text"},
    "memory": {"store", "llm", "text", "_live", "_config"},
    "docs": {"store", "llm", "text", "_live", "_config"},
    # The public face (config, data dir, the two services) and, beside it, the handles the server runs on.
    "_context": {"memory", "docs", "store", "_config"},
    "_wiring": {"_context", "memory", "docs", "store", "llm", "_live", "_config"},
    "tools": {"memory", "docs", "store", "text", "_wiring", "_live", "_config", "_setting"},
    # Resources, prompts, completion: the MCP surface beyond tools (reads the guide's text).
    "surface": {"tools", "memory", "docs", "store", "text", "_wiring", "_live", "_config"},
    "_sdk": set(),
    "transport": {"_sdk", "_config", "_setting"},
    "_app": {
        "transport",
        "tools",
        "surface",
        "_sdk",
        "memory",
        "docs",
        "store",
        "llm",
        "text",
        "_context",
        "_wiring",
        "_live",
        "_config",
    },
    "_cli": {"_app", "_sdk", "transport", "store", "_config", "_platform", "cli"},
    # The subcommands: the library's services, as a person or a script sees them.
    "cli": {"__init__", "_wiring", "memory", "docs", "store", "llm", "text", "_config", "_setting"},
    "__init__": {"_app", "_context", "_config", "_platform", "memory", "docs", "llm", "store", "text"},
    "__main__": {"_cli"},
}
ALLOWED.update({name: set() for name in BASE})


def _component(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, package_dir: Path = PACKAGE) -> Iterator[tuple[str, int]]:
    """Every ctxtrio module ``path`` imports, with the line, relative imports resolved."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    package = ".".join(parts[:-1]) if parts[-1] != "__init__" else ".".join(parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                if node.module:
                    yield ".".join([*base, node.module]), node.lineno
                else:
                    yield from ((".".join([*base, alias.name]), node.lineno) for alias in node.names)
            elif node.module and node.module.split(".")[0] == "ctxtrio":
                yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "ctxtrio")


def _violations(package_dir: Path = PACKAGE) -> list[str]:
    found: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        source = _component(".".join(parts))
        assert source in ALLOWED, f"{path}: component {source!r} has no row in ALLOWED"
        for target, line in _imports(path, package_dir):
            component = _component(target)
            if component != source and component not in BASE and component not in ALLOWED[source]:
                found.append(f"{path.relative_to(package_dir.parent)}:{line}: {source} imports {target}")
    return found


def _module_name(path: Path, package_dir: Path) -> str:
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _cycles(package_dir: Path = PACKAGE) -> list[list[str]]:
    """The import cycles among ctxtrio's modules: strongly connected groups of two or more (Tarjan, iterative)."""
    imports = {
        _module_name(path, package_dir): [target for target, _ in _imports(path, package_dir)]
        for path in sorted(package_dir.rglob("*.py"))
    }

    def module(target: str) -> str | None:  # ``from .x import name`` names a module or something inside one
        while target not in imports and "." in target:
            target = target.rsplit(".", 1)[0]
        return target if target in imports else None

    graph = {
        name: sorted({hit for target in targets if (hit := module(target)) is not None and hit != name})
        for name, targets in imports.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            step = next((edge for edge in edges if edge not in index or edge in stack), None)
            if step is not None and step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                work.append((step, iter(graph[step])))
            elif step is not None:
                low[node] = min(low[node], index[step])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(group) > 1:
                        found.append(sorted(group))
    return sorted(found)


def test_imports_flow_downward_only() -> None:
    """No module imports a component above it; transport and tools are wired only by _app."""
    assert _violations() == []


def test_transport_and_tools_do_not_know_each_other() -> None:
    """The rule that matters most is stated outright, so no edit of ALLOWED can drop it silently."""
    assert "tools" not in ALLOWED["transport"] and "transport" not in ALLOWED["tools"]
    assert all("_app" not in allowed for name, allowed in ALLOWED.items() if name not in ("_cli", "__init__"))
    assert ALLOWED["text"] == set() and ALLOWED["_sdk"] == set()


def test_no_module_imports_itself_around_a_loop() -> None:
    """No import cycle anywhere in ctxtrio/, however long, TYPE_CHECKING imports included."""
    assert _cycles() == []


def test_the_cycle_check_sees_a_loop_of_three(tmp_path: Path) -> None:
    """a -> b -> c -> a is one cycle, reported once with its three modules, and d beside it is not in it."""
    package = tmp_path / "ctxtrio"
    (package / "text").mkdir(parents=True)
    (package / "text" / "a.py").write_text("from . import b\n", encoding="utf-8")
    (package / "text" / "b.py").write_text("from .c import thing\n", encoding="utf-8")
    (package / "text" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n", encoding="utf-8"
    )
    (package / "text" / "d.py").write_text("from . import a\n", encoding="utf-8")
    assert _cycles(package) == [["ctxtrio.text.a", "ctxtrio.text.b", "ctxtrio.text.c"]]


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    """A transport module importing the tools, relatively and inside a function, is reported."""
    bad = tmp_path / "ctxtrio" / "transport" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f() -> None:\n    from ..tools import table\n", encoding="utf-8")
    assert _violations(tmp_path / "ctxtrio") == ["ctxtrio/transport/bad.py:2: transport imports ctxtrio.tools"]


#: What only the store's handle may use: the journal readers and writer, the index itself.
STORE_INSIDES = {
    "read_journal",
    "read_blocks",
    "parse_lines",
    "JournalAppender",
    "SearchIndex",
    "run_store_writer",
    "process_batch",
    "read_lines",
}


def test_domains_reach_the_store_only_through_its_handle() -> None:
    """memory/ and docs/ import no journal reader, appender or index class: they hold a StoreHandle."""
    found: list[str] = []
    for domain in ("memory", "docs"):
        for path in sorted((PACKAGE / domain).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] in (
                    "journal",
                    "reading",
                    "index",
                    "writer",
                    "batch",
                ):
                    found += [f"{path.name}: {alias.name}" for alias in node.names if alias.name in STORE_INSIDES]
    assert found == []


#: What cli/ may take from the two services' packages: the package face, the results, and the
#: helpers that read a file as the document service does (None: any name of that module).
#: Never the state behind a service (repository, catalog, journals): the CLI asks the service.
CLI_FROM_SERVICES: dict[str, set[str] | None] = {
    "ctxtrio.docs": None,
    "ctxtrio.docs.model": None,
    "ctxtrio.docs.sandbox": None,
    "ctxtrio.docs.arguments": {"FileRead", "read_file"},
    "ctxtrio.memory": None,
    "ctxtrio.memory.model": None,
}


def _cli_reaches_below_services(package_dir: Path = PACKAGE) -> list[str]:
    """Each name cli/ imports from docs/ or memory/ that CLI_FROM_SERVICES does not allow (submodules by their own name)."""
    found: list[str] = []
    for path in sorted((package_dir / "cli").rglob("*.py")):
        base = ".".join(path.relative_to(package_dir.parent).parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                module = ".".join([*parts, node.module] if node.module else parts)
            else:
                module = node.module or ""
            if module.split(".")[1:2] not in (["docs"], ["memory"]):
                continue
            for alias in node.names:
                target, name = module, alias.name
                inner = package_dir.parent.joinpath(*module.split("."), name)
                if inner.with_suffix(".py").exists() or inner.is_dir():
                    target, name = f"{module}.{name}", "*"  # a submodule, named by itself
                allowed = CLI_FROM_SERVICES.get(target, set())
                if allowed is not None and name not in allowed:
                    found.append(f"{path.relative_to(package_dir.parent)}:{node.lineno}: {target}.{name}")
    return found


def test_the_cli_reads_documents_and_sessions_through_their_services() -> None:
    """cli/ imports from docs/ and memory/ only their faces, results and file-reading helpers, never their insides."""
    assert _cli_reaches_below_services() == []


def test_the_cli_check_sees_a_reach_below_the_service(tmp_path: Path) -> None:
    """A subcommand importing the document repository, as a name or as a submodule, is reported both ways."""
    package = tmp_path / "ctxtrio"
    (package / "docs").mkdir(parents=True)
    (package / "docs" / "repository.py").write_text("CATALOG_NAME = 'catalog.jsonl'\n", encoding="utf-8")
    (package / "cli").mkdir()
    (package / "cli" / "bad.py").write_text(
        "from ..docs.repository import CATALOG_NAME\nfrom ..docs import repository\nfrom ..docs.model import X\n",
        encoding="utf-8",
    )
    assert _cli_reaches_below_services(package) == [
        "ctxtrio/cli/bad.py:1: ctxtrio.docs.repository.CATALOG_NAME",
        "ctxtrio/cli/bad.py:2: ctxtrio.docs.repository.*",
    ]
