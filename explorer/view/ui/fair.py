"""A fair share of semantic search for every source: one address's flood of questions must
not slow the other visitors' pages.

Each new question runs the query encoder, scores every paper and redraws the page around its
matches. `QueryGate` lets each source address (`editing.source`: the trusted proxy header's
address, else the socket's; an IPv6 address counts by its /64, the block one subscriber
holds) ask one question at a time in this process, its turn held until the search is done,
at most BURST in a row and RATE a second after that; a question over its source's budget waits for its turn,
asleep (no CPU, no GIL), and after MAX_WAIT_S is not run at all. A person asks a question
every few seconds and never waits; thirty sessions from one address asking in a loop share
one source's budget, so they cost the others what one steady asker does (bench row 14g).
Sources behind one NAT share a budget too (docs/hosting.md).
"""

from __future__ import annotations

import contextlib
import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

# A source may ask this many questions back to back, then RATE a second.
BURST = 4
RATE = 1.0
# A question waits at most this long for its source's turn, then is not run.
MAX_WAIT_S = 10.0
# Sources remembered at once (the quietest are forgotten first, never one taking its turn):
# bounded memory.
MAX_SOURCES = 10_000
IPV6_BLOCK = 64  # one subscriber's block: each address in it is the same source


def source_key(address: str) -> str:
    """The budget a client address draws on: an IPv4 address (also IPv4-mapped IPv6) as it
    is, an IPv6 address by its /64, anything else ("loopback") as given."""
    try:
        parsed = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_BLOCK}", strict=False))
    return str(parsed)


@dataclass
class _Budget:
    tokens: float
    stamp: float
    turn: threading.Lock = field(default_factory=threading.Lock)


class QueryGate:
    """Per-source token buckets, one question of a source at a time (threads: Streamlit runs
    each session's script in its own)."""

    def __init__(
        self,
        burst: int = BURST,
        rate: float = RATE,
        max_wait_s: float = MAX_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.burst, self.rate, self.max_wait_s = burst, rate, max_wait_s
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._budgets: OrderedDict[str, _Budget] = OrderedDict()

    def _budget(self, source: str) -> _Budget:
        with self._lock:
            budget = self._budgets.get(source)
            if budget is None:
                budget = self._budgets[source] = _Budget(float(self.burst), self._clock())
                self._forget()
            self._budgets.move_to_end(source)
            return budget

    def _forget(self) -> None:
        """Drop the quietest sources above MAX_SOURCES, never one in its turn (a new budget
        for it would let a second question of that source run beside the first)."""
        excess = len(self._budgets) - MAX_SOURCES
        for name in [n for n, b in self._budgets.items() if not b.turn.locked()][: max(excess, 0)]:
            del self._budgets[name]

    @contextlib.contextmanager
    def turn(self, source: str) -> Iterator[bool]:
        """`source`'s turn, held until the block ends (the search runs inside it): True once
        it came and one question was taken from the budget, False when it did not come
        within max_wait_s (the question is then not run)."""
        start = self._clock()
        budget = self._budget(source_key(source))
        if not budget.turn.acquire(timeout=self.max_wait_s):
            yield False
            return
        try:
            yield self._take(budget, start)
        finally:
            budget.turn.release()

    def _take(self, budget: _Budget, start: float) -> bool:
        now = self._clock()
        budget.tokens = min(self.burst, budget.tokens + (now - budget.stamp) * self.rate)
        budget.stamp = now
        wait = (1.0 - budget.tokens) / self.rate if budget.tokens < 1.0 else 0.0
        if wait > 0:
            if (now - start) + wait > self.max_wait_s:
                return False
            self._sleep(wait)
            budget.tokens, budget.stamp = 1.0, self._clock()
        budget.tokens -= 1.0
        return True


GATE = QueryGate()
