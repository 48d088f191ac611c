"""The server a load test measures, and how it is measured: a `streamlit run` or an
`explorer serve` started on loopback, its process tree's CPU and memory read from /proc, and
the corpus it serves built when absent. bench/load.py, bench/withstand.py and
bench/viewer.py start their servers here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from bench.common import ICML, ROOT, explorer_cmd


def ensure_corpus(name: str) -> None:
    """Build the ICML 2013-2019 corpus if it is not built yet (needs ../shared)."""
    usable = subprocess.run(explorer_cmd("info", name), cwd=ROOT, capture_output=True)
    if usable.returncode == 0:  # built, intact, and of this artifact schema
        return
    if not ICML.is_dir():
        print(f"skip: {ICML} is absent, so corpus {name!r} cannot be built")
        sys.exit(0)
    subprocess.run(explorer_cmd("build", str(ICML), "--name", name), cwd=ROOT, check=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used (from /proc, so any process)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def clients_cpu_s(server: int) -> float:
    """CPU seconds of this process and its children (Chromium, Playwright), not the server's."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue  # the process ended while we looked
    total, me = 0.0, os.getpid()
    for pid in parents:
        ancestor = pid
        while ancestor not in (me, server, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == me or pid == me:
            try:
                total += cpu_s(pid)
            except OSError:
                continue
    return total


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in found]


@dataclass
class Server:
    """The server under test: one `streamlit run`, or `explorer serve` (haproxy and N
    workers). CPU and memory are summed over its whole process tree."""

    proc: subprocess.Popen

    @classmethod
    def start(
        cls, port: int, workers: int, app_dir: Path = ROOT, cache: Path = ROOT / "cache"
    ) -> Server:
        """Serve `app_dir`'s app (this project, or e.g. a worktree of an older commit for a
        side-by-side comparison) on `cache` (this project's, by default)."""
        address = ["--server.port", str(port), "--server.address", "127.0.0.1"]
        if workers:
            cmd = explorer_cmd("serve", "--workers", str(workers), "--port", str(port))
        else:
            cmd = [sys.executable, "-m", "streamlit", "run", "app.py", *address]
        env = {**os.environ, "EXPLORER_CACHE_DIR": str(cache)}
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        proc = subprocess.Popen(cmd, cwd=app_dir, env=env, **quiet)
        server = cls(proc)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2):
                    return server
            except OSError:
                time.sleep(0.5)
        server.stop()
        sys.exit(f"{' '.join(cmd[:4])} did not start within 120 s")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def pids(self) -> list[int]:
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(_children(pid))
        return found

    def cpu_s(self) -> float:
        return sum(_safe(cpu_s, pid) for pid in self.pids())

    def rss_mb(self) -> float:
        return sum(_safe(rss_mb, pid) for pid in self.pids())

    def stop(self) -> None:
        """Ctrl-C, as a user stops it; killed if it does not stop within 30 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _safe(measure, pid: int) -> float:
    try:
        return measure(pid)
    except OSError:  # the process ended while we looked
        return 0.0
