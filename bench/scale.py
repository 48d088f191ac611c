"""Builds of 100,000 and 1,000,000 papers from the synthetic corpus, and their pages.

    python -m bench.scale [--papers 100000] [--runs 5] [--checks-only | --full-fit]

Embedding a million abstracts would take days here, and these rows are about what comes
after the embeddings, so the corpus is bench/synthetic_corpus.py's (seed 42): the ~23,300
real abstracts of ../shared/data/paperlists plus synthetic papers drawn from their
neighbourhoods to `--papers`, every vector written into the build's embedding cache under
its text's key, so `explorer build` embeds nothing and everything after embedding is real.

1. **The generator's checks** (row 16) against brute force, on 1,000 random synthetic papers:
   the share whose nearest paper is their source or a paper made from the same source, and
   the cosines to the nearest paper and to the nearest real paper; on 1,000 random real
   papers: their nearest-neighbour cosines among real + synthetic.
2. **The build** (rows 11 and 11b) as a user runs it (above 50,000 papers it fits on a
   stratified sample and assigns the rest) in a fresh process: wall seconds, seconds per
   stage, peak RSS, topics, largest leaf and outliers.
3. **Every page's p50** script run on the result (bench.viewer's AppTest method).

`--checks-only` measures the first alone, as scale-N-checks.json (minutes, where a
million-paper build takes hours);
`--full-fit` builds with `--sample-above 0` (every paper fitted: the curve the default
`--sample-above` is chosen from), written as scale-N-full.json.

The real vectors come from bench/work/sample-fit's cache (bench.common.real_corpus).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from bench.common import (
    PAPERLISTS,
    ROOT,
    explorer_cmd,
    fresh_dir,
    real_corpus,
    require_shared,
    run_child,
    timed,
    write_results,
)
from bench.synthetic_corpus import Recipe

CORPUS = "synthetic"  # the name bench.synthetic_corpus.write gives the corpus
SEED = 42
PROBES = 1_000  # papers whose nearest others are found by brute force for the checks


def prepare(cache: Path | None, n: int) -> tuple[Path | None, str, dict]:
    """The corpus as Parquet and its vectors in `cache`'s embedding cache; returns the file,
    the precision to build in and the generator's checks (only these without a cache)."""
    from bench import synthetic_corpus as sc

    papers, vectors = real_corpus()
    together, recipe, sentences = sc.corpus(papers, vectors, n, SEED)
    checks = generator_checks(together, recipe, len(papers))
    if cache is None:
        return None, "", checks
    source, precision = sc.write(cache, papers, sentences, recipe, together)
    return source, precision, checks


def generator_checks(vectors: np.ndarray, recipe: Recipe, n_real: int) -> dict:
    """bench/synthetic_corpus.py's checks on PROBES random synthetic papers of `vectors`
    (real first), and PROBES random real papers' nearest-neighbour cosines among them all."""
    from bench import synthetic_corpus as sc
    from bench.neighbours import brute_force

    real = vectors[:n_real]
    real_sim = brute_force(real, np.arange(n_real), 1)[1][:, 0]
    rng = np.random.default_rng(SEED)
    rows = np.sort(rng.choice(len(recipe), size=min(PROBES, len(recipe)), replace=False))
    top, sims = brute_force(vectors, n_real + rows, 1)
    nearest_real = sc.nearest_real(vectors[n_real + rows], real)
    result = sc.checks(recipe, rows, top[:, 0], sims[:, 0], real_sim, nearest_real)
    reals = np.sort(rng.choice(n_real, size=min(PROBES, n_real), replace=False))
    among = brute_force(vectors, reals, 1)[1][:, 0]
    result["nn_similarity"]["real (among real + synthetic)"] = sc.quantiles(among)
    # Were synthetic papers drawn as real ones are, a synthetic paper's nearest would be real
    # as often as a random other paper is.
    result["nearest_is_real_if_alike"] = round(n_real / (len(vectors) - 1), 4)
    result["on"] = f"{len(rows)} random synthetic papers"
    return result


def build(cache: Path, source: Path, precision: str, *, full_fit: bool = False) -> dict:
    """`explorer build` of the prepared corpus in a fresh process, as a user runs it (or with
    every paper fitted): wall seconds, peak RSS, seconds per stage and what it found."""
    args = explorer_cmd("--cache-dir", str(cache), "build", str(source), "--name", CORPUS,
                        "--embedding-precision", precision, "--no-progress")  # fmt: skip
    if full_fit:
        args += ["--sample-above", "0"]
    result = run_child(timed(args), timeout=4 * 3600)
    if result.returncode != 0:
        raise SystemExit(f"build failed:\n{result.stderr[-3000:]}")
    from explorer import artifacts

    manifest = artifacts.open_run(cache, CORPUS, verify=False).manifest
    counts = manifest.counts
    return {
        "wall_s": result.wall_s,
        "peak_rss_mb": result.peak_rss_mb,
        "stages": manifest.timings,
        "counts": {
            "papers": counts.papers, "topics": counts.topics, "outliers": counts.outliers,
            "outlier_share": counts.outlier_share, "embedded_new": counts.embedded_new,
            "subtopics": counts.levels.subtopics, "areas": counts.levels.areas,
            "largest_leaf_share": counts.levels.largest_leaf_share,
            "sample": counts.sample.to_json() if counts.sample else None,
        },
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checks-only", action="store_true", help="the generator's checks")
    parser.add_argument("--full-fit", action="store_true", help="fit every paper, no sample")
    args = parser.parse_args()
    require_shared(PAPERLISTS)
    if args.checks_only:
        checks = prepare(None, args.papers)[2]
        write_results(f"scale-{args.papers}-checks", {"papers": args.papers, "generator": checks})
        return
    from bench.viewer import page_times

    name = f"scale-{args.papers}" + ("-full" if args.full_fit else "")
    cache = fresh_dir(name) / "cache"
    cache.mkdir()
    (cache / "numba").symlink_to((ROOT / "cache" / "numba").resolve(), target_is_directory=True)
    # In a process of its own: a million papers' records and vectors (several GB) are gone
    # before the build starts, so the machine's memory is the build's.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        source, precision, checks = pool.submit(prepare, cache, args.papers).result()
    result = {"papers": args.papers, "full_fit": args.full_fit, "generator": checks}
    write_results(name, result)  # the checks survive a failed build
    result["build"] = build(cache, source, precision, full_fit=args.full_fit)
    if result["build"]["counts"]["embedded_new"]:
        raise SystemExit("the build embedded texts: the prepared cache did not match")
    write_results(name, result)
    result["page_s"] = page_times(cache, CORPUS, args.runs)
    write_results(name, result)
    print(json.dumps(result, indent=1))
    shutil.rmtree(cache.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
