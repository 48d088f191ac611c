"""Fitting on a sample against fitting every paper, on the real abstracts of
../shared/data/paperlists (about 23,400), where both run on this machine.

    python -m bench.sample_fit [--sizes 5000,10000,20000,22000,23000]

Every fit is made as `explorer build` makes it: UMAP 5-D, HDBSCAN, outliers joined to their
nearest topic, then the levels (topics over 5% of the corpus split into subtopics). Papers
are compared at two levels:

- **leaf** (the issue's measure): a paper's subtopic where its topic is split, else its topic;
  the finest level the dashboard shows.
- **topic**: the partition alone, before the levels. Its ARI is dominated by the largest
  topic (ARI counts pairs, and a topic of 2,600 papers holds 55% of the same-topic pairs),
  so it says mostly whether two fits agree on that one topic; the leaf level weighs the
  hundred others.

What is compared:

- **Full fits** with seeds 42 to 49: how much a full fit agrees with another full fit, over
  all 28 pairs (their mean ARI is the target). One reference alone misleads: a full fit
  can sit apart from the others (seeds 42 and 44 split the largest topic, of about 2,600
  papers, that the other six keep whole, and agree with them at a topic-level ARI of
  0.62-0.64).
- **Sample fits:** for each size, a stratified sample drawn and fitted with seeds 42 to 47,
  every other paper assigned as a build assigns it (`assign`: the topic its 15 most similar
  sampled papers vote for, the nearest subtopic); each compared with every full fit. The
  two largest sizes, 22,000 and 23,000 (94% and 99% of the papers), are probes, larger than
  the build's default sample (`SAMPLE_SIZE`) and not judged: they tell how far the fit moves
  when only a few papers are left out, beyond what a reseed moves it (their smallest topic is
  scaled too: 36 and 38 against the corpus's 38).
- **As good as a reseed:** each full fit cut down to the sample and its other papers
  assigned by the same rules, compared with the seven other full fits (each fit's mean too).
  A sample fit that found, among the sampled papers, exactly the topics of a full fit with
  its own seed would score this on average; it is the level a sample fit reaches when the
  only loss is the assignment. The cut fit is also compared with the full fit it was cut
  from: what the assignment alone loses.

Measured the same way for all: the adjusted Rand index of the assignments, and the share of
papers whose leaf (topic) matches once leaves are paired one to one (Hungarian, on overlap).
The vectors come from the embedding cache (bench/engines.py's local run fills it; what it
lacks is embedded here first).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bench.common import PAPERLISTS, WORK, require_shared, reuse_embeddings, write_results


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
LEVELS = ("leaf", "topic")  # the first is the measure, the one judged


@dataclass(frozen=True)
class Fit:
    """Every paper's topic and subtopic ("" where its topic is not split)."""

    topics: np.ndarray
    subtopics: np.ndarray

    @cached_property
    def leaves(self) -> np.ndarray:
        """Each paper's leaf as an integer code, derived once: a fit is compared many times."""
        leaves = np.where(self.subtopics != "", self.subtopics, self.topics.astype(str))
        return np.unique(leaves, return_inverse=True)[1]

    def at(self, level: str) -> np.ndarray:
        """Each paper's group at `level`, as integer codes."""
        return self.topics if level == "topic" else self.leaves

    def count(self, level: str) -> int:
        """How many topics (leaves) the fit has, outliers not counted."""
        groups = self.at(level)
        return len(set(groups[self.topics != -1].tolist()))


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


def agreement(a: np.ndarray, b: np.ndarray) -> dict:
    from sklearn.metrics import adjusted_rand_score

    return {
        "ari": round(float(adjusted_rand_score(a, b)), 4),
        "matched_share": round(matched_share(a, b), 4),
    }


def compare(a: Fit, b: Fit) -> dict[str, dict]:
    """Agreement of two fits at each level."""
    return {level: agreement(a.at(level), b.at(level)) for level in LEVELS}


def _by_level(pairs: list[dict[str, dict]]) -> dict[str, dict]:
    """`_summary` of compared pairs at each level."""
    return {level: _summary([p[level] for p in pairs]) for level in LEVELS}


def _mean_by_level(pairs: list[dict[str, dict]]) -> dict[str, float]:
    """Mean ARI of compared pairs at each level."""
    return {level: round(float(np.mean([p[level]["ari"] for p in pairs])), 4) for level in LEVELS}


def _each(full: dict[int, Fit], pairs: dict[tuple[int, int], dict], seed: int) -> dict:
    """One full fit's mean ARI with the other full fits (from the compared `pairs`), and its
    largest topic's size: at the topic level, the fits that sit apart are the ones that
    split the largest topic."""
    own = full[seed].topics
    others = [compared for pair, compared in pairs.items() if seed in pair]
    return {
        "mean_ari_to_others": _mean_by_level(others),
        "largest_topic": int(np.bincount(own[own != -1]).max()),
    }


class Corpus:
    """The real abstracts, their vectors, and the fits of any rows of them, timed."""

    def __init__(self, cache) -> None:
        from explorer.build.embed import embed_texts
        from explorer.build.models import Embedder, resolve_precision
        from explorer.build.sources import ReadOptions, read_inputs
        from explorer.vectors import normalise_rows

        self.cache = cache
        self.papers = read_inputs((str(PAPERLISTS),), ReadOptions()).papers
        embedder = Embedder.of(cache_root=cache, precision=resolve_precision("auto"))
        self.vectors, _ = embed_texts([p.text for p in self.papers], embedder)
        self.unit = normalise_rows(self.vectors)
        self.seconds: dict[str, float] = {}

    def fit(self, rows: np.ndarray, seed: int, name: str) -> Fit:
        """Topics and levels of the papers `rows`, fitted by the build's own sequence."""
        from explorer.build.config import BuildConfig
        from explorer.build.sample import sample_params
        from explorer.build.topic_stages import fit_rows

        start = time.perf_counter()
        params = sample_params(len(self.papers), len(rows), min_topic_size=None, seed=seed)
        config = BuildConfig(name="sample-fit", inputs=(str(PAPERLISTS),))
        fitted = fit_rows(self.vectors[rows], params, self.cache, config)
        self.seconds[name] = round(time.perf_counter() - start, 1)
        return Fit(fitted.partition.labels, fitted.levels.subtopic.astype(str))

    def extended(self, rows: np.ndarray, fitted: Fit) -> Fit:
        """Every paper's topic and subtopic: the sampled papers' as fitted, the others'
        assigned to them."""
        from explorer.build.assign import Reference, assign_rows

        topics = np.empty(len(self.papers), dtype=np.int64)
        subtopics = np.empty(len(self.papers), dtype=object)
        topics[rows], subtopics[rows] = fitted.topics, fitted.subtopics
        rest = np.setdiff1d(np.arange(len(self.papers)), rows)
        ref = Reference(self.unit[rows], fitted.topics, fitted.subtopics, np.zeros((len(rows), 2)))
        topics[rest], subtopics[rest], _ = assign_rows(ref, self.unit[rest])
        return Fit(topics, subtopics.astype(str))


def _cut(fitted: Fit, rows: np.ndarray) -> Fit:
    return Fit(fitted.topics[rows], fitted.subtopics[rows])


def _full_fits(corpus: Corpus) -> tuple[dict[int, Fit], dict]:
    """Every paper fitted with each seed, and how the full fits agree with each other."""
    everything = np.arange(len(corpus.papers))
    full = {seed: corpus.fit(everything, seed, f"full seed {seed}") for seed in SEEDS}
    pairs = {(a, b): compare(full[a], full[b]) for i, a in enumerate(SEEDS) for b in SEEDS[i + 1 :]}
    return full, {
        "papers": len(corpus.papers),
        "levels": list(LEVELS),
        "full_fits": {"seeds": list(SEEDS), **_by_level(list(pairs.values()))},
        "full_counts": {level: sorted({f.count(level) for f in full.values()}) for level in LEVELS},
        "full_each": {str(s): _each(full, pairs, s) for s in SEEDS},
        "samples": {},
    }


def _samples_of(corpus: Corpus, full: dict[int, Fit], size: int) -> dict:
    """Samples of `size` fitted with each seed, the rest assigned, against the full fits;
    and the full fits cut to the same samples (as good as a reseed)."""
    from explorer.build.sample import SAMPLE_SIZE, stratified_sample

    compared, counts, itself = [], {level: [] for level in LEVELS}, []
    reseed: dict[int, list[dict]] = {s: [] for s in SEEDS}
    for seed in SAMPLE_SEEDS:
        rows = stratified_sample(corpus.papers, size, seed=seed)
        fitted = corpus.fit(rows, seed, f"sample {size} seed {seed}")
        start = time.perf_counter()
        whole = corpus.extended(rows, fitted)
        corpus.seconds[f"assign {size} seed {seed}"] = round(time.perf_counter() - start, 1)
        compared += [compare(whole, f) for f in full.values()]
        for level in LEVELS:
            counts[level].append(fitted.count(level))
        start = time.perf_counter()
        for own, cut_fit in ((s, corpus.extended(rows, _cut(full[s], rows))) for s in SEEDS):
            reseed[own] += [compare(cut_fit, full[o]) for o in SEEDS if o != own]
            itself.append(compare(cut_fit, full[own]))
        corpus.seconds[f"cut full fits {size} seed {seed}"] = round(time.perf_counter() - start, 1)
    return {
        "seeds": list(SAMPLE_SEEDS), "probe": size > SAMPLE_SIZE,
        **_by_level(compared), "counts": counts,
        "as_good_as_a_reseed": _by_level([p for by_fit in reseed.values() for p in by_fit]),
        "as_good_as_a_reseed_by_fit": {str(s): _mean_by_level(reseed[s]) for s in SEEDS},
        "cut_vs_own_fit": _by_level(itself),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="5000,10000,20000,22000,23000")
    args = parser.parse_args()
    require_shared(PAPERLISTS)
    from explorer.build.pipeline import prepare_environment

    cache = WORK / "sample-fit"
    cache.mkdir(parents=True, exist_ok=True)
    prepare_environment(cache)
    reuse_embeddings(cache)
    corpus = Corpus(cache)
    full, result = _full_fits(corpus)
    for size in (int(s) for s in args.sizes.split(",")):
        result["samples"][str(size)] = _samples_of(corpus, full, size)
    result["seconds"] = corpus.seconds
    write_results("sample-fit", result)
    print(result)


if __name__ == "__main__":
    main()
