"""The workers' supervision: each `streamlit run` on its loopback port, started, asked for
its health, and restarted when it exits (backing off while it crash-loops) or hangs; the
service stops only when no worker can serve.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.hosting.options import host_flags
from explorer.hosting.processes import last_error, signals_deferred, spawn
from explorer.hosting.settings import HEALTH_PATH, ServeError

if TYPE_CHECKING:
    from explorer.hosting.options import ServeConfig

START_TIMEOUT_S = 120.0
POLL_S = 0.5
# A worker that exits this often within the window is crash-looping: it is restarted after
# a back-off that doubles up to BACKOFF_MAX_S, while the others keep serving. The service
# stops only when every worker is crash-looping and none serves.
RESTART_LIMIT = 3
RESTART_WINDOW_S = 60.0
BACKOFF_MAX_S = 60.0
# The supervisor asks each serving worker's health endpoint (answered by Streamlit's server,
# not by a script run, so a long page load does not count) every HEALTH_EVERY_S; one that
# has not answered for HUNG_AFTER_S (stopped, deadlocked, swapping) is killed and restarted.
HEALTH_EVERY_S = 2.0
HUNG_AFTER_S = 10.0


@dataclass
class Worker:
    """One `streamlit run` on a loopback port; restarted on the same port when it exits."""

    name: str
    port: int
    log_path: Path
    proc: subprocess.Popen | None = None
    healthy: bool = False
    exits: list[float] = field(default_factory=list)
    checked: float = 0.0  # when the supervisor last asked its health endpoint
    failing_since: float | None = None  # since when a serving worker has not answered
    backoff_s: float = 0.0  # the wait before the next start while crash-looping
    start_at: float | None = None  # when a crash-looping worker starts again
    started: float = 0.0  # when its process started
    last_exit: str = ""  # why it last exited, while crash-looping


def start_worker(worker: Worker, config: ServeConfig, env: dict[str, str]) -> None:
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.port", str(worker.port), "--server.address", "127.0.0.1",
        "--server.headless", "true", *host_flags(config.hosts()),
    ]  # fmt: skip
    with signals_deferred():
        worker.proc = spawn(command, cwd=config.app_dir, env=env, log_path=worker.log_path)
    worker.healthy, worker.failing_since, worker.started = False, None, time.monotonic()


def is_healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + HEALTH_PATH, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def wait_healthy(workers: list[Worker]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not all(w.healthy for w in workers):
        for w in workers:
            code = w.proc.poll()
            if code is not None:
                raise ServeError(
                    f"worker {w.name} exited with status {code} before serving: "
                    f"{last_error(w.log_path)} (log: {w.log_path})"
                )
            w.healthy = w.healthy or is_healthy(f"http://127.0.0.1:{w.port}")
        if time.monotonic() > deadline:
            slow = next(w for w in workers if not w.healthy)
            raise ServeError(
                f"worker {slow.name} not serving after {START_TIMEOUT_S:.0f} s "
                f"(log: {slow.log_path})"
            )
        time.sleep(POLL_S)


def supervise(
    workers: list[Worker],
    proxy: subprocess.Popen,
    config: ServeConfig,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """Forever: restart a worker that exits (backing off while it crash-loops) or hangs, say
    when it serves again; haproxy gone, or no worker able to start, is fatal."""
    while True:
        time.sleep(POLL_S)
        if proxy.poll() is not None:
            raise ServeError(f"haproxy exited with status {proxy.returncode}; workers stopped")
        now = time.monotonic()
        for w in workers:
            if w.proc is None:
                if w.start_at is not None and now >= w.start_at:
                    w.start_at = None
                    start_worker(w, config, env)
                continue
            code = w.proc.poll()
            if code is not None:
                _restart(w, code, config, env, log)
            elif now - w.checked >= HEALTH_EVERY_S:
                _check(w, now, config, env, log)
        _check_some_can_serve(workers)


def _check(
    worker: Worker, now: float, config: ServeConfig, env: dict[str, str], log: Callable
) -> None:
    """Ask a worker's health endpoint; restart it once it has failed for HUNG_AFTER_S."""
    worker.checked = now
    if is_healthy(f"http://127.0.0.1:{worker.port}"):
        worker.failing_since = None
        if not worker.healthy:
            worker.healthy, worker.backoff_s = True, 0.0
            log(f"worker {worker.name} (port {worker.port}) is serving again")
        return
    if not worker.healthy:
        if now - worker.started >= START_TIMEOUT_S:
            _kill_and_start(
                worker, f"not serving {START_TIMEOUT_S:.0f} s after its start", config, env, log
            )
        return
    worker.failing_since = worker.failing_since or now
    if now - worker.failing_since >= HUNG_AFTER_S:
        reason = f"has not answered its health check for {HUNG_AFTER_S:.0f} s"
        _kill_and_start(worker, reason, config, env, log)


def _kill_and_start(
    worker: Worker, reason: str, config: ServeConfig, env: dict[str, str], log: Callable
) -> None:
    log(f"worker {worker.name} (port {worker.port}) {reason}; restarting it")
    worker.proc.kill()  # SIGKILL: a stopped process ignores SIGTERM until it is continued
    worker.proc.wait()
    start_worker(worker, config, env)


def _restart(
    worker: Worker,
    code: int,
    config: ServeConfig,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """Start an exited worker again: at once, or after a doubling back-off while it exits
    RESTART_LIMIT times within RESTART_WINDOW_S."""
    now = time.monotonic()
    worker.exits = [t for t in worker.exits if now - t < RESTART_WINDOW_S] + [now]
    if len(worker.exits) < RESTART_LIMIT:
        log(f"worker {worker.name} (port {worker.port}) exited with status {code}; restarting it")
        start_worker(worker, config, env)
        return
    worker.backoff_s = min(BACKOFF_MAX_S, max(1.0, worker.backoff_s * 2))
    worker.proc, worker.healthy, worker.start_at = None, False, now + worker.backoff_s
    worker.last_exit = _why(code, worker.log_path)
    log(
        f"worker {worker.name} exited {len(worker.exits)} times within "
        f"{RESTART_WINDOW_S:.0f} s, last: {worker.last_exit}; "
        f"next start in {worker.backoff_s:.0f} s (log: {worker.log_path})"
    )


def _why(code: int, log_path: Path) -> str:
    """Why a worker exited: the signal that killed it, else its log's last error."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return last_error(log_path)


def _check_some_can_serve(workers: list[Worker]) -> None:
    """Stop only when every worker is crash-looping and none serves."""
    if any(w.healthy or len(w.exits) < RESTART_LIMIT for w in workers):
        return
    worst = workers[0]
    raise ServeError(
        f"no worker can start: {worst.name} exited {len(worst.exits)} times within "
        f"{RESTART_WINDOW_S:.0f} s, last: {worst.last_exit or last_error(worst.log_path)} "
        f"(log: {worst.log_path})"
    )
