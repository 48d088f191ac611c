"""Exact against approximate neighbour graphs (issue 31), on real and synthetic corpora.

    python -m bench.neighbours [--sizes 100000,1000000]

Every graph has a build's shape (k = 15: UMAP's neighbours and the similar-papers list) and
is made in a fresh process (`graph` below), which reports its seconds, the seconds of a
first small call before it (numba compiling NN-descent's kernels, once per machine: they
are cached on disk), and its peak RSS. Recall@10 is the share of each paper's 10 nearest
other papers (exact) that the approximate graph's first 10 name, averaged over papers.

1. **Real**: the ~23,300 real abstracts (bench.common.real_corpus; embedding them the first
   time takes ~25 min). Exact and approximate alternating, twice each; the two approximate
   graphs must be identical. The approximate graph with two threads too (time, and whether
   it is the one-thread graph).
2. **Synthetic**, for each size: the real vectors plus synthetic ones to that size
   (bench/synthetic_corpus.py, seed 42). Where the exact graph is affordable (100,000 here:
   ~90 s) both once, recall over every paper. Above (1,000,000) the approximate graph
   alone, its recall on 1,000 random papers against brute force. (The generator's own
   checks are bench/scale.py's.)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import (
    PAPERLISTS,
    WORK,
    fresh_dir,
    real_corpus,
    require_shared,
    run_child,
    write_results,
)

SEED = 42
EXACT_AT_MOST = 200_000  # the largest corpus whose exact graph is measured (~4x 100k's)
PROBES = 1_000  # papers whose exact neighbours are found by brute force above that
RECALL_AT = 10


def graph_k(n: int) -> int:
    from explorer.build.stages import graph_k as build_k
    from explorer.build.topics import default_params

    return build_k(default_params(n, min_topic_size=None, seed=SEED))


def child(vectors: Path, method: str, jobs: int, out: Path) -> None:
    """One graph in this process; JSON on stdout."""
    from explorer.build import projection
    from explorer.build.pipeline import prepare_environment

    prepare_environment(WORK / "neighbours")
    projection.NNDESCENT["n_jobs"] = jobs
    data = np.load(vectors)
    base_mb = _rss_now_mb()
    up_to = len(data) if method == "exact" else 0
    start = time.perf_counter()
    projection.knn_graph(data[:2000], 15, exact_up_to=min(up_to, 2000), seed=SEED)
    first = time.perf_counter() - start
    start = time.perf_counter()
    graph = projection.knn_graph(data, graph_k(len(data)), exact_up_to=up_to, seed=SEED)
    seconds = time.perf_counter() - start
    np.savez(out, indices=graph.indices, distances=graph.distances)
    print(json.dumps({
        "seconds": round(seconds, 2), "first_small_call_s": round(first, 2),
        "rss_with_vectors_mb": round(base_mb), "peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }))  # fmt: skip


def _rss_now_mb() -> float:
    """This process's resident memory now (its peak so far counts np.load's read buffer)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(
    vectors: Path, method: str, tag: str, jobs: int = 1
) -> tuple[dict, np.lib.npyio.NpzFile]:
    out = vectors.parent / f"graph-{tag}.npz"
    args = [
        sys.executable,
        "-m",
        "bench.neighbours",
        "graph",
        str(vectors),
        method,
        str(jobs),
        str(out),
    ]
    result = run_child(args)
    if result.returncode != 0:
        raise SystemExit(f"{method} graph failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1]), np.load(out)


def recall(approx: np.ndarray, exact: np.ndarray, k: int = RECALL_AT) -> float:
    """Mean share of each row's k exact nearest others among the approximate first k."""
    a, e = approx[:, 1 : k + 1], exact[:, 1 : k + 1]
    hits = (a[:, :, None] == e[:, None, :]).any(axis=2).sum(axis=1)
    return round(float(hits.mean() / k), 4)


def brute_force(vectors: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact nearest k others (indices, cosines, nearest first) of unit `vectors`' `rows`,
    self excluded; 100 rows at a time (400 MB of similarities at 1,000,000 papers)."""
    tops, values = [], []
    for start in range(0, len(rows), 100):
        part = rows[start : start + 100]
        sims = vectors[part] @ vectors.T
        sims[np.arange(len(part)), part] = -np.inf
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1, kind="stable")
        tops.append(np.take_along_axis(top, order, axis=1))
        values.append(np.take_along_axis(sims, tops[-1], axis=1))
    return np.concatenate(tops), np.concatenate(values)


def corpus(real: np.ndarray, papers, n: int, work: Path) -> tuple[Path, np.ndarray]:
    """Real vectors plus synthetic ones to `n`, saved for the children."""
    from bench import synthetic_corpus as sc

    vectors, _, _ = sc.corpus(papers, real, n, SEED)
    path = work / f"vectors-{n}.npy"
    np.save(path, vectors)
    return path, vectors


def real_part(real: np.ndarray, work: Path) -> dict:
    """The real corpus's row."""
    path = work / "vectors-real.npy"
    np.save(path, real)
    runs: dict[str, list] = {"exact": [], "approximate": []}
    graphs = {}
    for i in range(2):
        for method in runs:
            stats, graph = measure(path, method, f"real-{method}-{i}")
            runs[method].append(stats)
            graphs[method, i] = graph["indices"]
    two, graph2 = measure(path, "approximate", "real-2threads", jobs=2)
    again, graph2b = measure(path, "approximate", "real-2threads-b", jobs=2)
    exact = graphs["exact", 0]
    result = {
        "papers": len(real),
        "k": int(exact.shape[1]),
        "runs": runs,
        "exact_s": round(float(np.median([r["seconds"] for r in runs["exact"]])), 2),
        "approximate_s": round(float(np.median([r["seconds"] for r in runs["approximate"]])), 2),
        "recall_at_10": recall(graphs["approximate", 0], exact),
        "deterministic": bool(np.array_equal(graphs["approximate", 0], graphs["approximate", 1])),
        "two_threads": {
            "runs": [two, again],
            "deterministic": bool(np.array_equal(graph2["indices"], graph2b["indices"])),
            "same_as_one_thread": bool(np.array_equal(graph2["indices"], graphs["approximate", 0])),
            "recall_at_10": recall(graph2["indices"], exact),
        },
    }
    result["approximate_over_exact"] = round(result["approximate_s"] / result["exact_s"], 3)
    return result


def synthetic_part(real, papers, n: int, work: Path, *, exact_at_most: int) -> dict:
    path, vectors = corpus(real, papers, n, work)
    n_real = len(real)
    result: dict = {"papers": n, "real": n_real, "synthetic": n - n_real}
    approx_stats, approx = measure(path, "approximate", f"{n}-approximate")
    result["approximate"] = approx_stats
    if n <= exact_at_most:
        exact_stats, exact = measure(path, "exact", f"{n}-exact")
        result["exact"] = exact_stats
        result["approximate_over_exact"] = round(
            approx_stats["seconds"] / exact_stats["seconds"], 3
        )
        result["recall_at_10"] = recall(approx["indices"], exact["indices"])
        return result
    rng = np.random.default_rng(SEED)
    probes = np.sort(rng.choice(n, size=PROBES, replace=False))
    top, sims = brute_force(vectors, probes, RECALL_AT)
    exact = np.concatenate([probes[:, None], top], axis=1)
    result["recall_at_10"] = recall(approx["indices"][probes], exact)
    result["recall_on"] = f"{PROBES} random papers"
    # The exact graph's time at this size, from 100,000's by its n^2 cost (not measured).
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "graph":
        _, _, vectors, method, jobs, out = sys.argv
        child(Path(vectors), method, int(jobs), Path(out))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--exact-at-most", type=int, default=EXACT_AT_MOST)
    args = parser.parse_args()
    require_shared(PAPERLISTS)
    papers, vectors = real_corpus()
    from explorer.vectors import normalise_rows

    real = normalise_rows(vectors).astype(np.float32)
    work = fresh_dir("neighbours")
    real_result = real_part(real, work)
    from explorer.build.projection import EXACT_UP_TO, NNDESCENT

    result = {"exact_up_to": EXACT_UP_TO, "nndescent": NNDESCENT, "real": real_result,
              "synthetic": {}}  # fmt: skip
    for n in (int(s) for s in args.sizes.split(",") if s):
        print(f"{n:,} papers…", flush=True)
        result["synthetic"][str(n)] = synthetic_part(
            real, papers, n, work, exact_at_most=args.exact_at_most
        )
        write_results("neighbours", result)  # what is measured so far survives a later failure
    write_results("neighbours", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
