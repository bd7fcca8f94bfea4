"""Shared fixtures for the document tests: the text fixtures and an open instance's wiring."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from testkit.fake_embeddings import quick_embedders, whole_batches

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ctxtrio._wiring import Wiring

FIXTURES = Path(__file__).resolve().parents[1] / "text" / "fixtures"
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
#: Debian's python3.11-doc reST sources (tests over them skip without it).
PY_SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
STRESS = Path(__file__).resolve().parents[2] / "stress"


def normal(text: str) -> str:
    """``text`` with whitespace runs as one space, casefolded: is an answer inside a search's text?"""
    return " ".join(text.split()).casefold()


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


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The background embedder retries and polls quickly: the semantic recall tests (tests/docs/embedder.py) run in
    real time (the store's worker threads and a virtual clock race on a loaded machine). Asked for by
    ``pytestmark = pytest.mark.usefixtures("quick_retries")``."""
    quick_embedders(monkeypatch, poll_s=0.5, retry_max_s=0.2)


@pytest.fixture
def one_request_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch of the background embedder in one request (testkit's whole_batches), so a test stepping a held
    endpoint (tests/docs/embedder.py, ``step``) steps batches: with answers held, the test's own pace, a batch went
    in one request or in several."""
    whole_batches(monkeypatch)


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


@pytest.fixture(scope="module")
def pg_manual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PostgreSQL 15's manual as the retrieval bench reads it (stress/html_text.py): 1,167 pages of text."""
    if not (PG_HTML / "app-pgdump.html").is_file():
        pytest.skip("apt-get install postgresql-doc-15")
    sys.path.insert(0, str(STRESS))
    from html_text import convert_dir  # stress/ is no package: on the path only once the manual is here

    out = tmp_path_factory.mktemp("pg")
    convert_dir(PG_HTML, out)
    return out
