"""Embedding throughput of the two build engines on the real abstracts of ../shared/data/
paperlists (about 23,400): `explorer build`'s local engine against `--engine ray` with a
local Ray on this machine.

    python -m bench.engines [--limit N]

Each engine embeds every abstract into a cold cache of its own, one after the other, in a
private network and PID namespace (tests/ray_cluster.py): Ray's local cluster binds to
127.0.0.1 and reaches nothing outside, and every process in the namespace is the engine's.
Reported per engine: wall seconds, abstracts/s, CPU seconds of every process in the
namespace (the Ray daemons included), and the peak of their summed RSS, sampled every
0.5 s. On one 2-core machine Ray cannot win: the row shows its overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

from bench.common import PAPERLISTS, fresh_dir, require_shared, write_results

SAMPLE_S = 0.5
ENGINES = ("local", "ray")


def _processes() -> list[Path]:
    return [p for p in Path("/proc").iterdir() if p.name.isdigit()]


def _rss_kb(proc: Path) -> int:
    try:
        for line in (proc / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(proc: Path) -> float:
    """User + system seconds of a process and its waited-for children."""
    try:
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """The peak of the summed RSS of every process in this PID namespace."""

    def __init__(self) -> None:
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.peak_kb = max(self.peak_kb, sum(_rss_kb(p) for p in _processes()))

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def texts(limit: int | None) -> list[str]:
    from explorer.build.sources import ReadOptions, read_inputs

    papers = read_inputs((str(PAPERLISTS),), ReadOptions()).papers
    return [p.text for p in papers][:limit]


def child(engine: str, cache: Path, limit: int | None) -> dict:
    """One engine's cold embedding of every text, measured from inside the namespace."""
    from explorer.build.embed import embed_texts
    from explorer.build.models import DEFAULT_MODEL, Embedder, resolve_precision

    corpus = texts(limit)
    precision = resolve_precision("auto")
    embedder = Embedder.of(DEFAULT_MODEL, cache_root=cache, precision=precision)
    with Sampler() as sampler:
        start = time.perf_counter()
        startup = 0.0
        if engine == "ray":
            from explorer.build import ray_engine

            ray_engine.connect(ray_engine.RayOptions())
            startup = time.perf_counter() - start
            new = ray_engine.embed_missing(
                corpus, embedder, options=ray_engine.RayOptions(), progress=False
            )
            seconds = time.perf_counter() - start
            cpu = sum(_cpu_s(p) for p in _processes())  # before the daemons exit
            ray_engine.disconnect()
        else:
            _, new = embed_texts(corpus, embedder, progress=False)
            seconds = time.perf_counter() - start
            cpu = sum(_cpu_s(p) for p in _processes())
    return {
        "engine": engine, "texts": len(corpus), "embedded": new, "precision": precision,
        "seconds": round(seconds, 1), "per_s": round(new / seconds, 2),
        "startup_s": round(startup, 1),  # starting the local Ray (in `seconds` too)
        "cpu_s": round(cpu, 1), "peak_rss_mb": round(sampler.peak_kb / 1024),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="only the first N abstracts")
    parser.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cache, args.limit)))
        return
    require_shared(PAPERLISTS)
    from tests.ray_cluster import namespace_tools, run_in_namespace

    if why := namespace_tools():
        sys.exit(f"engine benchmark: {why}")
    rows = {}
    for engine in ENGINES:
        print(f"Embedding with the {engine} engine…", flush=True)
        cache = fresh_dir(f"engines-{engine}")
        limit = ["--limit", str(args.limit)] if args.limit else []
        done = run_in_namespace(
            "bench.engines", "--child", engine, "--cache", str(cache), *limit, timeout=6 * 3600
        )
        if done.returncode != 0:
            sys.exit(f"{engine} engine failed:\n{done.stderr[-3000:]}")
        rows[engine] = json.loads(done.stdout.strip().splitlines()[-1])
    local, ray = rows["local"], rows["ray"]
    write_results("engines", {**rows, "ray_over_local": round(ray["per_s"] / local["per_s"], 3)})


if __name__ == "__main__":
    main()
