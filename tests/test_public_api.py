"""The library face, as a user imports it: names, types (checked by mypy), behaviour."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import trio
from typing_extensions import assert_type

import ctxtrio
from ctxtrio import _config as ctxtrio_config

ROOT = Path(__file__).resolve().parents[1]


async def test_library_round_trip(tmp_path: Path) -> None:
    """The README's library example runs and its results have the advertised types."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        assert_type(ctx, ctxtrio.Context)
        appended = await ctx.sessions.append("refactor-auth", "Decision: keep cookies behind a flag", pinned=True)
        assert_type(appended, ctxtrio.Appended)
        assert_type(appended.entry, ctxtrio.Entry)
        recalled = await ctx.sessions.recall("refactor-auth", "cookie flag decision", budget_tokens=800)
        assert_type(recalled, ctxtrio.RecallResult)
        assert "keep cookies" in recalled.text
        status = await ctx.sessions.status("refactor-auth")
        assert_type(status, ctxtrio.SessionStatus)
        sessions = await ctx.sessions.list_sessions()
        assert_type(sessions, list[ctxtrio.SessionInfo])

        log_text = "\n".join(f"line {n}: ok" for n in range(2000)) + "\nFATAL OutOfMemoryError in worker 7\n"
        ingested = await ctx.documents.ingest(text=log_text, title="build log")
        assert_type(ingested, ctxtrio.IngestResult)
        assert_type(ingested.doc, ctxtrio.DocumentInfo)
        found = await ctx.documents.search("OutOfMemoryError", doc_id=ingested.doc.doc_id)
        assert_type(found, ctxtrio.SearchResult)
        assert found.hits and "OutOfMemoryError" in found.hits[0].text
        assert_type(found.hits[0], ctxtrio.SearchHit)
        window = await ctx.documents.window(ingested.doc.doc_id, start=0, end=0)
        assert_type(window, ctxtrio.Window)
        summary = await ctx.documents.summarize(ingested.doc.doc_id, target_tokens=100)
        assert_type(summary, ctxtrio.DocSummary)
        outline = await ctx.documents.outline(ingested.doc.doc_id)
        assert_type(outline, ctxtrio.Outline)
        docs = await ctx.documents.list_documents()
        assert_type(docs, list[ctxtrio.DocumentInfo])


async def test_every_returned_type_is_exported(tmp_path: Path) -> None:
    """The results the README's example does not reach (compact, open, update, pages, prune, import, contents, checks) have exported types."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        opened = await ctx.sessions.open("s", title="types")
        assert_type(opened, ctxtrio.OpenResult)
        assert_type(opened.renamed_from, str | None)
        appended = await ctx.sessions.append("s", "Decision: typed results", pinned=True)
        assert_type(appended.status, ctxtrio.SessionStatus)
        updated = await ctx.sessions.update("s", appended.entry.id, pinned=False)
        assert_type(updated, ctxtrio.UpdateResult)
        assert_type(updated.folded_into, str | None)
        assert_type(updated.still_folded, tuple[str, ...])
        await ctx.sessions.append("s", "Decision: name every type")
        compacted = await ctx.sessions.compact("s", keep_recent=0, dry_run=True)
        assert_type(compacted, ctxtrio.CompactResult)
        page = await ctx.sessions.page_sessions()
        assert_type(page, ctxtrio.SessionPage)
        entries = await ctx.sessions.export("s")
        assert_type(entries, list[ctxtrio.Entry])
        records = await ctx.sessions.records("s")
        assert_type(records, list[ctxtrio.Record])
        imported = await ctx.sessions.import_session("copy", records)
        assert_type(imported, ctxtrio.ImportResult)
        pruned = await ctx.sessions.prune(0.0, dry_run=True)
        assert_type(pruned, list[ctxtrio.SessionPrune])
        deleted = await ctx.sessions.delete_session("copy")
        assert_type(deleted, ctxtrio.SessionInfo)
        assert_type(await ctx.sessions.restore_session("copy"), ctxtrio.SessionInfo)
        assert_type(await ctx.sessions.contents("copy"), ctxtrio.SessionContents)
        assert_type(await ctx.sessions.check_journals(), ctxtrio.JournalCheck)
        assert_type(await ctx.sessions.check_vectors("model", None), ctxtrio.EntryVectorCheck)
        ingested = await ctx.documents.ingest(text="# Title\n\nSome words to read back.\n", title="t")
        doc_id = ingested.doc.doc_id
        assert_type(await ctx.documents.get(doc_id), ctxtrio.DocumentInfo)
        read = await ctx.documents.read(doc_id, 0, 0)
        assert_type(read.chunks[0], ctxtrio.WindowChunk)
        outline = await ctx.documents.outline(doc_id)
        assert_type(outline.entries[0], ctxtrio.OutlineEntry)
        assert_type(await ctx.documents.committed_documents(), list[ctxtrio.DocumentInfo])
        assert_type(await ctx.documents.check_journals(), ctxtrio.DocumentCheck)
        assert_type(await ctx.documents.check_index(), ctxtrio.IndexCheck)
        assert_type(await ctx.documents.rebuild_index(), ctxtrio.IndexCheck)
        assert_type(await ctx.documents.forget(doc_id), ctxtrio.DocumentInfo)
    assert type(page).__name__ in ctxtrio.__all__ and type(imported).__name__ in ctxtrio.__all__
    assert all(type(prune).__name__ in ctxtrio.__all__ for prune in pruned)


async def test_context_is_config_data_and_the_two_services(tmp_path: Path) -> None:
    """Context holds config, the data dir and the two services, each of an exported type; the wiring behind it is internal."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        assert_type(ctx.config, ctxtrio.Config)
        assert_type(ctx.data, ctxtrio.DataDir)
        assert_type(ctx.sessions, ctxtrio.SessionService)
        assert_type(ctx.documents, ctxtrio.DocumentService)
        assert ctx.data.root == tmp_path.absolute()
    fields = dataclasses.fields(ctxtrio.Context)
    assert [field.name for field in fields] == ["config", "data", "sessions", "documents"]
    assert {str(field.type) for field in fields} <= set(ctxtrio.__all__)
    assert "Wiring" not in ctxtrio.__all__ and not hasattr(ctx, "store") and not hasattr(ctx, "llm")
    assert not hasattr(ctx.documents, "repository")  # the documents' internal state is not on the public face


def test_services_return_only_exported_types() -> None:
    """Every public method of the two services names, in its return annotation, only exported or built-in types."""
    plain = {"None", "list", "dict", "set", "frozenset", "str", "int", "float", "bool", "tuple", "Sequence", "Mapping"}
    for service in (ctxtrio.SessionService, ctxtrio.DocumentService):
        for name, method in inspect.getmembers(service, inspect.isfunction):
            if name.startswith("_"):
                continue
            returned = inspect.get_annotations(method)["return"]
            names = {node.id for node in ast.walk(ast.parse(returned, mode="eval")) if isinstance(node, ast.Name)}
            assert names - plain <= set(ctxtrio.__all__), (service.__name__, name, returned)


def test_a_library_user_can_name_every_type_the_services_show() -> None:
    """Every public method and property of the services and Context names, in its parameters and return, only
    exported or built-in types: compact's wait took a ctxtrio.llm._outcome.Pending, SessionService.store was a
    private SessionStore and ingest_read took a private FileRead, which a program under mypy --strict cannot name
    (user24's sitting)."""
    plain = {"None", "list", "dict", "set", "frozenset", "str", "int", "float", "bool", "tuple", "object"}
    plain |= {"Sequence", "Mapping", "Callable", "Awaitable", "Path", "PathLike"}
    for owner in (ctxtrio.SessionService, ctxtrio.DocumentService, ctxtrio.Context, ctxtrio.Pending):
        for name, member in inspect.getmembers(owner):
            function = member.fget if isinstance(member, property) else member
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            for argument, annotation in inspect.get_annotations(function).items():
                tree = ast.parse(annotation, mode="eval")
                names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
                assert names - plain <= set(ctxtrio.__all__), (owner.__name__, name, argument, annotation)


async def test_a_typed_wait_is_written_with_public_names(tmp_path: Path) -> None:
    """A caller's own wait for LLM work (a deadline around Pending.wait) is typed with ctxtrio's names alone."""

    async def within_a_second(pending: ctxtrio.Pending) -> None:
        with trio.move_on_after(1):
            await pending.wait()

    wait: ctxtrio.Wait = within_a_second
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        text = "\n\n".join(f"Paragraph {n} says the build of part {n} failed." for n in range(400))
        doc = (await ctx.documents.ingest(text=text, title="log")).doc
        outline = await ctx.documents.outline(doc.doc_id, wait=wait)
        assert_type(outline, ctxtrio.Outline)
        await ctx.sessions.append("s", "Decision: name every type")
        compacted = await ctx.sessions.compact("s", keep_recent=0, dry_run=True, wait=wait)
        assert_type(compacted, ctxtrio.CompactResult)


def test_type_checkers_see_the_table() -> None:
    """The imports under TYPE_CHECKING in ctxtrio/__init__.py re-export exactly _EXPORTS, module by module."""
    tree = ast.parse((ROOT / "ctxtrio" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen: dict[str, list[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        assert all(alias.asname == alias.name for alias in node.names), ast.unparse(node)  # ``X as X``: re-exported
        seen.setdefault("." * node.level + (node.module or ""), []).extend(alias.name for alias in node.names)
    assert {module: tuple(sorted(names)) for module, names in seen.items()} == {
        module: tuple(sorted(names)) for module, names in ctxtrio._EXPORTS.items()
    }
    assert ctxtrio.__all__ == sorted([*(name for names in ctxtrio._EXPORTS.values() for name in names), "__version__"])


def test_every_exported_name_resolves() -> None:
    """Each name in ctxtrio.__all__ is importable from the package."""
    for name in ctxtrio.__all__:
        assert getattr(ctxtrio, name) is not None, name


def test_errors_share_one_root() -> None:
    """Every error class derives from CtxError."""
    for name in ctxtrio.__all__:
        value = getattr(ctxtrio, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, ctxtrio.CtxError), name


def test_config_takes_str_and_pathlike_paths(tmp_path: Path) -> None:
    """Config accepts str and PathLike paths (mypy checks the calls) and stores them as Path."""
    config = ctxtrio.Config(data_dir=str(tmp_path), ingest_roots=[str(tmp_path), tmp_path / "b"])
    assert_type(config.data_dir, Path)
    assert_type(config.ingest_roots, tuple[Path, ...])
    assert config.data_dir == tmp_path and isinstance(config.data_dir, Path)
    assert config.ingest_roots == (tmp_path, tmp_path / "b")
    assert ctxtrio.Config(ingest_roots=str(tmp_path)).ingest_roots == (tmp_path,)  # one root, not its letters
    assert ctxtrio.Config(data_dir=os.fspath(tmp_path)).validated().data_dir == tmp_path


def test_config_repr_leaves_out_the_token_and_the_api_key(tmp_path: Path) -> None:
    """repr(Config) (a log line, a traceback's locals, a failed assertion) shows neither secret, and the rest."""
    token, key = "a-token-of-sixteen-plus", "sk-not-for-logs"
    config = ctxtrio.Config(data_dir=tmp_path, http_token=token, llm_api_key=key)
    shown = repr(config)
    assert token not in shown and key not in shown and "http_token" not in shown and "llm_api_key" not in shown
    assert f"data_dir={tmp_path!r}" in shown and "budget_tokens=None" in shown
    assert config.http_token == token and config.llm_api_key == key


async def test_open_context_refuses_a_config_naming_its_fields_not_flags(tmp_path: Path) -> None:
    """A program's Config out of range is refused naming the field it set (budget_tokens), not the CLI's --budget."""
    for changes, message in (
        ({"budget_tokens": 10}, "budget_tokens must be between 50 and 100000, got 10"),
        ({"llm_timeout_s": -0.5}, "llm_timeout_s must be > 0 s, got -0.5"),  # (seconds: --llm-timeout is in ms)
        ({"transport": "ws"}, "transport must be stdio or http, got 'ws'"),  # (serve() ran stdio for it)
        ({"chunk_overlap_tokens": 5000}, "chunk_overlap_tokens (5000) must be smaller than chunk_tokens (800)"),
        ({"ingest_roots": (tmp_path / "missing",)}, f"ingest_roots {tmp_path / 'missing'} is not a directory"),
    ):
        with pytest.raises(ctxtrio.ConfigError) as refused:
            async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, **changes)):
                pass
        assert str(refused.value) == message


def test_config_init_stub_matches_the_fields() -> None:
    """The typed __init__ that mypy sees names every field, in order, with its default."""
    source = Path(ctxtrio_config.__file__).read_text(encoding="utf-8")
    stub = next(
        node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    )
    names = [arg.arg for arg in stub.args.args[1:]]
    assert names == [f.name for f in dataclasses.fields(ctxtrio.Config)]
    for arg, default, f in zip(stub.args.args[1:], stub.args.defaults, dataclasses.fields(ctxtrio.Config)):
        if isinstance(default, ast.Constant) and default.value is not Ellipsis:
            assert default.value == f.default, arg.arg
        elif isinstance(default, ast.Tuple):
            assert f.default == (), arg.arg


async def test_append_role_is_the_role_literal(tmp_path: Path) -> None:
    """append's role is typed Role (a wrong literal is a type error) and checked at run time too."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        role: ctxtrio.Role = "decision"
        appended = await ctx.sessions.append("s", "a decision", role=role)
        assert appended.entry.role == "decision"
        with pytest.raises(ctxtrio.InputError, match="role 'boss' is unknown"):
            await ctx.sessions.append("s", "text", role="boss")  # type: ignore[arg-type]  # the point of the test


async def test_library_errors_name_no_tools(tmp_path: Path) -> None:
    """A library error says what is wrong in library terms and names the next step as a hint."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        with pytest.raises(ctxtrio.NotFoundError) as missing_doc:
            await ctx.documents.outline("nope")
        with pytest.raises(ctxtrio.NotFoundError) as missing_session:
            await ctx.sessions.status("nope")
        with pytest.raises(ctxtrio.InputError) as too_long:
            await ctx.sessions.append("s", "x" * 1_000_000)
    for caught, hint in (
        (missing_doc, "list_documents"),
        (missing_session, "list_sessions"),
        (too_long, "store_as_document"),
    ):
        assert_type(caught.value.hint, ctxtrio.Hint | None)
        assert caught.value.hint == hint
        assert re.search(r"\b(doc|context)_[a-z]+", str(caught.value)) is None, str(caught.value)


def test_readme_library_example_is_the_tested_one() -> None:
    """The README's library example is tests/readme_library.py, character for character."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## As a library") :]
    block = section[
        section.index("```python\n") + len("```python\n") : section.index("```\n", section.index("```python"))
    ]
    example = (ROOT / "tests" / "readme_library.py").read_text(encoding="utf-8")
    assert example.split("\n", 2)[2].lstrip("\n") == block


@pytest.mark.parametrize(
    "method",
    [
        ctxtrio.SessionService.append,
        ctxtrio.SessionService.compact,
        ctxtrio.SessionService.update,
        ctxtrio.SessionService.import_session,
        ctxtrio.SessionService.prune,
        ctxtrio.DocumentService.ingest,
        ctxtrio.DocumentService.forget,
    ],
)
def test_the_writes_a_caller_may_cancel_say_what_a_cancel_leaves(method: object) -> None:
    """The docstring an editor shows says what a cancel leaves: a compaction cancelled 0.05 s in landed after
    the caller saw the cancel (user24's sitting, 3,000 entries), which only memory/service's module docstring said."""
    assert "Cancelled" in (inspect.getdoc(method) or "")


def test_readme_says_how_to_install_the_library_for_mypy() -> None:
    """The library section names an install mypy can see: after the quick start's plain ``pip install -e .``
    (setuptools' import hook) ``mypy --strict`` of a program outside the checkout stops at ``import ctxtrio``
    with import-not-found; ``pip install PATH`` and ``editable_mode=strict`` (a link tree) both type-check
    (user24's sitting, a fresh venv each; this venv's own install is the hook, so it cannot be run here)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## As a library") : readme.index("```python", readme.index("## As a library"))]
    words = " ".join(section.split())
    assert "pip install /path/to/ctxtrio" in words
    assert "pip install -e /path/to/ctxtrio --config-settings editable_mode=strict" in words


def test_readme_library_example_runs(tmp_path: Path) -> None:
    """The README's library example runs as written and prints the recalled decision and the hit."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "readme_library.py")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Decision: keep cookies" in done.stdout
    assert "build log #" in done.stdout
    assert (tmp_path / "ctxtrio-state" / "sessions").is_dir()


def test_asyncio_gets_one_clear_error(tmp_path: Path) -> None:
    """Entered from asyncio, open_context raises EventLoopError saying ctxtrio runs on trio."""

    async def main() -> None:
        async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)):
            pass

    with pytest.raises(ctxtrio.EventLoopError, match=r"runs on trio, but this was called from asyncio") as caught:
        asyncio.run(main())
    assert isinstance(caught.value, RuntimeError)
    assert not (tmp_path / "sessions").exists()  # nothing was touched


def test_anyio_on_trio_is_welcome(tmp_path: Path) -> None:
    """Under anyio's trio backend the library opens and works."""

    async def main() -> str:
        async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
            return (await ctx.sessions.append("s", "via anyio")).entry.text

    assert anyio.run(main, backend="trio") == "via anyio"


async def test_a_file_is_ingested_from_a_path_object(tmp_path: Path) -> None:
    """documents.ingest takes file_path as a str or any os.PathLike, as Config takes its paths: a typed
    program passing a pathlib.Path was refused by mypy --strict (expected "str | None"), and untyped it failed
    deep in the sandbox with "TypeError: argument of type 'PosixPath' is not iterable" in an ExceptionGroup."""
    notes = tmp_path / "docs" / "notes.md"
    notes.parent.mkdir()
    notes.write_text("# Notes\n\nThe deploy runs at nine.\n", encoding="utf-8")
    config = ctxtrio.Config(data_dir=tmp_path / "state", llm_enabled=False, ingest_roots=[notes.parent])
    async with ctxtrio.open_context(config) as ctx:
        by_path = await ctx.documents.ingest(file_path=notes)
        assert_type(by_path, ctxtrio.IngestResult)
        assert by_path.doc.source == str(notes) and by_path.doc.chunks == 1
        again = await ctx.documents.ingest(file_path=str(notes))
        assert again.unchanged and again.doc.doc_id == by_path.doc.doc_id
