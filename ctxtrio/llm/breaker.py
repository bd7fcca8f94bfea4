"""A circuit breaker for the LLM endpoint: a pure state machine, no I/O, no trio.

One failure opens the breaker; while it is open every caller fails fast with
:class:`~ctxtrio._errors.LLMUnavailableError` and falls back at once (no 200 separate
timeouts for a 200-chunk document). When the cooldown has passed the breaker is
half-open and admits exactly one probe; everyone else still fails fast. A successful
probe closes the breaker and resets the cooldown; a failed probe re-opens it with the
next cooldown. Cooldowns grow deterministically, ``base_s`` doubling up to ``max_s``
(2, 4, 8, 16, 32, 60, 60, ... seconds by default), without jitter: one local server has
one client, there is no herd to spread.

Time comes from the injected ``clock`` (``trio.current_time`` in the client), so tests
drive it with a plain function or trio's ``MockClock``.

Usage, one call::

    ticket = breaker.admit()          # raises LLMUnavailableError while open
    try:
        result = await do_the_call()
    except LLMError:
        breaker.failed(ticket)
        raise
    else:
        breaker.succeeded(ticket)
    finally:
        breaker.release(ticket)       # a cancelled call gives its probe slot back

A ticket settles once; ``release`` after a verdict does nothing. A call that ends
without a verdict (cancelled by its caller's deadline) leaves the state as it was and,
if it was the probe, lets the next caller probe instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._errors import LLMUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Breaker", "BreakerState", "Ticket"]


class BreakerState(enum.StrEnum):
    """Where the breaker stands at a given moment."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half-open"


@dataclass(slots=True, eq=False)
class Ticket:
    """One admitted call; hand it back through ``succeeded``/``failed``/``release``."""

    probe: bool
    generation: int
    settled: bool = field(default=False)


class Breaker:
    """Closed → open on a failure → half-open after a growing cooldown → one probe."""

    def __init__(self, clock: Callable[[], float], *, base_s: float = 2.0, max_s: float = 60.0) -> None:
        if base_s <= 0 or max_s < base_s:
            raise ValueError(f"need 0 < base_s <= max_s, got {base_s}, {max_s}")
        self._clock = clock
        self._base_s = base_s
        self._max_s = max_s
        self._open = False
        self._open_until = 0.0
        self._next_cooldown_s = base_s
        self._probe_out = False
        # Bumped whenever the breaker opens or closes, so a verdict from a call
        # admitted under an earlier state cannot flip the current one.
        self._generation = 0

    @property
    def state(self) -> BreakerState:
        """CLOSED, OPEN (cooling down) or HALF_OPEN (cooldown over, probe allowed or out)."""
        if not self._open:
            return BreakerState.CLOSED
        if self._clock() < self._open_until:
            return BreakerState.OPEN
        return BreakerState.HALF_OPEN

    @property
    def open_until(self) -> float:
        """Clock time at which an open breaker half-opens (meaningless when closed)."""
        return self._open_until

    def check(self) -> None:
        """Raise LLMUnavailableError if a call would be refused right now; admit nothing.

        Callers use it to fail fast before they queue for the endpoint.
        """
        state = self.state
        if state is BreakerState.OPEN:
            raise self._open_error()
        if state is BreakerState.HALF_OPEN and self._probe_out:
            raise LLMUnavailableError("breaker half-open: a probe call is in flight")

    def admit(self) -> Ticket:
        """Admit one call or raise LLMUnavailableError; in half-open, only the first is the probe."""
        self.check()
        probe = self._open  # reaching here while open means the cooldown is over
        if probe:
            self._probe_out = True
        return Ticket(probe=probe, generation=self._generation)

    def succeeded(self, ticket: Ticket) -> None:
        """Record a usable answer; a probe's success closes the breaker and resets the cooldown."""
        if not self._settle(ticket):
            return
        if ticket.probe or not self._open:
            self._open = False
            self._probe_out = False
            self._next_cooldown_s = self._base_s
            if ticket.probe:
                self._generation += 1

    def failed(self, ticket: Ticket) -> None:
        """Record a failure: open (or re-open after a probe) with the next cooldown."""
        if not self._settle(ticket):
            return
        if self._open and not ticket.probe:
            return  # already open; a straggler admitted before it opened changes nothing
        cooldown = self._next_cooldown_s
        self._open = True
        self._open_until = self._clock() + cooldown
        self._next_cooldown_s = min(cooldown * 2.0, self._max_s)
        self._probe_out = False
        self._generation += 1

    def release(self, ticket: Ticket) -> None:
        """End a call without a verdict (cancelled): a probe slot goes back to the next caller."""
        if not self._settle(ticket):
            return
        if ticket.probe:
            self._probe_out = False

    def _settle(self, ticket: Ticket) -> bool:
        """Mark ``ticket`` settled; False if it was already or belongs to an older state."""
        if ticket.settled:
            return False
        ticket.settled = True
        if ticket.generation != self._generation:
            return False
        return True

    def _open_error(self) -> LLMUnavailableError:
        wait_s = max(0.0, self._open_until - self._clock())
        return LLMUnavailableError(f"breaker open, retry in {wait_s:.1f} s")
