"""Virtual time that holds still while a worker thread runs (for tests on a loaded machine).

trio's ``MockClock`` with an ``autojump_threshold`` jumps to the next deadline once every
task has been blocked for that long in real time. A task waiting for
``trio.to_thread.run_sync`` counts as blocked, so on a busy 2-core machine a worker thread
that needs more than the threshold (an SQLite write, a slice of text) lets virtual time
run past deadlines the test never meant to reach. A held clock jumps only when no
``trio.to_thread`` thread is running (``trio.testing.active_thread_count()``, trio ≥ 0.27:
"the number of threads that are currently running a task"); otherwise the run loop waits
another threshold and asks again. Abandoned threads (``abandon_on_cancel``) stop counting
when they are abandoned, so a stuck stdin reader does not hold time forever.
"""

from __future__ import annotations

import trio.testing

__all__ = ["held_clock"]


def held_clock(autojump_threshold: float) -> trio.testing.MockClock:
    """A ``MockClock`` whose autojump waits for worker threads to finish.

    ``MockClock`` is final, so the one method the run loop calls on an idle autojump
    (``runner.clock._autojump()`` in trio/_core/_run.py) is replaced on the instance.
    """
    clock = trio.testing.MockClock(autojump_threshold=autojump_threshold)
    jump = clock._autojump

    def autojump_unless_a_thread_runs() -> None:
        if trio.testing.active_thread_count() == 0:
            jump()

    clock._autojump = autojump_unless_a_thread_runs  # type: ignore[method-assign]
    return clock
