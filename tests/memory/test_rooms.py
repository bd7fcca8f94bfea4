"""memory/'s four rooms import each other in one direction: state, then sessions, then compaction and admin."""

from __future__ import annotations

from pathlib import Path

from tests.test_layering import PACKAGE, _imports

MEMORY = PACKAGE / "memory"
#: Room -> the rooms it may import (besides itself and memory's top-level value modules).
ROOMS: dict[str, set[str]] = {
    "state": set(),
    "sessions": {"state"},
    "compaction": {"state", "sessions"},
    "admin": {"state", "sessions"},
}
#: memory's top-level modules a room may import: the values, the text for the model, the status rule.
FACE = {"model", "render", "status", "arguments"}


def _room_violations(memory: Path = MEMORY) -> list[str]:
    found: list[str] = []
    for room, allowed in ROOMS.items():
        for path in sorted((memory / room).rglob("*.py")):
            for target, line in _imports(path, memory.parent):
                parts = target.split(".")
                if parts[:2] != ["ctxtrio", "memory"] or len(parts) < 3:
                    continue
                if parts[2] != room and parts[2] not in allowed and parts[2] not in FACE:
                    found.append(f"{path.relative_to(memory)}:{line}: {room} imports {target}")
    return found


def test_rooms_import_downward_only() -> None:
    """No room imports one after it (state knows no other room; compaction and admin not each other)."""
    assert _room_violations() == []


def test_the_room_check_sees_a_violation(tmp_path: Path) -> None:
    """A state module importing the sessions room, relatively, is reported."""
    memory = tmp_path / "ctxtrio" / "memory"
    for room in ROOMS:
        (memory / room).mkdir(parents=True)
    (memory / "state" / "bad.py").write_text("from ..sessions.store import SessionStore\n", encoding="utf-8")
    assert _room_violations(memory) == ["state/bad.py:1: state imports ctxtrio.memory.sessions.store"]


def test_every_room_has_its_tests() -> None:
    """Each room has a test folder of its own beside this module, with at least one test module."""
    here = Path(__file__).parent
    assert all(list((here / room).glob("test_*.py")) for room in ROOMS)
    assert sorted(path.name for path in MEMORY.iterdir() if (path / "__init__.py").exists()) == sorted(ROOMS)
