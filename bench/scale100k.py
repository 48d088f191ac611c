"""A 100,000-paper build and its served pages, from the real abstracts' cached vectors.

    python -m bench.scale100k [--papers 100000] [--runs 5]

Embedding 100,000 abstracts would take hours here, and the row is about what comes after
the embeddings, so the corpus is the ~23,400 real abstracts of ../shared/data/paperlists,
perturbed deterministically:

- copy 0 of every paper is the paper itself; copy c >= 1 has the id `<id>~c`, the title
  `<title> (copy c)` and the abstract followed by ` [copy c]`, until there are `--papers`;
- copy c's vector is the real one plus Gaussian noise (standard deviation NOISE per
  dimension, seeded by c), renormalised: cosine ~0.98 with the original, so copies sit
  near their paper without coinciding with it;
- those vectors are written into the run's embedding cache under the copies' own text
  keys, so `explorer build` embeds nothing and everything after embedding is real.

The build runs as a user runs it (above 50,000 papers it fits on a stratified sample and
assigns the rest in parallel) in a fresh process: wall seconds, seconds per stage and peak
RSS. Then every page's p50 script run (bench.viewer's AppTest method) on the result.
The real vectors come from bench/work/sample-fit's cache (row 10 fills it; what it lacks
is embedded first).
"""

from __future__ import annotations

import argparse
import json
import shutil

import numpy as np

from bench.common import (
    PAPERLISTS,
    ROOT,
    explorer_cmd,
    fresh_dir,
    real_corpus,
    require_shared,
    run_child,
    seed_embedding_cache,
    timed,
    write_results,
)

NOISE = 0.01  # per dimension: a noise vector of norm ~0.2 on a unit vector (384 dims)
CORPUS = "scale100k"


def perturbed_corpus(papers, vectors: np.ndarray, n: int) -> tuple[list[dict], np.ndarray]:
    """`n` records (copies of `papers`, as documented above) and their unit vectors."""
    from explorer.vectors import normalise_rows

    rows, out = [], []
    copies = -(-n // len(papers))
    for c in range(copies):
        noise = np.random.default_rng(c).normal(scale=NOISE, size=vectors.shape)
        moved = vectors if c == 0 else vectors + noise.astype(np.float32)
        out.append(normalise_rows(moved))
        suffix = "" if c == 0 else f" [copy {c}]"
        for p in papers:
            rows.append({
                "paper_id": p.paper_id if c == 0 else f"{p.paper_id}~{c}",
                "title": p.title if c == 0 else f"{p.title} (copy {c})",
                "abstract": p.abstract + suffix,
                "authors": p.authors, "venue": p.venue, "year": p.year, "status": p.status,
            })  # fmt: skip
    return rows[:n], np.concatenate(out)[:n].astype(np.float32)


def prepare(cache, n: int):
    """The perturbed corpus as Parquet, and its vectors in `cache`'s embedding cache."""
    papers, vectors = real_corpus()
    records, moved = perturbed_corpus(papers, vectors, n)
    return seed_embedding_cache(cache, records, moved, CORPUS)


def build(cache, source, precision: str) -> dict:
    args = explorer_cmd("--cache-dir", str(cache), "build", str(source), "--name", CORPUS,
                        "--embedding-precision", precision, "--no-progress")  # fmt: skip
    result = run_child(timed(args))
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
            "embedded_new": counts.embedded_new,
            "sample": counts.sample.to_json() if counts.sample else None,
        },
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    require_shared(PAPERLISTS)
    from bench.viewer import page_times

    cache = fresh_dir("scale100k") / "cache"
    cache.mkdir()
    (cache / "numba").symlink_to((ROOT / "cache" / "numba").resolve(), target_is_directory=True)
    source, precision = prepare(cache, args.papers)
    result = {"papers": args.papers, "noise": NOISE, "build": build(cache, source, precision)}
    if result["build"]["counts"]["embedded_new"]:
        raise SystemExit("the build embedded texts: the prepared cache did not match")
    result["page_s"] = page_times(cache, CORPUS, args.runs)
    write_results("scale100k", result)
    print(json.dumps(result, indent=1))
    shutil.rmtree(cache.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
