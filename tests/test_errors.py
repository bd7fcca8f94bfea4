"""Errors reach the library user as one CtxError, never wrapped in an exception group (issue 11: W3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

import ctxtrio
from ctxtrio._errors import NotFoundError, StoreError, leaves, lone_error, one_error
from ctxtrio._nursery import open_nursery
from ctxtrio._wiring import open_wiring

if TYPE_CHECKING:
    from pathlib import Path


async def test_open_context_raises_the_ctx_error_itself(tmp_path: Path) -> None:
    """A NotFoundError in the body of open_context comes out as NotFoundError, not ExceptionGroup(NotFoundError)."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    with pytest.raises(NotFoundError) as caught:
        async with ctxtrio.open_context(config) as ctx:
            await ctx.sessions.status("no-such-session")
    assert type(caught.value) is NotFoundError


async def test_open_context_raises_the_bodys_own_exception_itself(tmp_path: Path) -> None:
    """The caller's own KeyError raised inside open_context comes out as that KeyError, not in two groups."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    mine = KeyError("mine")
    with pytest.raises(KeyError) as caught:
        async with ctxtrio.open_context(config) as ctx:
            await ctx.sessions.append("s1", "a note before the error")
            raise mine
    assert caught.value is mine
    async with ctxtrio.open_context(config) as ctx:  # what the body stored before it raised is kept
        assert (await ctx.sessions.status("s1")).live_entries == 1


async def test_the_bodys_exception_keeps_its_own_context(tmp_path: Path) -> None:
    """A KeyError raised while handling a ValueError in the body keeps that ValueError as its context."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    with pytest.raises(KeyError) as caught:
        async with ctxtrio.open_context(config):
            try:
                raise ValueError("first")
            except ValueError:
                raise KeyError("while handling it")  # its implicit context is what is checked
    assert isinstance(caught.value.__context__, ValueError) and not caught.value.__suppress_context__


async def test_a_group_the_body_raises_comes_out_as_it_was_raised(tmp_path: Path) -> None:
    """The caller's own exception group (its own nursery's, say) comes out as itself, not inside two more groups:
    ``leaves`` looks past a group, so only its leaves were compared with what the body raised."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    mine = ExceptionGroup("the caller's own", [ValueError("first"), KeyError("second")])
    with pytest.raises(ExceptionGroup) as caught:
        async with ctxtrio.open_context(config):
            raise mine
    assert caught.value is mine


async def test_a_bodys_exception_beside_a_background_failure_stays_grouped(tmp_path: Path) -> None:
    """one_error unwraps only the body's exception alone: with another error beside it the group is kept."""
    mine = ValueError("mine")
    with pytest.raises(ExceptionGroup) as caught:
        with one_error([mine]):
            async with open_nursery() as nursery:
                nursery.start_soon(_raise, RuntimeError("background"))
                raise mine
    assert set(map(type, leaves(caught.value))) == {ValueError, RuntimeError}


async def _raise(error: Exception) -> None:
    raise error


async def test_nursery_reraises_a_lone_ctx_error_with_its_cause() -> None:
    """open_nursery turns a group of one CtxError (nested too) into that error, keeping its cause."""

    async def fail() -> None:
        try:
            raise OSError(28, "No space left on device")
        except OSError as exc:
            raise StoreError("cannot append: No space left on device") from exc

    with pytest.raises(StoreError) as caught:
        async with open_nursery() as nursery:
            nursery.start_soon(fail)
            await trio.sleep_forever()
    assert isinstance(caught.value.__cause__, OSError)


def test_leaves_flattens_nested_groups_in_order() -> None:
    """leaves: the exceptions of nested groups left to right; a lone exception is its own leaf."""
    a, b, c = StoreError("a"), ValueError("b"), NotFoundError("c")
    nested = BaseExceptionGroup("outer", [a, BaseExceptionGroup("inner", [b, c])])
    assert leaves(nested) == [a, b, c]
    assert leaves(a) == [a]


def test_groups_of_several_or_foreign_errors_are_left_alone() -> None:
    """Only a group whose one leaf is a CtxError is unwrapped; anything else propagates unchanged."""
    two = ExceptionGroup("two", [StoreError("a"), StoreError("b")])
    assert lone_error(two) is None
    assert lone_error(ExceptionGroup("bug", [ValueError("x")])) is None
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [NotFoundError("n")])])
    assert isinstance(lone_error(nested), NotFoundError)
    with pytest.raises(ExceptionGroup):
        with one_error():
            raise two


async def test_search_while_another_process_forgets_a_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """W3: a document forgotten by another process between the index lookup and the load drops out of
    the results; the search answers with the rest instead of failing."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as other:
        await other.documents.ingest(text="The kiwi is a bird.\n\nKiwi eggs are large.", doc_id="gone")
        await other.documents.ingest(text="A kiwi fruit is green.", doc_id="kept")
        async with open_wiring(config) as ctx:  # a second process on the same data dir
            real_search = ctx.store.search

            async def search_then_forget(*args: object, **kwargs: object) -> object:
                hits = await real_search(*args, **kwargs)  # type: ignore[arg-type]  # passed through as given
                await other.documents.forget("gone")
                return hits

            monkeypatch.setattr(ctx.store, "search", search_then_forget)
            result = await ctx.documents.search("kiwi")
            assert {hit.doc_id for hit in result.hits} == {"kept"}


def test_the_drawn_tree_names_every_error_class_of_the_package() -> None:
    """Each CtxError subclass defined anywhere in ctxtrio/ appears in _errors.py's drawing under its parent."""
    import importlib
    import pkgutil
    import re

    import ctxtrio
    from ctxtrio import _errors

    for module in pkgutil.walk_packages(ctxtrio.__path__, "ctxtrio."):
        if module.name.rsplit(".", 1)[-1] not in ("__main__", "_chunk_worker"):
            importlib.import_module(module.name)
    pending: list[type[BaseException]] = [_errors.CtxError]
    classes: list[type[BaseException]] = []
    while pending:
        cls = pending.pop()
        classes.append(cls)
        pending += [sub for sub in cls.__subclasses__() if sub.__module__.startswith("ctxtrio.")]
    drawing = (_errors.__doc__ or "").split("::", 1)[1].split("\n\n", 2)[1]
    lines = re.finditer(r"^[ │├└─]*(\w+Error)\b", drawing, re.M)
    depth = {line[1]: line.start(1) - line.start(0) for line in lines}  # the column a name starts at
    assert {cls.__name__ for cls in classes} <= depth.keys(), sorted({cls.__name__ for cls in classes} - depth.keys())
    for cls in classes[1:]:
        parent = cls.__mro__[1].__name__
        assert depth[cls.__name__] == depth[parent] + 4, (cls.__name__, parent)
