"""The circuit breaker: the pure state machine, and its exact timing through the client."""

from __future__ import annotations

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMResponseError, LLMUnavailableError
from ctxtrio.llm.breaker import Breaker, BreakerState
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings


def state(breaker: Breaker) -> BreakerState:
    """The state, read through a call so mypy does not carry narrowing between asserts."""
    return breaker.state


def client_state(client: LLMClient) -> BreakerState:
    """The client's breaker state, read through a call (see state())."""
    return client.breaker_state


class FakeClock:
    """A settable clock for the pure breaker."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_failure_opens_and_fails_fast_with_retry_time() -> None:
    """One failure opens the breaker; callers are refused with the remaining wait in the message."""
    clock = FakeClock()
    breaker = Breaker(clock)
    breaker.failed(breaker.admit())
    clock.now = 0.5
    assert state(breaker) == BreakerState.OPEN
    with pytest.raises(LLMUnavailableError, match=r"breaker open, retry in 1\.5 s"):
        breaker.admit()


def test_half_open_admits_exactly_one_probe() -> None:
    """After the cooldown one caller probes; the others fail fast while the probe is out."""
    clock = FakeClock()
    breaker = Breaker(clock)
    breaker.failed(breaker.admit())
    clock.now = 2.0
    assert state(breaker) == BreakerState.HALF_OPEN
    probe = breaker.admit()
    assert probe.probe
    with pytest.raises(LLMUnavailableError, match="probe"):
        breaker.admit()
    breaker.succeeded(probe)
    assert state(breaker) == BreakerState.CLOSED
    assert not breaker.admit().probe


def test_cooldowns_double_to_the_cap_and_reset_on_success() -> None:
    """Failed probes re-open for 2, 4, 8, 16, 32, 60, 60 s; a successful probe resets to 2 s."""
    clock = FakeClock()
    breaker = Breaker(clock)
    breaker.failed(breaker.admit())
    opened: list[float] = [breaker.open_until]
    for _ in range(6):
        clock.now = breaker.open_until
        breaker.failed(breaker.admit())
        opened.append(breaker.open_until)
    assert opened == [2.0, 6.0, 14.0, 30.0, 62.0, 122.0, 182.0]
    clock.now = 182.0
    breaker.succeeded(breaker.admit())
    breaker.failed(breaker.admit())
    assert breaker.open_until == 184.0


def test_cancelled_probe_gives_its_slot_back() -> None:
    """A probe that ends without a verdict lets the next caller probe; the state is unchanged."""
    clock = FakeClock()
    breaker = Breaker(clock)
    breaker.failed(breaker.admit())
    clock.now = 2.0
    probe = breaker.admit()
    breaker.release(probe)
    assert state(breaker) == BreakerState.HALF_OPEN
    assert breaker.admit().probe


def test_stragglers_from_before_the_opening_change_nothing() -> None:
    """A call admitted while closed cannot close (or re-time) a breaker another call opened."""
    clock = FakeClock()
    breaker = Breaker(clock)
    first, second, third = breaker.admit(), breaker.admit(), breaker.admit()
    breaker.failed(first)
    clock.now = 1.0
    breaker.succeeded(second)
    breaker.failed(third)
    assert state(breaker) == BreakerState.OPEN
    assert breaker.open_until == 2.0


def test_a_ticket_settles_once() -> None:
    """release() after a verdict is a no-op, and a second verdict is ignored."""
    clock = FakeClock()
    breaker = Breaker(clock)
    ticket = breaker.admit()
    breaker.succeeded(ticket)
    breaker.failed(ticket)
    breaker.release(ticket)
    assert state(breaker) == BreakerState.CLOSED


def _always_500() -> tuple[httpx.MockTransport, list[float]]:
    sent: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(trio.current_time())
        return httpx.Response(500, text="boom")

    return httpx.MockTransport(handler), sent


async def test_client_probes_at_exact_virtual_times(autojump_clock: trio.testing.MockClock) -> None:
    """Under a dead server the client sends only at t = 0, 2, 6, 14, 30, 62, 122, 182; else fails fast."""
    transport, sent = _always_500()
    messages = [ChatMessage("user", "hi")]
    async with open_llm_client(LLMSettings("http://llm/v1"), transport=transport) as client:
        refused: list[float] = []
        while trio.current_time() < 200.0:
            try:
                await client.complete(messages, max_tokens=5)
            except LLMUnavailableError:
                refused.append(trio.current_time())
            except LLMResponseError:
                pass
            await trio.sleep(0.5)
    assert sent == [0.0, 2.0, 6.0, 14.0, 30.0, 62.0, 122.0, 182.0]
    assert 1.5 in refused and 5.5 in refused and 181.5 in refused
    assert len(sent) + len(refused) == 400


async def test_probe_success_closes_the_breaker(autojump_clock: trio.testing.MockClock) -> None:
    """Once the server recovers, the probe at the end of the cooldown closes the breaker for everyone."""
    healthy = False

    def handler(request: httpx.Request) -> httpx.Response:
        if not healthy:
            return httpx.Response(503, json={"error": "loading model"})
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    messages = [ChatMessage("user", "hi")]
    settings = LLMSettings("http://llm/v1")
    async with open_llm_client(settings, transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(LLMResponseError, match="HTTP 503: loading model"):
            await client.complete(messages, max_tokens=5)
        healthy = True
        await trio.sleep(1.0)
        with pytest.raises(LLMUnavailableError, match=r"retry in 1\.0 s"):
            await client.complete(messages, max_tokens=5)
        await trio.sleep(1.0)
        assert client_state(client) == BreakerState.HALF_OPEN
        assert (await client.complete(messages, max_tokens=5)).text == "ok"
        assert client_state(client) == BreakerState.CLOSED
