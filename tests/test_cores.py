import pytest

from explorer.build import cores


def _square_where(x: int) -> tuple[int, int]:
    import os
    import time

    time.sleep(0.02)  # long enough that the pool cannot take every call before this process
    return x * x, os.getpid()


def test_calls_on_cores_come_back_in_order_and_this_process_takes_a_share():
    """Results keep the calls' order whichever process ran each; the first call of a
    build runs here (it compiles the kernels), and later calls are shared: this process
    takes them from the back while the pool's worker takes them from the front."""
    import os

    from joblib import cpu_count

    if cpu_count() < 2:
        pytest.skip("one core: every call runs here, in turn (nothing to share)")
    cores.release_workers()
    try:
        for _ in range(2):  # a fresh pool, then the pool the first round left
            out = list(cores.on_cores(_square_where, [(x,) for x in range(24)]))
            assert [value for value, _ in out] == [x * x for x in range(24)]
            pids = {pid for _, pid in out}
            assert os.getpid() in pids and len(pids) >= 2
    finally:
        cores.release_workers()


def _fails_at(x: int, bad: int) -> int:
    if x == bad:
        raise ValueError(f"call {x} failed")
    return x


@pytest.mark.parametrize("bad", [1, 11])  # one a worker runs, one this process takes
def test_a_failing_call_on_cores_raises_its_error_wherever_it_ran(bad):
    from joblib import cpu_count

    if cpu_count() < 2:
        pytest.skip("one core: every call runs here, in turn")
    cores.release_workers()
    try:
        with pytest.raises(ValueError, match=f"call {bad} failed"):
            list(cores.on_cores(_fails_at, [(x, bad) for x in range(12)]))
        # The pool is still usable for the next fits.
        assert list(cores.on_cores(_fails_at, [(x, -1) for x in range(6)])) == list(range(6))
    finally:
        cores.release_workers()


@pytest.fixture
def wrapped_pool(monkeypatch):
    """`install(wrap)`: on_cores then gets `wrap(pool)` in place of loky's fresh pool, and
    the real pools it made are ended after the test."""
    import joblib.externals.loky as loky
    from joblib import cpu_count

    if cpu_count() < 2:
        pytest.skip("one core: every call runs here, in turn")
    real, made = loky.get_reusable_executor, []

    def install(wrap) -> None:
        def wrapped(**kw):
            made.append(real(**kw))
            return wrap(made[-1])

        monkeypatch.setattr(loky, "get_reusable_executor", wrapped)

    cores.release_workers()
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

        def submit(self, *args):
            self.calls += 1
            if self.calls > 2:
                raise RuntimeError("the pool is broken")
            return self.executor.submit(*args)

    wrapped_pool(Refusing)
    with pytest.raises(RuntimeError, match="the pool is broken"):
        list(cores.on_cores(_square_where, [(x,) for x in range(40)]))
