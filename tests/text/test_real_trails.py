"""Heading and definition trails of real files: reST, setext markdown and a Python module.

The reST files are the stdlib's ``email/architecture.rst`` and CMake's ``cmake-qt.7.rst``
(Debian's cmake-data), the setext markdown file libffi's README (Debian's libffi-dev),
copied into the fixtures (see ``fixtures/NOTICE.txt``); the Python modules are read from
the installed stdlib, and checked against the definitions :mod:`ast` finds. git's AsciiDoc
manual (GPL-2, so not copied) is read from Debian's git-doc where it is installed.
"""

from __future__ import annotations

import ast
import json.decoder
import json.scanner
from pathlib import Path

import pytest

from ctxtrio.text.chunking import Chunk, chunk_document
from ctxtrio.text.kinds import Kind, kind_for
from ctxtrio.text.parts import iter_parts
from ctxtrio.text.tokens import TokenModel

FIXTURES = Path(__file__).parent / "fixtures"
MODEL = TokenModel.flat()


def chunked(path: Path, size: int, overlap: int = 0) -> tuple[str, list[Chunk]]:
    text = path.read_text(encoding="utf-8")
    return text, chunk_document(
        text, chunk_tokens=size, overlap_tokens=overlap, model=MODEL, kind=kind_for(text, path.name)
    )


def test_rst_architecture_trails() -> None:
    """email/architecture.rst: every chunk sits under the document title and its sections."""
    _, found = chunked(FIXTURES / "email_architecture.rst", 300, 30)
    title = ":mod:`email` Package Architecture"
    assert all(chunk.trail[:1] == (title,) for chunk in found)
    sections = {chunk.trail[1] for chunk in found if len(chunk.trail) > 1}
    assert sections == {"Overview", "The Model", "Message Lifecycle", "Header Policy Control During Lifecycle",
                        "Handling Binary Data", "Backward Compatibility", "New Algorithm"}  # fmt: skip


def test_rst_levels_by_first_appearance_with_overline() -> None:
    """cmake-qt.7.rst: the overlined title, then = sections, then ^ subsections."""
    text, found = chunked(FIXTURES / "cmake-qt.7.rst", 250)
    trails = {chunk.trail for chunk in found}
    assert ("cmake-qt(7)", "Qt Build Tools", "AUTOMOC") in trails
    assert ("cmake-qt(7)", "Qt Build Tools", "AUTORCC") in trails
    assert ("cmake-qt(7)", "qtmain.lib on Windows") in trails
    automoc = next(chunk for chunk in found if chunk.trail[-1:] == ("AUTOMOC",))
    assert text.rfind("AUTOMOC\n^^^^^^^", 0, automoc.start + 20) >= 0


def test_rst_api_reference_trails() -> None:
    """The Python docs' json.rst: API entries sit under their section, methods under their class."""
    _, found = chunked(FIXTURES / "python_json.rst.txt", 300)
    trails = {chunk.trail[1:] for chunk in found}
    assert ("Basic Usage", "function dumps") in trails
    assert ("Encoders and Decoders", "class JSONEncoder", "method default") in trails
    assert ("Exceptions", "exception JSONDecodeError", "attribute msg") in trails
    assert all(chunk.trail[0] == ":mod:`json` --- JSON encoder and decoder" for chunk in found)


def test_rst_c_api_trails_name_the_declared_name() -> None:
    """The Python docs' c-api/list.rst: a C entry's trail names what it declares, not its return type."""
    _, found = chunked(FIXTURES / "python_capi_list.rst.txt", 60)
    entries = {chunk.trail[-1] for chunk in found if len(chunk.trail) > 1}
    assert {"var PyList_Type", "function PyList_Check", "function PyList_New", "function PyList_GetItem"} <= entries
    assert not entries & {"function int", "function PyObject*", "function Py_ssize_t", "var PyTypeObject"}


def test_setext_markdown_trails() -> None:
    """libffi's README: its === headings become one-level trails; text before them has none."""
    text, found = chunked(FIXTURES / "libffi_README.md", 300)
    assert found[0].trail == ()
    assert {chunk.trail for chunk in found} == {
        (),
        ("What is libffi?",),
        ("Supported Platforms",),
        ("Installing libffi",),
        ("History",),
        ("Authors & Credits",),
    }
    history = next(chunk for chunk in found if chunk.trail == ("History",))
    assert text.rfind("History\n=======", 0, history.start + 1) >= 0


def ast_trail(tree: ast.Module, line: int) -> tuple[str, ...]:
    """The definitions enclosing ``line``, outermost first, as ``def name``/``class name``."""
    enclosing: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
            end = node.end_lineno or node.lineno
            if first <= line <= end:
                keyword = {ast.ClassDef: "class", ast.AsyncFunctionDef: "async def"}.get(type(node), "def")
                enclosing.append((first, f"{keyword} {node.name}"))
    return tuple(name for _, name in sorted(enclosing))


@pytest.mark.parametrize("module", [json.decoder, json.scanner])
@pytest.mark.parametrize("size", [120, 300, 800])
def test_python_trails_match_ast(module: object, size: int) -> None:
    """Each chunk's trail is the definitions enclosing its first code line, as ast finds them."""
    path = Path(str(getattr(module, "__file__", "")))
    text, found = chunked(path, size)
    tree = ast.parse(text)
    lines = text.split("\n")
    for chunk in found:
        line = text.count("\n", 0, chunk.start) + 1
        while not lines[line - 1].strip() or lines[line - 1].lstrip().startswith("#"):
            line += 1  # a comment right above a definition belongs to it
        assert chunk.trail == ast_trail(tree, line), (path.name, line)


def test_decoder_definitions_and_no_comment_trails() -> None:
    """json/decoder.py: definitions start chunks; the `# Use speedup` comment is no heading."""
    _, found = chunked(Path(json.decoder.__file__), 500)
    trails = {chunk.trail for chunk in found}
    assert ("def py_scanstring",) in trails
    assert ("class JSONDecoder", "def raw_decode") in trails
    assert all(title.startswith(("def ", "class ")) for trail in trails for title in trail)
    assert any(chunk.trail == ("def py_scanstring",) and "def py_scanstring(" in chunk.text for chunk in found)


GIT_DOC = Path("/usr/share/doc/git-doc")
needs_git_doc = pytest.mark.skipif(not (GIT_DOC / "git-push.txt").is_file(), reason="apt-get install git-doc")


def git_trails(name: str) -> list[tuple[str, ...]]:
    """The trails of the parts of one of git-doc's AsciiDoc sources, read as the kind sniffed."""
    text = (GIT_DOC / name).read_text(encoding="utf-8")
    kind = kind_for(text, name)
    assert kind is Kind.ASCIIDOC, name
    return [trail for _, _, trail, _ in iter_parts(text, kind)]


@needs_git_doc
@pytest.mark.parametrize(
    ("name", "trail"),
    [
        ("git-bisect.txt", ("git-bisect(1)", "DESCRIPTION", "Bisect skip")),
        ("git-push.txt", ("git-push(1)", "OPTIONS", "--[no-]force-with-lease, --force-with-lease=<refname>, "
                          "--force-with-lease=<refname>:<expect>")),
        ("gitattributes.txt", ("gitattributes(5)", "EFFECTS", "Generating diff text", "Marking files as binary")),
        ("user-manual.txt", ("Git User Manual", "Developing with Git", "Ensuring reliability",
                             "Recovering lost changes", "Reflogs")),
        ("rev-list-options.txt", ("Commit Ordering", "--reverse")),
        ("gitfaq.txt", ("gitfaq(7)", "Common Issues", "How do I ignore changes to a tracked file?")),
    ],
)  # fmt: skip
def test_git_manual_trails(name: str, trail: tuple[str, ...]) -> None:
    """git's manual: underlined and = titles, option and FAQ entries make the trails; no listing line does."""
    trails = git_trails(name)
    assert trail in trails
    assert not any(title.startswith("$ ") or "[[" in title for found in trails for title in found)
