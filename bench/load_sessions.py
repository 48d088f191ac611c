"""What the sessions of a load test do, whatever their client: the page they drive and
its limits, the search values they type (`Queries`), the shared clock that opens the timed
window once every session has loaded the page (`Window`), and what they saw (`Outcome`).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.load_server import clients_cpu_s

if TYPE_CHECKING:
    from bench.load_server import Server

SEARCH_LABEL = "Search title, abstract, authors"
CAPTION = "papers shown"
PAGE = "topic_map"
TIMEOUT_S = 30.0  # one filter change that takes longer than this is an error
# RSS swings by ~+-100 MB within a second as reruns allocate and free; 4 samples a second
# keep the first-vs-last-15-s comparison from being decided by where one sample falls.
RSS_EVERY_S = 0.25


class Queries:
    """The search values the sessions type, each with the paper count the page must show.

    `fresh`: every change in the run types a value no session typed before (terms of the
    corpus's own vocabulary, in a fixed shuffled order), so no cache can answer it: the
    cost measured is the cost of a view never seen. `repeat`: every session cycles over
    the same few values, so after the first round every view is a cache hit.
    """

    REPEAT = 4

    def __init__(self, cache: Path, corpus: str, mode: str) -> None:
        from explorer import artifacts
        from explorer.view.store import filters

        run = artifacts.open_run(cache, corpus, verify=False)
        self.papers = run.table("papers")
        self.haystack = filters.search_haystack(self.papers)
        self.search_mask = filters.search_mask
        self.terms = run.table("vocab")["term"].tolist()
        random.Random(0).shuffle(self.terms)
        self.mode = mode
        self.used = 0
        self.counts: dict[str, int] = {}

    def _count(self, term: str) -> int:
        if term not in self.counts:
            self.counts[term] = int(self.search_mask(self.papers, term, self.haystack).sum())
        return self.counts[term]

    def _fresh(self) -> str:
        while self.used < len(self.terms):
            term = self.terms[self.used]
            self.used += 1
            if self._count(term):  # a value matching nothing shows no map to time
                return term
        raise RuntimeError(f"all {len(self.terms):,} vocabulary terms used: run shorter")

    def next(self, session: int, step: int) -> tuple[str, int]:
        if self.mode == "fresh":
            term = self._fresh()
        else:
            while len(self.counts) < self.REPEAT:
                self._fresh()
            term = list(self.counts)[(session + step) % self.REPEAT]
        return term, self._count(term)


@dataclass
class Window:
    """The shared clock: the timed window opens once every session has loaded the page."""

    sessions: int
    ready: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(0))
    go: asyncio.Event = field(default_factory=asyncio.Event)
    until: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds used in the window
    arrived: set[int] = field(default_factory=set)

    def arrive(self, index: int) -> None:
        """Session `index` has loaded the page, or failed to: either way, stop waiting for it."""
        if index not in self.arrived:
            self.arrived.add(index)
            self.ready.release()

    async def queries(self, index: int, values: Queries, think: tuple[float, float]):
        """Once every session has arrived: (search value, papers it must show) until the
        window ends, pausing a random think time from the `think` range after each."""
        self.arrive(index)
        await self.go.wait()
        pause = random.Random(index)
        step = 0
        while time.monotonic() < self.until:
            yield values.next(index, step)
            step += 1
            if think[1]:
                await asyncio.sleep(pause.uniform(*think))

    async def run(self, seconds: float, proc: Server, samples: list[tuple[float, float]]) -> None:
        for _ in range(self.sessions):  # warm-up: every session loaded (or failed)
            await self.ready.acquire()
        pid = proc.pid
        server, clients = proc.cpu_s(), clients_cpu_s(pid)
        start = time.monotonic()
        self.until = start + seconds
        self.go.set()
        while time.monotonic() < self.until:
            samples.append((time.monotonic() - start, proc.rss_mb()))
            await asyncio.sleep(RSS_EVERY_S)
        self.cpu = {"server": proc.cpu_s() - server, "clients": clients_cpu_s(pid) - clients}


@dataclass
class Outcome:
    """What one session saw: per-change latencies and any errors (never raised)."""

    chart_s: list[float] = field(default_factory=list)
    rerun_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_session: dict[int, list[float]] = field(default_factory=dict)  # chart_s per session
    sent_bytes: list[int] = field(default_factory=list)  # per change (websocket client only)


@dataclass(frozen=True)
class Plan:
    """What every session does: which values it types, and how long it thinks after each."""

    values: Queries
    think: tuple[float, float]  # (low, high) seconds; (0, 0) is back to back
