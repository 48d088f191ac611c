"""Build benchmarks: cold (ours vs stock, alternating), warm re-fit, incremental add.

Each measured command is a fresh process (`explorer build` or `bench.stock`) wrapped by
bench.rss for its peak memory; wall time runs from spawn to exit, imports included.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from bench.common import (
    ICML,
    PAPERLISTS,
    ROOT,
    explorer_cmd,
    fresh_dir,
    median,
    run_child,
    timed,
)

WARM_CORPUS = "bench-icml"


def _manifest(cache: Path, corpus: str):  # -> explorer.artifacts.Manifest
    from explorer import artifacts

    return artifacts.open_run(cache, corpus, verify=False).manifest


def _check(result, what: str) -> None:
    if result.returncode != 0:
        tail = "\n".join(result.stderr.splitlines()[-15:])
        sys.exit(f"{what} failed (exit {result.returncode}):\n{tail}")


def _ours(cache: Path, corpus: str, inputs: list[str], *extra: str):
    args = explorer_cmd("--cache-dir", str(cache), "build", *inputs, "--name", corpus)
    result = run_child(timed([*args, "--no-progress", *extra]))
    _check(result, f"explorer build {corpus}")
    manifest = _manifest(cache, corpus)
    return {
        "wall_s": result.wall_s,
        "peak_rss_mb": result.peak_rss_mb,
        "peak_tree_pss_mb": result.peak_tree_pss_mb,
        "stages": manifest.timings,
        "topics": manifest.counts.topics,
        "outliers": manifest.counts.outliers,
        "embedded_new": manifest.counts.embedded_new,
    }


def _stock(inputs: list[str], numba_dir: Path):
    result = run_child(
        timed([sys.executable, "-m", "bench.stock", *inputs]),
        env={"NUMBA_CACHE_DIR": str(numba_dir), "TOKENIZERS_PARALLELISM": "false"},
    )
    _check(result, "stock baseline")
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    return {"wall_s": result.wall_s, "peak_rss_mb": result.peak_rss_mb,
            "peak_tree_pss_mb": result.peak_tree_pss_mb, **payload}  # fmt: skip


def cold(inputs: list[str], label: str, repeats: int) -> dict:
    """Nothing cached but numba's compiled kernels (machine state, shared by both sides)."""
    numba_dir = ROOT / "cache" / "numba"
    ours_runs, stock_runs = [], []
    for i in range(repeats):
        # Alternate who goes first so a drifting machine load hits both sides alike.
        order = ("stock", "ours") if i % 2 == 0 else ("ours", "stock")
        for side in order:
            if side == "stock":
                stock_runs.append(_stock(inputs, numba_dir))
                print(f"  stock #{i + 1}: {stock_runs[-1]['wall_s']} s", flush=True)
            else:
                cache = fresh_dir(f"cold-{label}")
                (cache / "numba").symlink_to(numba_dir.resolve(), target_is_directory=True)
                ours_runs.append(_ours(cache, label, inputs))
                print(f"  ours  #{i + 1}: {ours_runs[-1]['wall_s']} s", flush=True)
                shutil.rmtree(cache, ignore_errors=True)
    ours_wall = median([r["wall_s"] for r in ours_runs])
    stock_wall = median([r["wall_s"] for r in stock_runs])
    ours_rss = median([r["peak_rss_mb"] for r in ours_runs])
    stock_rss = median([r["peak_rss_mb"] for r in stock_runs])
    # The build's consensus fits run in worker processes: the tree's PSS adds up what
    # ru_maxrss cannot, so the verdict compares the trees (bench/rss.py).
    ours_tree = median([r["peak_tree_pss_mb"] for r in ours_runs])
    stock_tree = median([r["peak_tree_pss_mb"] for r in stock_runs])
    return {
        "corpus": label,
        "inputs": inputs,
        "repeats": repeats,
        "ours": ours_runs,
        "stock": stock_runs,
        "ours_wall_median_s": ours_wall,
        "stock_wall_median_s": stock_wall,
        "wall_ratio": round(ours_wall / stock_wall, 3),
        "ours_peak_rss_median_mb": ours_rss,
        "stock_peak_rss_median_mb": stock_rss,
        "ours_peak_tree_pss_median_mb": ours_tree,
        "stock_peak_tree_pss_median_mb": stock_tree,
        "rss_ratio": round(ours_tree / stock_tree, 3),
    }


def warm(repeats: int) -> dict:
    """Re-fits of ICML 2013-2019 with embeddings cached: --min-topic-size, then --seed changed.

    Uses the project's cache (its embeddings are shared with `make run`/`make bench`);
    the first build of a clean clone embeds the 3,013 abstracts once, untimed.
    """
    cache = ROOT / "cache"
    inputs = [str(ICML)]
    setup = run_child(explorer_cmd("build", *inputs, "--name", WARM_CORPUS, "--no-progress"))
    _check(setup, "warm-up build")
    sizes, seeds = [], []
    for i in range(repeats):
        shutil.rmtree(cache / WARM_CORPUS, ignore_errors=True)  # runs only; embeddings stay
        sizes.append(_ours(cache, WARM_CORPUS, inputs, "--min-topic-size", str(11 + i)))
        print(f"  --min-topic-size {11 + i}: {sizes[-1]['wall_s']} s", flush=True)
    for i in range(repeats):
        # A seed never used before: both UMAP reductions are computed, not read from cache.
        seed = str(int(time.time()) % 1_000_000 + i)
        seeds.append(_ours(cache, WARM_CORPUS, inputs, "--seed", seed))
        print(f"  --seed {seed}: {seeds[-1]['wall_s']} s", flush=True)
    # Leave the default build as the corpus's latest for the viewer benchmark.
    _check(
        run_child(explorer_cmd("build", *inputs, "--name", WARM_CORPUS, "--no-progress")),
        "default build",
    )
    return {
        "corpus": WARM_CORPUS,
        "min_topic_size_runs": sizes,
        "new_seed_runs": seeds,
        "min_topic_size_wall_median_s": median([r["wall_s"] for r in sizes]),
        "new_seed_wall_median_s": median([r["wall_s"] for r in seeds]),
    }


def incremental() -> dict:
    """Build ICML 2013-2018 from an empty cache, then add 2019 with `--add`."""
    cache = fresh_dir("incremental")
    (cache / "numba").symlink_to((ROOT / "cache" / "numba").resolve(), target_is_directory=True)
    base = [str(ICML / f"icml{y}.json") for y in range(2013, 2019)]
    first = _ours(cache, "icml-inc", base)
    added = _ours(cache, "icml-inc", [str(ICML / "icml2019.json")], "--add")
    shutil.rmtree(cache, ignore_errors=True)
    embed_s = added["stages"]["embed"]
    return {
        "first_build": first,
        "add": added,
        "embedded_new": added["embedded_new"],
        "embed_s": embed_s,
        "add_wall_s": added["wall_s"],
        "overhead_s": round(added["wall_s"] - embed_s, 2),
    }


def scale_inputs() -> list[str]:
    return [str(PAPERLISTS / d) for d in ("nips", "icml", "aistats")]


def real_inputs() -> list[str]:
    """Every real abstract in the shared paper lists (~23,400): issue 18's "23k real" row."""
    return [str(PAPERLISTS)]
