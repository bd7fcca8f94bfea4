"""Settings learned at run time: the default budget follows the loaded model's context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio._config import Config
from ctxtrio._live import Live

if TYPE_CHECKING:
    from pathlib import Path


def test_budget_becomes_half_the_detected_context(tmp_path: Path) -> None:
    """Without --budget, a detected 8192-token context makes the default budget 4096."""
    live = Live.from_config(Config(data_dir=tmp_path))
    assert live.budget_tokens == 4000 and "default" in live.budget_source
    live.set_context_length(8192, explicit_budget=False)
    assert live.budget_tokens == 4096
    assert live.budget_source == "half of the loaded model's 8192-token context"


def test_explicit_budget_wins_over_detection(tmp_path: Path) -> None:
    """--budget stays in force whatever context the model reports."""
    live = Live.from_config(Config(data_dir=tmp_path, budget_tokens=3000))
    live.set_context_length(32768, explicit_budget=True)
    assert live.budget_tokens == 3000 and live.context_length == 32768
    assert "--budget" in live.budget_source
