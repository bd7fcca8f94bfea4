"""Shared fixtures for the document tests: the text fixtures and an open instance's wiring."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ctxtrio._wiring import Wiring

FIXTURES = Path(__file__).resolve().parents[1] / "text" / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An ingest root holding copies of the text fixtures."""
    path = tmp_path / "root"
    path.mkdir()
    for fixture in FIXTURES.iterdir():
        (path / fixture.name).write_bytes(fixture.read_bytes())
    return path


@asynccontextmanager
async def opened(tmp_path: Path, root: Path | None = None, **changes: object) -> AsyncIterator[Wiring]:
    """The wiring of an instance on ``tmp_path/data`` with no LLM and no audit lines."""
    config = Config(
        data_dir=tmp_path / "data",
        llm_enabled=False,
        audit=False,
        ingest_roots=(root,) if root is not None else (),
    ).replace(**changes)
    async with open_wiring(config) as ctx:
        yield ctx
