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
    """The host a result was measured on. Two hosts with one model name can round apart:
    "AMD EPYC" names several generations (the CPU family tells them apart), and a single
    UMAP fit's topics moved between two of them (bench/README.md, row 12, 2026-12-07)."""
    cpu = _cpuinfo(("model name", "cpu family", "model"))
    versions = {"python": platform.python_version()}
    for name in VERSIONED:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    from explorer.build.models import native_bfloat16

    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu.get("model name", ""),
        "cpu_family": f"{cpu.get('cpu family', '?')}/{cpu.get('model', '?')}",
        "native_bfloat16": native_bfloat16(),  # row 1's target depends on it
        "versions": versions,
    }


def _cpuinfo(keys: tuple[str, ...]) -> dict[str, str]:
    """The first value of each of `keys` in /proc/cpuinfo (none where it is unreadable)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in keys:
                found.setdefault(key.strip(), value.strip())
    return found


@dataclass
class ChildResult:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    peak_tree_pss_mb: float = float("nan")  # the process and its workers (bench/rss.py)


def run_child(
    args: list[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 7200,
    cwd: Path = ROOT,
) -> ChildResult:
    """Run one program to completion; wall time from spawn to exit and its own peak RSS.
    `cwd`: where it runs (`python -m` imports from there first)."""
    full_env = {**os.environ, **(env or {})}
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    # communicate() reaped the child; its rusage is folded into RUSAGE_CHILDREN, so ask
    # the child itself: our scripts print their ru_maxrss; for the CLI we use /usr/bin/time.
    return ChildResult(
        round(wall, 2),
        _peak_from(err),
        proc.returncode,
        out,
        err,
        _peak_from(err, "PEAK_TREE_PSS_KB"),
    )


def _peak_from(stderr: str, key: str = "PEAK_RSS_KB") -> float:
    for line in reversed(stderr.splitlines()):
        if line.startswith(f"{key}="):
            return round(int(line.split("=", 1)[1]) / 1024, 1)
    return float("nan")


def timed(args: list[str]) -> list[str]:
    """Wrap a command so its peak RSS and tree PSS are printed on stderr. bench/rss.py runs
    by path, so a command run from another revision's worktree is measured the same way."""
    return [sys.executable, str(Path(__file__).with_name("rss.py")), *args]


def fresh_dir(name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


def now() -> str:
    """A result's local time stamp, as every result file and row carries it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def write_results(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {
        "when": now(),
        "machine": machine(),
        **payload,
    }
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2))
    os.replace(tmp, path)
    return path


def real_corpus():
    """The ~23,400 real abstracts of ../shared/data/paperlists and their vectors (row i for
    paper i), from bench/work/sample-fit's embedding cache, shared by every benchmark that
    needs them (bench/sample_fit.py, bench/scale.py, bench/neighbours.py). What the cache
    lacks is embedded first: ~25 min for all of them on this machine."""
    from explorer.build.embed import embed_texts
    from explorer.build.models import Embedder, resolve_precision
    from explorer.build.pipeline import prepare_environment
    from explorer.build.sources import ReadOptions, read_inputs

    cache = WORK / "sample-fit"
    cache.mkdir(parents=True, exist_ok=True)
    prepare_environment(cache)
    reuse_embeddings(cache)  # bench/engines.py's, when it ran
    papers = read_inputs((str(PAPERLISTS),), ReadOptions()).papers
    embedder = Embedder.of(cache_root=cache, precision=resolve_precision("auto"))
    vectors, _ = embed_texts([p.text for p in papers], embedder, progress=False)
    return papers, vectors


# Work folders whose embedding caches hold the real abstracts: bench/engines.py's local
# engine, then real_corpus()'s.
REAL_EMBEDDINGS = ("engines-local", "sample-fit")


def reuse_embeddings(cache: Path) -> None:
    """Copy the real abstracts' embeddings an earlier benchmark cached into `cache`, so a
    build there embeds nothing already embedded. The cache is content-addressed (a text's
    key under one model and precision), so a copied vector is the one the build would
    compute; what no earlier benchmark cached is embedded by the build as usual."""
    for name in REAL_EMBEDDINGS:
        source = WORK / name / "embeddings"
        if source.is_dir() and source != cache / "embeddings":
            shutil.copytree(source, cache / "embeddings", dirs_exist_ok=True)


def seed_embedding_cache(cache: Path, records: list[dict], vectors, name: str) -> tuple[Path, str]:
    """`records` written as `<cache>/../<name>.parquet` and their `vectors` (row i for
    record i) stored in `cache`'s embedding cache under the keys of the texts as a build
    reads that file back, so `explorer build` of it embeds nothing. Returns the file and
    the precision the vectors are filed under (the build must use it)."""
    import pandas as pd

    from explorer.build.embed import EmbeddingCache, text_key
    from explorer.build.models import DEFAULT_MODEL, resolve_precision, weights_fingerprint
    from explorer.build.sources import ReadOptions, read_inputs

    source = cache.parent / f"{name}.parquet"
    pd.DataFrame(records).to_parquet(source, index=False)
    texts = [p.text for p in read_inputs((str(source),), ReadOptions()).papers]
    if len(texts) != len(records):
        raise SystemExit(f"{source.name} reads as {len(texts)} papers, not {len(records)}")
    precision = resolve_precision("auto")
    store = EmbeddingCache(cache, DEFAULT_MODEL, weights=weights_fingerprint(DEFAULT_MODEL),
                           precision=precision)  # fmt: skip
    store.save([text_key(t) for t in texts], vectors)
    return source, precision


def explorer_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "explorer.cli", *args]
