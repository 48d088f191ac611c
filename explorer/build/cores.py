"""Calls shared between this process and a worker process per other core.

The consensus's seeded fits (consensus.seeded_fits) are many calls of one function, each a
seeded UMAP that runs on one thread and holds Python's lock: threads gain nothing, processes
do. `on_cores` runs them on a loky pool of its own, a worker per other core, plus this
process, results in the calls' order; `release_workers` ends the pool once no fit follows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait

# The worker pool `on_cores` started, until `release_workers` ends it.
_WORKERS: dict[str, object] = {}
# A worker idle this long exits (its ~300 MB freed between a sample's fits and the stages
# after them); the pool starts it again for the next call. loky's reusable pool's default.
IDLE_SECONDS = 10
# How long ending a pool waits for loky to take up the calls it was handed (`_settle`).
SETTLE_SECONDS = 1.0


def on_cores(function: Callable, calls: list[tuple]) -> Iterator:
    """`function` over `calls`, results in order, on every core: a worker process per other
    core (a loky pool, kept for the build's next fits) takes the calls from the front,
    one at a time (`_Shares`), and this process takes them from the back until the two
    meet, so neither waits long for the other at the end. A worker holds its own umap and
    hdbscan (~180 MB), so one core's share stays here rather than in one more worker.
    Handing the pool every call at once let it hold four it could no longer give up: on
    ICML 2013-2019 (2026-12-06, 2 cores, 24 fits) this process then waited ~11 s for them,
    and the fits took 32.7-33.9 s against 29.1-30.4 s handed one at a time. Which
    process runs a call changes nothing: each depends only on its own."""
    from joblib import cpu_count

    cores = min(len(calls), cpu_count())
    if cores < 2:
        yield from (function(*call) for call in calls)
        return
    done: dict[int, object] = {}
    executor = _kept_pool(cores - 1)
    if executor is None:
        # The build's first call runs here before any worker starts: it compiles umap's and
        # pynndescent's numba kernels into the build's numba cache, which the workers then
        # load instead of compiling them again each (on ICML 2013-2019 a compiling worker
        # held ~150 MB more).
        done[0] = function(*calls[0])
        executor = _WORKERS["pool"] = _new_pool(cores - 1)
    shares = _Shares(executor, function, calls, first=len(done), workers=cores - 1)
    try:
        shown = 0
        while (i := shares.take_last()) is not None:
            done[i] = function(*calls[i])
            while shown in done or shares.finished(shown):
                yield done.pop(shown) if shown in done else shares.result(shown)
                shown += 1
        for i in range(shown, len(calls)):
            yield done.pop(i) if i in done else shares.result(i)
    except BaseException:
        # A failed call, a broken pool (a worker killed) or a caller that stopped: the
        # workers are ended, and the next fits, if any, start a fresh pool.
        shares.stop()
        _discard(executor)
        raise
    finally:
        shares.stop()


def _new_pool(workers: int):
    """A loky pool of its own, never the process-wide reusable one that joblib's
    `Parallel` hands out too: hdbscan asks for that one for its core distances above 16,384
    points, and given ours (2026-12-07, a 100,000-paper build's fits on a 20,000-paper
    sample) joblib failed on what its own pools carry (`_temp_folder_manager`), and could
    have resized the pool under running fits."""
    from joblib.externals.loky import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, timeout=IDLE_SECONDS)


def _kept_pool(workers: int):
    """The pool an earlier call left, if it can serve this one: of this size, and neither
    broken nor shut down (a worker killed while idle); else it is ended and forgotten, and
    None is returned."""
    pool = _WORKERS.get("pool")
    if pool is None:
        return None
    flags = pool._flags  # loky's own state of the pool, and its size below
    if pool._max_workers == workers and not (flags.broken or flags.shutdown):
        return pool
    _discard(pool)
    return None


def _discard(pool) -> None:
    """End `pool` without waiting for what it runs, and forget it."""
    if _WORKERS.get("pool") is pool:
        del _WORKERS["pool"]
    _settle(pool)
    pool.shutdown(wait=False, kill_workers=True)


def _settle(pool) -> None:
    """Wait until loky's manager thread has taken every call handed to `pool` off its queue
    of call ids, at most SETTLE_SECONDS (then the pool is ended all the same). Ended with
    `kill_workers` while an id is still queued, loky (joblib 1.6) forgets the calls, then
    looks that one up, and its thread dies on a KeyError before it releases the pool's
    queues: tests/test_cores.py's failed-call test warned so in about half its runs. A
    broken pool's thread reads the queue no more."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not (pool._flags.broken or pool._work_ids.empty()) and time.monotonic() < deadline:
        time.sleep(0.002)


class _Shares:
    """The calls of one `on_cores`, split between the pool and this process: a feeder
    thread hands the pool the next call from the front each time a worker's call ends (so
    the pool holds one call per worker), and this process takes calls from the back."""

    def __init__(self, executor, function: Callable, calls: list[tuple], *, first: int,
                 workers: int) -> None:  # fmt: skip
        self._executor, self._function, self._calls = executor, function, calls
        self._lock = threading.Lock()
        self._front, self._back, self._stopped = first, len(calls), False
        self._futures: dict[int, Future] = {}
        running = {f for f in (self._hand() for _ in range(workers)) if f is not None}
        self._feeder = threading.Thread(target=self._feed, args=(running,), daemon=True)
        self._feeder.start()

    def _hand(self) -> Future | None:
        """The next call from the front, submitted; None when none is left. A pool that
        cannot take it (broken: a worker killed) gives the call its error, which comes back
        in order as a failed call's would, and nothing more is begun."""
        with self._lock:
            if self._stopped or self._front >= self._back:
                return None
            i, self._front = self._front, self._front + 1
            try:
                future = self._executor.submit(self._function, *self._calls[i])
            except Exception as exc:  # noqa: BLE001 - raised again in order, by `result`
                future, self._stopped = Future(), True
                future.set_exception(exc)
            self._futures[i] = future
            return future

    def _feed(self, running: set[Future]) -> None:
        while running:
            ended, running = wait(running, return_when=FIRST_COMPLETED)
            for future in ended:
                if future.cancelled() or future.exception() is not None:
                    self.stop()  # its error comes back in order; nothing more is begun
                elif (handed := self._hand()) is not None:
                    running.add(handed)

    def take_last(self) -> int | None:
        """The last call not yet handed out, for this process; None once the two meet."""
        with self._lock:
            if self._stopped or self._front >= self._back:
                return None
            self._back -= 1
            return self._back

    def finished(self, i: int) -> bool:
        with self._lock:
            future = self._futures.get(i)
        return future is not None and future.done()

    def result(self, i: int) -> object:
        with self._lock:
            future = self._futures[i]
        return future.result()

    def stop(self) -> None:
        """Begin no more calls. Nothing is cancelled: the pool holds only the calls its
        workers run, and after an error `on_cores` ends those workers, loky failing their
        calls (a call cancelled meanwhile made loky's own thread raise InvalidStateError
        and die before it ended the workers)."""
        with self._lock:
            self._stopped = True


def release_workers() -> None:
    """End `on_cores`'s worker processes (~300 MB each) once no fit follows; the next fits,
    if any, start them again."""
    pool = _WORKERS.pop("pool", None)
    if pool is not None:
        pool.shutdown(wait=True)
