"""Every stress script imports the checkout it lives in, not the editable install's (stress/_tree.py)."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[1]
STRESS = ROOT / "stress"


def _first_line_importing(tree: ast.Module, wanted: tuple[str, ...]) -> int | None:
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(
            name.split(".")[0] in wanted
            for name in ([alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""])
        )
    ]
    return min(lines, default=None)


def test_each_stress_script_imports_its_tree_before_ctxtrio_or_testkit() -> None:
    """readme_examples, recall_worst, bench_text and five more imported /work/main's ctxtrio from any worktree.
    A script importing ctxtrio, testkit or another stress module (which may) imports _tree first."""
    ours = ("ctxtrio", "testkit", *(path.stem for path in STRESS.glob("*.py") if path.name != "_tree.py"))
    late = []
    for path in sorted(STRESS.glob("*.py")):
        if path.name == "_tree.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        first_tree, first_code = _first_line_importing(tree, ("_tree",)), _first_line_importing(tree, ours)
        if first_code is not None and (first_tree is None or first_code < first_tree):
            late.append(path.name)
    assert late == []


def test_a_script_run_from_elsewhere_imports_the_ctxtrio_beside_it(tmp_path: Path) -> None:
    """Run from another directory, without PYTHONPATH, a script's ctxtrio is this checkout's."""
    script = tmp_path / "probe.py"
    script.write_text("import _tree  # noqa: F401\nimport ctxtrio\nprint(ctxtrio.__file__)\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import runpy, sys; sys.path.insert(0, {str(STRESS)!r}); runpy.run_path({str(script)!r})",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == str(ROOT / "ctxtrio" / "__init__.py")


def test_a_script_given_another_tree_on_pythonpath_imports_that_trees_ctxtrio(tmp_path: Path) -> None:
    """same_chunks --against REV runs itself with PYTHONPATH=<exported tree>: that tree's ctxtrio is imported."""
    other = tmp_path / "other"
    (other / "ctxtrio").mkdir(parents=True)
    (other / "ctxtrio" / "__init__.py").write_text("", encoding="utf-8")
    script = tmp_path / "probe.py"
    script.write_text("import _tree  # noqa: F401\nimport ctxtrio\nprint(ctxtrio.__file__)\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join([str(other), str(STRESS)])},
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == str(other / "ctxtrio" / "__init__.py")


def test_same_chunks_chunks_a_file_as_the_kind_its_path_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """same_chunks sniffed each text alone, so a .rst.txt page that sniffs as markdown was never chunked as reST."""
    monkeypatch.syspath_prepend(str(STRESS))
    same_chunks = importlib.import_module("same_chunks")
    from ctxtrio.text.chunking import iter_chunks
    from ctxtrio.text.kinds import Kind, kind_for
    from ctxtrio.text.tokens import TokenModel

    text = "Intro\n~~~~~\n\nSome words.\n"
    assert kind_for(text, None, None) is Kind.MARKDOWN  # "~~~~~" is a fence there
    monkeypatch.setattr(same_chunks, "load", lambda corpus: [same_chunks.Doc("page.rst.txt", text)])
    ((_, _, kinds, chunkings),) = same_chunks.results(["docs"])
    as_rst = iter_chunks(text, chunk_tokens=800, overlap_tokens=80, model=TokenModel.cold(), kind=Kind.RST)
    assert kinds == "markdown/rst"
    assert [chunk[3] for chunk in chunkings[0]] == [chunk.trail for chunk in as_rst] == [("Intro",)]


async def test_same_store_reports_the_empty_folders_a_full_disk_leaves(tmp_path: Path) -> None:
    """same_store took one generation file from every docs/ folder and crashed (ValueError) on the empty
    ones a failed ingest leaves; it compares the catalog's current documents and counts the rest apart."""
    import ctxtrio

    root = tmp_path / "root"
    root.mkdir()
    for name in ("a.md", "b.md"):
        (root / name).write_text(f"# {name}\n\nSome words about {name}.\n", encoding="utf-8")
    for data in ("one", "two"):
        config = ctxtrio.Config(data_dir=tmp_path / data, llm_enabled=False, audit=False, ingest_roots=(root,))
        async with ctxtrio.open_context(config) as ctx:
            for name in ("a.md", "b.md"):
                await ctx.documents.ingest(file_path=str(root / name))
    (tmp_path / "two" / "docs" / "doc-left").mkdir()  # what a refused ingest on a full disk leaves
    command = [sys.executable, str(STRESS / "same_store.py"), str(tmp_path / "one"), str(tmp_path / "two")]
    done = await trio.run_process(command, capture_stdout=True, capture_stderr=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().splitlines() == [
        "2 / 2 documents; 0 differ",
        "after: 1 left under docs/ by no current document (1 empty folder), not compared: docs/doc-left/ (empty)",
    ]
