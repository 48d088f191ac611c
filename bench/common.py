"""Shared plumbing for the benchmarks: paths, child processes with their peak RSS, results.

Every measured program runs in a fresh process started here, so imports, model loading
and numba compilation are paid (or cached) exactly as a user's command pays them.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
WORK = ROOT / "bench" / "work"  # scratch caches for cold builds; never committed
PAPERLISTS = ROOT.parent / "shared" / "data" / "paperlists"
ICML = PAPERLISTS / "icml"
VERSIONED = ("bertopic", "umap-learn", "hdbscan", "sentence-transformers", "torch", "streamlit")


def require_shared(*paths: Path) -> None:
    """Exit with a clear message (status 0: nothing to measure) when ../shared is absent."""
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"skip: benchmark corpus {missing[0]} is absent (it ships in ../shared)")
        sys.exit(0)


def machine() -> dict[str, object]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return {"cpus": os.cpu_count(), "cpu_model": model, "versions": versions}


@dataclass
class ChildResult:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str


def run_child(
    args: list[str], *, env: dict[str, str] | None = None, timeout: float = 7200
) -> ChildResult:
    """Run one program to completion; wall time from spawn to exit and its own peak RSS."""
    full_env = {**os.environ, **(env or {})}
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    # communicate() reaped the child; its rusage is folded into RUSAGE_CHILDREN, so ask
    # the child itself: our scripts print their ru_maxrss; for the CLI we use /usr/bin/time.
    return ChildResult(round(wall, 2), _peak_from(err), proc.returncode, out, err)


def _peak_from(stderr: str) -> float:
    for line in reversed(stderr.splitlines()):
        if line.startswith("PEAK_RSS_KB="):
            return round(int(line.split("=", 1)[1]) / 1024, 1)
    return float("nan")


def timed(args: list[str]) -> list[str]:
    """Wrap a command so its peak RSS is printed on stderr (GNU time, else a Python shim)."""
    return [sys.executable, "-m", "bench.rss", *args]


def fresh_dir(name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


def write_results(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": machine(),
        **payload,
    }
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2))
    os.replace(tmp, path)
    return path


def explorer_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "explorer.cli", *args]
