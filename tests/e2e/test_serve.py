"""`explorer serve --workers 2`: two Streamlit workers behind haproxy, as browsers meet them.

Sessions spread over both workers and stay on theirs (the `SERVERID` cookie haproxy set and
the worker that answered the websocket agree); a worker killed with -9 is restarted while the
other keeps serving, and a browser whose cookie names the dead one is served all the same;
Ctrl-C stops haproxy and every worker with status 0 and leaves nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.load_sessions import SEARCH_LABEL
from explorer.hosting.processes import free_port
from tests.conftest import ROOT
from tests.e2e.conftest import (
    alive,
    check_rerun,
    descendants,
    haproxy_or_skip,
    kill_tree,
    load_and_filter,
    proxied_visit,
    run_async,
    start_serve,
)

pytestmark = pytest.mark.e2e
CORPUS = "seed"


def worker_ports(config: Path) -> dict[str, int]:
    """Worker name -> port, from the haproxy config `explorer serve` wrote."""
    found = re.finditer(r"server (w\d+) 127\.0\.0\.1:(\d+)", config.read_text())
    return {m[1]: int(m[2]) for m in found}


def pid_on_port(serve_pid: int, port: int) -> int | None:
    for pid in descendants(serve_pid):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"--server.port" in argv and argv[argv.index(b"--server.port") + 1] == b"%d" % port:
                return pid
    return None


def wait_for_log(log: Path, pattern: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not re.search(pattern, log.read_text()):
        assert time.monotonic() < deadline, f"no {pattern!r} in: {log.read_text()[-1500:]}"
        time.sleep(0.5)


async def spread_then_kill_a_worker(url: str, config: Path, serve_pid: int, log: Path) -> None:
    ports = worker_ports(config)
    assert set(ports) == {"w1", "w2"}
    async with contextlib.AsyncExitStack() as open_visits:
        sessions: dict[str, list] = {"w1": [], "w2": []}
        for _ in range(4):  # each a browser of its own, its websocket kept open
            jar, worker, client = await open_visits.enter_async_context(proxied_visit(url, CORPUS))
            assert worker == jar["SERVERID"], "the websocket left the worker the cookie names"
            await load_and_filter(client)
            sessions[worker].append(client)
        assert all(sessions.values()), f"one worker served every session: {sessions}"

        victim = pid_on_port(serve_pid, ports["w1"])
        os.kill(victim, signal.SIGKILL)
        # The other worker's sessions go on; a browser pinned to the dead one is served.
        check_rerun(await asyncio.wait_for(sessions["w2"][0].rerun({SEARCH_LABEL: "graph"}), 60))
        async with proxied_visit(url, CORPUS, {"SERVERID": "w1"}) as (jar, worker, client):
            assert worker == jar["SERVERID"]
            await load_and_filter(client)

    wait_for_log(log, r"worker w1 \(port \d+\) exited with status -9; restarting it")
    wait_for_log(log, r"worker w1 \(port \d+\) is serving again")
    assert pid_on_port(serve_pid, ports["w1"]) not in (None, victim)
    # haproxy's health check brings it back: a browser pinned to w1 is served by w1 again.
    deadline = time.monotonic() + 30
    while True:
        async with proxied_visit(url, CORPUS, {"SERVERID": "w1"}) as (jar, worker, client):
            if worker == "w1":
                await load_and_filter(client)
                return
        assert time.monotonic() < deadline, "the restarted worker never came back into rotation"
        await asyncio.sleep(1)


def test_two_workers_sticky_sessions_restart_and_ctrl_c(seed_cache, tmp_path):
    haproxy_or_skip()
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(seed_cache), "serve",
               "--workers", "2", "--port", str(port)]  # fmt: skip
    proc, url = start_serve(command, cwd=ROOT, cache=None, log=log)
    try:
        assert url == f"http://127.0.0.1:{port}"
        config = seed_cache / ".serve" / str(port) / "haproxy.cfg"
        run_async(spread_then_kill_a_worker(url, config, proc.pid, log))
        tree = descendants(proc.pid)
        assert len(tree) == 3  # haproxy and two workers
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0, log.read_text()[-1500:]
        assert "Stopped." in log.read_text()
        assert alive(tree) == set(), "processes left running after Ctrl-C"
        with pytest.raises(OSError):
            urllib.request.urlopen(url + "/_stcore/health", timeout=2)
    finally:
        kill_tree(proc)
