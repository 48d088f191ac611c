"""The supervisor's children (Streamlit workers and haproxy): started in their own session,
stopped in order, never outliving it; the stop signals that end a run; their logs' tails;
the free loopback ports they listen on.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

STOP_TIMEOUT_S = 10.0
_STOP_SIGNALS = tuple(
    getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
)
_PR_SET_PDEATHSIG = 1


class Stop(Exception):
    """A stop signal (SIGINT, SIGTERM, SIGHUP) arrived: shut down cleanly."""


@functools.cache
def _prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


def _child_setup(prctl: Callable[..., int] | None) -> Callable[[], None]:
    """What the child runs before exec: the signal state of a fresh process, and (Linux)
    SIGTERM when this supervisor dies, even by kill -9, so no worker outlives it."""

    def setup() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        for s in _STOP_SIGNALS:
            signal.signal(s, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return setup


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """A stop signal waits until the child just started is recorded, so it gets stopped."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def spawn(command: list[str], *, cwd: Path, env: dict[str, str], log_path: Path):
    """A child in its own session: the terminal's Ctrl-C reaches only this supervisor, which
    then stops the children in order (and never mistakes their exit for a crash)."""
    with open(log_path, "wb") as out:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_child_setup(_prctl()),  # this process runs no threads
        )


def stop_all(procs: list[subprocess.Popen | None]) -> None:
    """Terminate, wait up to STOP_TIMEOUT_S for all, then kill what is left."""
    running = [p for p in procs if p is not None and p.poll() is None]
    for proc in running:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free now: all are held open until each is known, so
    two calls in a row cannot hand out one port twice (a worker and the health check
    would then race for it)."""
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in held:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in held]


def free_port() -> int:
    """One loopback port free now (`free_ports`)."""
    return free_ports(1)[0]


class StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP end the run the same way (also where the shell that started
    this process ignores SIGINT, as it does for background jobs). Once `stopping`, further
    signals are ignored: a second Ctrl-C must not cut the shutdown short."""

    def __init__(self) -> None:
        self.stopping = False
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: object) -> None:
        if not self.stopping:
            self.stopping = True
            raise Stop(signal.Signals(signum).name)

    def __enter__(self) -> StopSignals:
        self._previous = {s: signal.signal(s, self._handle) for s in _STOP_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)


# --- what a child's log says -------------------------------------------------------------


def tail(path: Path, size: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


_ERROR_LINE = re.compile(r"(Error|Exception|error:|Killed|Traceback)")


def last_error(log_path: Path) -> str:
    """A worker log's last line that reads as an error (Streamlit's start-up banner is not
    one), else its last line."""
    lines = [ln.strip() for ln in tail(log_path).splitlines() if ln.strip()]
    errors = [ln for ln in lines if _ERROR_LINE.search(ln)]
    return (errors or lines or ["(no output)"])[-1][:300]
