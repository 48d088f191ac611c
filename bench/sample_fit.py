"""Fitting on a sample against fitting every paper, on the real abstracts of
../shared/data/paperlists (about 23,400), where both run on this machine.

    python -m bench.sample_fit [--sizes 5000,10000,20000]

Topics are compared at the topic level (the partition: UMAP 5-D, HDBSCAN, outliers joined
to their nearest topic), as `explorer build` makes it:

- **Full fits** with seeds 42 to 49: how much a full fit agrees with another full fit, over
  all 28 pairs (their mean ARI is the target). One reference alone misleads: a full fit
  can sit apart from the others (seeds 42 and 44 split the largest topic, of about 2,600
  papers, that the other six keep whole, and agree with them at a mean ARI of 0.62-0.64).
- **Sample fits:** for each size, a stratified sample drawn and fitted with seeds 42 to 47,
  every other paper assigned as a build assigns it (`assign`: a vote of its 15 most similar
  sampled papers); each compared with every full fit.
- **As good as a reseed:** each full fit cut down to the sample and its other papers
  assigned by the same vote, compared with the seven other full fits (each fit's mean too).
  A sample fit that found, among the sampled papers, exactly the topics of a full fit with
  its own seed would score this on average; it is the level a sample fit reaches when the
  only loss is the vote. The cut fit is also compared with the full fit it was cut from:
  what the vote alone loses.

Measured the same way for all: the adjusted Rand index of the topic assignments, and the
share of papers whose topic matches once topics are paired one to one (Hungarian, on
overlap). The vectors come from the embedding cache (bench/engines.py's local run fills it;
what it lacks is embedded here first).
"""

from __future__ import annotations

import argparse
import shutil
import time

import numpy as np

from bench.common import PAPERLISTS, WORK, require_shared, write_results


def matched_share(a: np.ndarray, b: np.ndarray) -> float:
    """Share of rows whose labels agree once a's and b's labels are paired one to one by
    overlap (Hungarian); outliers count as a label of their own."""
    import pandas as pd
    from scipy.optimize import linear_sum_assignment

    table = pd.crosstab(a, b)
    rows, cols = linear_sum_assignment(-table.to_numpy())
    return float(table.to_numpy()[rows, cols].sum() / len(a))


SEEDS = tuple(range(42, 50))  # the full fits
SAMPLE_SEEDS = tuple(range(42, 48))  # each sample is drawn and fitted with these seeds


def _summary(pairs: list[dict]) -> dict:
    """Mean, median, min and max ARI and the mean matched share over compared pairs."""
    ari = [p["ari"] for p in pairs]
    return {
        "pairs": len(pairs),
        "mean_ari": round(float(np.mean(ari)), 4),
        "median_ari": round(float(np.median(ari)), 4),
        "min_ari": round(float(np.min(ari)), 4),
        "max_ari": round(float(np.max(ari)), 4),
        "mean_matched_share": round(float(np.mean([p["matched_share"] for p in pairs])), 4),
    }


def _each(full: dict[int, np.ndarray], seed: int) -> dict:
    """One full fit's mean ARI with the other full fits, and its largest topic's size: the
    fits that sit apart are the ones that split the largest topic."""
    from sklearn.metrics import adjusted_rand_score

    own = full[seed]
    others = [adjusted_rand_score(own, f) for s, f in full.items() if s != seed]
    return {
        "mean_ari_to_others": round(float(np.mean(others)), 4),
        "largest_topic": int(np.bincount(own[own != -1]).max()),
    }


def agreement(a: np.ndarray, b: np.ndarray) -> dict:
    from sklearn.metrics import adjusted_rand_score

    return {
        "ari": round(float(adjusted_rand_score(a, b)), 4),
        "matched_share": round(matched_share(a, b), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="5000,10000,20000")
    args = parser.parse_args()
    require_shared(PAPERLISTS)
    from explorer.build.assign import Reference, assign_rows
    from explorer.build.embed import DEFAULT_MODEL, embed_texts, resolve_precision
    from explorer.build.pipeline import prepare_environment
    from explorer.build.projection import knn_graph
    from explorer.build.sample import sample_params, stratified_sample
    from explorer.build.sources import ReadOptions, read_inputs
    from explorer.build.topics import partition
    from explorer.vectors import normalise_rows

    cache = WORK / "sample-fit"
    cache.mkdir(parents=True, exist_ok=True)
    prepare_environment(cache)
    if (WORK / "engines-local" / "embeddings").is_dir():  # content-addressed: reuse
        shutil.copytree(WORK / "engines-local" / "embeddings", cache / "embeddings",
                        dirs_exist_ok=True)  # fmt: skip
    papers = read_inputs((str(PAPERLISTS),), ReadOptions()).papers
    vectors, _ = embed_texts(
        [p.text for p in papers], cache_root=cache, precision=resolve_precision("auto"),
        model_name=DEFAULT_MODEL,
    )  # fmt: skip
    unit = normalise_rows(vectors)
    seconds: dict[str, float] = {}

    def fit(rows: np.ndarray, seed: int, name: str):
        start = time.perf_counter()
        params = sample_params(len(papers), len(rows), min_topic_size=None, seed=seed)
        graph = knn_graph(vectors[rows], params.n_neighbors)
        part = partition(vectors[rows], graph, params, cache)
        seconds[name] = round(time.perf_counter() - start, 1)
        return part

    def extended(rows: np.ndarray, fitted: np.ndarray) -> np.ndarray:
        """Every paper's topic: the sampled papers' as fitted, the others' by the vote."""
        labels = np.empty(len(papers), dtype=np.int64)
        labels[rows] = fitted
        rest = np.setdiff1d(np.arange(len(papers)), rows)
        none = np.array([""] * len(rows), dtype=object)
        ref = Reference(unit[rows], fitted, none, np.zeros((len(rows), 2)))
        labels[rest] = assign_rows(ref, unit[rest])[0]
        return labels

    everything = np.arange(len(papers))
    full = {seed: fit(everything, seed, f"full seed {seed}").labels for seed in SEEDS}
    pairs = [agreement(full[a], full[b]) for i, a in enumerate(SEEDS) for b in SEEDS[i + 1 :]]
    result = {
        "papers": len(papers),
        "full_fits": {"seeds": list(SEEDS), **_summary(pairs)},
        "full_topics": sorted({int(len(set(f.tolist()) - {-1})) for f in full.values()}),
        "full_each": {str(s): _each(full, s) for s in SEEDS},
        "samples": {},
    }
    for size in (int(s) for s in args.sizes.split(",")):
        compared, topics, itself = [], [], []
        reseed: dict[int, list[dict]] = {s: [] for s in SEEDS}
        for seed in SAMPLE_SEEDS:
            rows = stratified_sample(papers, size, seed=seed)
            part = fit(rows, seed, f"sample {size} seed {seed}")
            start = time.perf_counter()
            labels = extended(rows, part.labels)
            seconds[f"assign {size} seed {seed}"] = round(time.perf_counter() - start, 1)
            compared += [agreement(labels, f) for f in full.values()]
            topics.append(int(len(set(part.labels.tolist()) - {-1})))
            start = time.perf_counter()
            for own, cut in ((s, extended(rows, full[s][rows])) for s in SEEDS):
                reseed[own] += [agreement(cut, full[o]) for o in SEEDS if o != own]
                itself.append(agreement(cut, full[own]))
            seconds[f"cut full fits {size} seed {seed}"] = round(time.perf_counter() - start, 1)
        result["samples"][str(size)] = {
            "seeds": list(SAMPLE_SEEDS), **_summary(compared), "topics": topics,
            "as_good_as_a_reseed": _summary([p for by_fit in reseed.values() for p in by_fit]),
            "as_good_as_a_reseed_by_fit": {
                str(s): round(float(np.mean([p["ari"] for p in reseed[s]])), 4) for s in SEEDS
            },
            "cut_vs_own_fit": _summary(itself),
        }  # fmt: skip
    result["seconds"] = seconds
    write_results("sample-fit", result)
    print(result)


if __name__ == "__main__":
    main()
