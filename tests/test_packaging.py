"""pyproject.toml declares its license the way current setuptools builds it (PEP 639), without deprecation."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_is_an_spdx_expression_with_its_file() -> None:
    """license is the SPDX string "MIT", license-files names LICENSE, and the build needs setuptools >= 77.0.3."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"] and (ROOT / "LICENSE").is_file()
    (requirement,) = project["build-system"]["requires"]
    assert requirement.startswith("setuptools>=77.0.3,")  # 77.0.3: the first to read PEP 639's fields
