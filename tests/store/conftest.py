"""Fixtures for the store tests."""

from __future__ import annotations

import pytest

from testkit.fake_embeddings import quick_embedders


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The background embedders retry and poll quickly: the refusal tests run in real time (the store's worker
    threads). Asked for by ``pytestmark = pytest.mark.usefixtures("quick_retries")``."""
    quick_embedders(monkeypatch, poll_s=0.2, retry_max_s=0.2)
