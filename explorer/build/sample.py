"""Fit on a sample, assign the rest: how a build crosses the single-fit wall.

UMAP and HDBSCAN over every paper do not scale to millions on one node. Above
`SAMPLE_ABOVE` papers (`--sample-above`, 0: never) a build fits its topics, levels, labels
and 2-D map on a stratified sample of `SAMPLE_SIZE` papers (`--sample-size`), then assigns
every other paper by the rules `--keep-topics` uses (explorer/build/assign.py: the topic its
most similar sampled papers vote for, the nearest subtopic, a place among its most similar
sampled papers), in parallel batches: a process pool, or Ray tasks under `--engine ray`.

The sample is stratified by (venue, year), each stratum getting its share of the sample
(largest remainders), drawn with the build's seed: the same inputs give the same sample.
Whether and how a build sampled is part of its run id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from explorer.build import settings
from explorer.build.corpus import Paper
from explorer.build.topics import TopicParams, default_params

SAMPLE_ABOVE = settings.default("sample_above")
SAMPLE_SIZE = settings.default("sample_size")
# A sample fit's default smallest topic is at least this share of the sample (8 of 20,000
# papers, what a 100,000-paper corpus's grain scales to). The corpus's own grain (at most 40
# papers) scaled to 20,000 of a million is 0.8, which HDBSCAN's least clamped to 2, where its
# clusters are noise: on 20,000 papers of the million-paper synthetic corpus, 4,932 topics
# of a median 2 papers and 22.7% outliers at 2, against 133 topics and 1.3% outliers at 8
# (docs/scale.md). A --min-topic-size the user gives is scaled without it.
SAMPLE_MIN_TOPIC_SHARE = 0.0004


def applies(n_papers: int, above: int, size: int) -> bool:
    """Whether a corpus of `n_papers` is fitted on a sample."""
    return 0 < above < n_papers and size < n_papers


def sample_params(
    n_papers: int, size: int, *, min_topic_size: int | None, seed: int
) -> TopicParams:
    """The fit's parameters on a sample of `size` of `n_papers`: the smallest topic is the
    whole corpus's (given or size-aware) scaled to the sample, so the sample yields topics
    of the grain the full fit would (HDBSCAN's sizes count points, and the sample has
    fewer), the default never below SAMPLE_MIN_TOPIC_SHARE of the sample; UMAP's
    neighbourhood stays as it is."""
    whole = default_params(n_papers, min_topic_size=min_topic_size, seed=seed)
    scaled = round(whole.min_topic_size * size / n_papers)
    floor = round(SAMPLE_MIN_TOPIC_SHARE * size) if min_topic_size is None else 0
    smallest = max(2, scaled, floor)
    return default_params(size, min_topic_size=smallest, seed=seed)


def stratified_sample(papers: Sequence[Paper], size: int, seed: int) -> np.ndarray:
    """Sorted indices of `size` papers, each (venue, year) stratum represented in
    proportion to its size (largest remainders), drawn at random with `seed`."""
    strata: dict[tuple[str, object], list[int]] = defaultdict(list)
    for i, paper in enumerate(papers):
        strata[(paper.venue, paper.year)].append(i)
    keys = sorted(strata, key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    quotas = np.array([len(strata[k]) for k in keys], dtype=float) * size / len(papers)
    counts = np.floor(quotas).astype(int)
    order = np.argsort(-(quotas - counts), kind="stable")
    counts[order[: size - counts.sum()]] += 1
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.asarray(strata[k]), size=c, replace=False)
        for k, c in zip(keys, counts, strict=True)
        if c
    ]
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=int)
