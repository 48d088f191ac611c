import threading

import pytest

from explorer.build import cores

# A thread of loky's that dies (cores._settle) fails the test it died in, not just warns.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


@pytest.fixture
def fresh_pool():
    """Two cores or more (on one, every call runs here, in turn: nothing to share), no pool
    left by an earlier test, and the test's own pool ended after it."""
    from joblib import cpu_count

    if cpu_count() < 2:
        pytest.skip("one core: every call runs here, in turn (nothing to share)")
    cores.release_workers()
    before = set(threading.enumerate())
    yield
    cores.release_workers()
    # A pool the test ended without waiting (a failed call) may still have loky's manager
    # thread winding down: joined here, anything it raises is this test's.
    for thread in set(threading.enumerate()) - before:
        if thread.name == "ExecutorManagerThread":
            thread.join(timeout=10)


def _square_where(x: int) -> tuple[int, int]:
    import os
    import time

    time.sleep(0.02)  # long enough that the pool cannot take every call before this process
    return x * x, os.getpid()


def test_calls_on_cores_come_back_in_order_and_this_process_takes_a_share(fresh_pool):
    """Results keep the calls' order whichever process ran each; the first call of a
    build runs here (it compiles the kernels), and later calls are shared: this process
    takes them from the back while the pool's worker takes them from the front."""
    import os

    for _ in range(2):  # a fresh pool, then the pool the first round left
        out = list(cores.on_cores(_square_where, [(x,) for x in range(24)]))
        assert [value for value, _ in out] == [x * x for x in range(24)]
        pids = {pid for _, pid in out}
        assert os.getpid() in pids and len(pids) >= 2


def _fails_at(x: int, bad: int) -> int:
    if x == bad:
        raise ValueError(f"call {x} failed")
    return x


@pytest.mark.parametrize("bad", [1, 11])  # one a worker runs, one this process takes
def test_a_failing_call_on_cores_raises_its_error_wherever_it_ran(bad, fresh_pool):
    with pytest.raises(ValueError, match=f"call {bad} failed"):
        list(cores.on_cores(_fails_at, [(x, bad) for x in range(12)]))
    # The next fits get a fresh pool.
    assert list(cores.on_cores(_fails_at, [(x, -1) for x in range(6)])) == list(range(6))


@pytest.fixture
def wrapped_pool(monkeypatch, fresh_pool):
    """`install(wrap)`: on_cores then gets `wrap(pool)` in place of its fresh pool, and
    the real pools it made are ended after the test."""
    real, made = cores._new_pool, []

    def install(wrap) -> None:
        def wrapped(workers: int):
            made.append(real(workers))
            return wrap(made[-1])

        monkeypatch.setattr(cores, "_new_pool", wrapped)

    yield install
    cores._WORKERS.pop("pool", None)
    for pool in made:
        pool.shutdown(wait=True)


def test_the_pool_holds_one_call_per_worker_so_neither_side_waits_long_at_the_end(
    wrapped_pool,
):
    """Handed every call at once, loky keeps several it can no longer give back, and this
    process waited for them at the end; calls are handed one per worker as workers end."""
    from joblib import cpu_count

    held: list[int] = []

    class Counting:
        def __init__(self, executor) -> None:
            self.executor, self.futures = executor, []

        def __getattr__(self, name: str):  # shutdown, as the pool's
            return getattr(self.executor, name)

        def submit(self, *args):
            held.append(sum(not f.done() for f in self.futures) + 1)
            self.futures.append(self.executor.submit(*args))
            return self.futures[-1]

    wrapped_pool(Counting)
    out = list(cores.on_cores(_square_where, [(x,) for x in range(12)]))
    assert [value for value, _ in out] == [x * x for x in range(12)]
    assert held and max(held) <= min(cpu_count(), 12) - 1


def test_a_pool_that_refuses_a_call_raises_its_error_in_order(wrapped_pool):
    """A broken pool (a worker killed) refuses new calls: that error comes back where the
    refused call's result would have, and no call is left to nobody."""

    class Refusing:
        def __init__(self, executor) -> None:
            self.executor, self.calls = executor, 0

        def __getattr__(self, name: str):  # shutdown, as the pool's
            return getattr(self.executor, name)

        def submit(self, *args):
            self.calls += 1
            if self.calls > 2:
                raise RuntimeError("the pool is broken")
            return self.executor.submit(*args)

    wrapped_pool(Refusing)
    with pytest.raises(RuntimeError, match="the pool is broken"):
        list(cores.on_cores(_square_where, [(x,) for x in range(40)]))


def _parallel_inside(x: int) -> int:
    from joblib import Parallel, delayed

    return sum(Parallel(n_jobs=2)(delayed(abs)(-v) for v in range(x, x + 3)))


def test_a_call_on_cores_can_ask_joblib_for_its_own_pool(fresh_pool):
    """hdbscan runs joblib's Parallel inside a fit (core distances above 16,384 points):
    joblib must get its own pool, not the build's (it failed on ours, which it found as the
    process's reusable pool, once a first round had made it)."""
    from joblib.externals.loky import reusable_executor

    try:
        assert list(cores.on_cores(_square_where, [(x,) for x in range(4)]))  # the pool is up
        out = list(cores.on_cores(_parallel_inside, [(x,) for x in range(6)]))
        assert out == [3 * x + 3 for x in range(6)]
    finally:
        if reusable_executor._executor is not None:  # joblib's own, which the test started
            reusable_executor._executor.shutdown(wait=True)


def _gone(pids: set[int], seconds: float = 5.0) -> bool:
    """Whether every process of `pids` has exited within `seconds`."""
    import time

    from tests.e2e.conftest import alive

    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pids)


def test_a_failed_call_ends_the_workers_and_the_next_calls_get_new_ones(fresh_pool):
    import os

    workers = {pid for _, pid in cores.on_cores(_square_where, [(x,) for x in range(40)])}
    workers.discard(os.getpid())
    first = cores._WORKERS["pool"]
    with pytest.raises(ValueError):
        list(cores.on_cores(_fails_at, [(x, 3) for x in range(8)]))
    assert "pool" not in cores._WORKERS and workers and _gone(workers)
    again = cores.on_cores(_square_where, [(x,) for x in range(4)])
    assert [value for value, _ in again] == [0, 1, 4, 9]
    assert cores._WORKERS["pool"] is not first


def test_a_caller_that_stops_early_ends_the_workers(fresh_pool):
    calls = cores.on_cores(_square_where, [(x,) for x in range(12)])
    next(calls)
    calls.close()
    assert "pool" not in cores._WORKERS
