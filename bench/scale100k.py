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
    WORK,
    explorer_cmd,
    fresh_dir,
    require_shared,
    run_child,
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
    import pandas as pd

    from explorer.build.embed import (
        DEFAULT_MODEL,
        EmbeddingCache,
        embed_texts,
        resolve_precision,
        text_key,
        weights_fingerprint,
    )
    from explorer.build.pipeline import prepare_environment
    from explorer.build.sources import ReadOptions, read_inputs

    real_cache = WORK / "sample-fit"
    prepare_environment(real_cache)
    papers = read_inputs((str(PAPERLISTS),), ReadOptions()).papers
    precision = resolve_precision("auto")
    vectors, _ = embed_texts([p.text for p in papers], cache_root=real_cache,
                             precision=precision, model_name=DEFAULT_MODEL)  # fmt: skip
    records, moved = perturbed_corpus(papers, vectors, n)
    source = cache.parent / f"{CORPUS}.parquet"
    pd.DataFrame(records).to_parquet(source, index=False)
    # The keys of the texts as the build will read them from that file.
    texts = [p.text for p in read_inputs((str(source),), ReadOptions()).papers]
    if len(texts) != n:
        raise SystemExit(f"the perturbed corpus reads as {len(texts)} papers, not {n}")
    store = EmbeddingCache(cache, DEFAULT_MODEL, weights=weights_fingerprint(DEFAULT_MODEL),
                           precision=precision)  # fmt: skip
    store.save([text_key(t) for t in texts], moved)
    return source, precision


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
