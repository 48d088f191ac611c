"""The per-source fair turn in front of semantic search (explorer/view/ui/fair.py), on a fake
clock: no timed assertions."""

from __future__ import annotations

import threading

import pytest

from explorer.view.ui import fair


class Clock:
    """A clock that only moves when the gate sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now, self.slept = 100.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Gate(fair.QueryGate):
    def admit(self, source: str) -> bool:
        """A turn with nothing done inside it: whether it came."""
        with self.turn(source) as admitted:
            return admitted


def _gate(clock: Clock, **kw) -> Gate:
    return Gate(clock=clock, sleep=clock.sleep, **kw)


def test_a_burst_runs_at_once_then_questions_wait_their_rate():
    clock = Clock()
    gate = _gate(clock, burst=3, rate=2.0)
    assert all(gate.admit("a") for _ in range(3)) and clock.slept == []
    assert gate.admit("a") and clock.slept == [0.5]  # one token comes back in 1 / rate
    assert gate.admit("a") and clock.slept == [0.5, 0.5]


def test_quiet_time_refills_the_budget_up_to_the_burst():
    clock = Clock()
    gate = _gate(clock, burst=2, rate=1.0)
    assert gate.admit("a") and gate.admit("a")
    clock.now += 60.0  # a person reading for a minute
    assert gate.admit("a") and gate.admit("a") and clock.slept == []
    assert gate.admit("a") and clock.slept == [1.0]


def test_a_question_that_would_wait_too_long_is_not_run():
    clock = Clock()
    gate = _gate(clock, burst=1, rate=0.05, max_wait_s=10.0)  # a token every 20 s
    assert gate.admit("a")
    assert not gate.admit("a") and clock.slept == []  # refused without waiting


def test_one_source_s_flood_leaves_another_source_s_budget_whole():
    clock = Clock()
    gate = _gate(clock, burst=2, rate=1.0)
    for _ in range(5):
        gate.admit("attacker")
    slept = len(clock.slept)
    assert gate.admit("visitor") and gate.admit("visitor")
    assert len(clock.slept) == slept  # the visitor never waited


def test_a_source_asks_one_question_at_a_time():
    """While one of a source's questions waits for its turn, another of that source waits
    behind it (and gives up at max_wait_s); another source does not."""
    release, waiting = threading.Event(), threading.Event()

    def sleep(seconds: float) -> None:
        waiting.set()
        release.wait(10)

    # A clock that never moves: the bucket cannot refill however slowly the thread starts.
    gate = Gate(burst=1, rate=1000.0, max_wait_s=0.2, clock=lambda: 100.0, sleep=sleep)
    assert gate.admit("a")  # the burst; the next must sleep
    first = threading.Thread(target=gate.admit, args=("a",))
    first.start()
    assert waiting.wait(10)
    assert not gate.admit("a")  # the turn is held: refused after max_wait_s
    assert gate.admit("b")
    release.set()
    first.join(10)
    assert not first.is_alive()


def test_the_gate_remembers_a_bounded_number_of_sources(monkeypatch):
    monkeypatch.setattr(fair, "MAX_SOURCES", 50)
    gate = _gate(Clock())
    for i in range(500):
        gate.admit(f"10.0.{i // 256}.{i % 256}")
    assert len(gate._budgets) == 50


class Ticking(Clock):
    """Time passes on every reading, as it does between a call and its checks."""

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def test_a_question_within_the_budget_never_waits_even_with_no_wait_allowed():
    clock = Ticking()
    gate = _gate(clock, burst=2, rate=1e-3, max_wait_s=0.0)
    assert gate.admit("a") and gate.admit("a") and not gate.admit("a")
    assert clock.slept == []


def test_a_source_s_turn_lasts_until_its_search_is_done():
    """Four sessions of one address asking at once search one after another, not side by
    side: the turn is held through the block."""
    gate = Gate(burst=4, rate=1.0, max_wait_s=0.2)
    with gate.turn("a") as first:
        assert first
        assert not gate.admit("a")  # the search of the first still runs
        assert gate.admit("b")
    assert gate.admit("a")


@pytest.mark.parametrize(
    ("address", "key"),
    [("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"), ("[2001:db8:1:2::ffff]", "2001:db8:1:2::/64"),
     ("::ffff:192.0.2.7", "192.0.2.7"), ("192.0.2.7", "192.0.2.7"), ("loopback", "loopback")],
)  # fmt: skip
def test_an_ipv6_subscriber_is_one_source_whatever_address_of_its_block(address, key):
    assert fair.source_key(address) == key


def test_addresses_of_one_ipv6_block_share_a_budget():
    clock = Clock()
    gate = _gate(clock, burst=2, rate=1e-3, max_wait_s=1.0)
    assert gate.admit("2001:db8::1") and gate.admit("2001:db8::2")
    assert not gate.admit("2001:db8::3")  # a fresh address of the block: no fresh burst
    assert gate.admit("2001:db8:0:1::1")  # the next /64 is another subscriber


def test_a_source_in_its_turn_is_never_forgotten(monkeypatch):
    monkeypatch.setattr(fair, "MAX_SOURCES", 3)
    gate = _gate(Clock(), burst=1, rate=1e-3, max_wait_s=0.0)
    with gate.turn("10.0.0.1") as admitted:
        assert admitted
        for i in range(2, 10):
            gate.admit(f"10.0.0.{i}")
        assert "10.0.0.1" in gate._budgets
    assert not gate.admit("10.0.0.1")  # its spent budget was kept: no fresh burst
