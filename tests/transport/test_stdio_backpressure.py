"""stdio backpressure: a client that stops reading answers makes the server stop reading requests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from testkit import unread

if TYPE_CHECKING:
    from pathlib import Path

OFFERED = 3000


def test_a_client_that_does_not_read_answers_is_not_read_from_past_a_bound(tmp_path: Path) -> None:
    """3,000 context_guide calls with stdout unread: the server stops taking requests after the
    unanswered limit plus the pipe and its read buffer (~1,200 here; before: all 3,000, every answer
    held in memory), and answers every request once the client reads."""
    process = unread.start(tmp_path / "data")
    assert process.stdin is not None and process.stdout is not None
    try:
        assert b'"init"' in unread.initialized(process, "t")
        payload = unread.guide_calls(OFFERED)
        sent = unread.write_until_stalled(process, payload, quiet_s=3.0, chunk=4096)
        taken = payload[:sent].count(b"\n")
        assert taken < OFFERED // 2, f"the server took {taken} of {OFFERED} requests while its answers went unread"
        answers = unread.finish(process, payload[sent:], timeout_s=120)
        assert len(answers) == OFFERED
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        if not process.stdin.closed:
            process.stdin.close()
