"""Per-topic stability: does a topic come back when the topic stage is refitted with
another seed, or does it dissolve?

`explorer build --stability K` refits the seed-dependent part of the topic stage (the
5-D UMAP reduction, HDBSCAN, the outlier assignment) with K more seeds, reusing the
embeddings and neighbour graph. Topics of the run are matched to each refit's topics by
member Jaccard with a Hungarian assignment (one partner at most); a topic's stability is
its mean Jaccard with its partner over the refits, 0 for a refit where it has none. The
corpus gets the mean adjusted Rand index over every pair of fits.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from explorer.artifacts import OUTLIER


def refit_labels(
    embeddings: np.ndarray, graph, params, seed: int, cache_root, clusterer=None
) -> np.ndarray:
    """Topic labels of the same fit with another seed (no keyword representation: only the
    partition is compared). The reduction is cached per seed like the run's own; the
    clusterer is the run's (None: HDBSCAN)."""
    from dataclasses import replace

    from explorer.build.topics import partition

    return partition(embeddings, graph, replace(params, seed=seed), cache_root, clusterer).labels


def jaccard_matrix(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Member Jaccard of every topic of labelling `a` with every topic of `b` (outliers are
    no topic). Returns (matrix, a's topic ids, b's topic ids)."""
    ta = np.unique(a[a != OUTLIER])
    tb = np.unique(b[b != OUTLIER])
    ia, ib = np.searchsorted(ta, a), np.searchsorted(tb, b)
    both = (a != OUTLIER) & (b != OUTLIER)
    inter = np.zeros((len(ta), len(tb)))
    np.add.at(inter, (ia[both], ib[both]), 1)
    size_a = np.array([(a == t).sum() for t in ta], dtype=float)
    size_b = np.array([(b == t).sum() for t in tb], dtype=float)
    union = size_a[:, None] + size_b[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0), ta, tb


def partner_jaccard(base: np.ndarray, other: np.ndarray) -> dict[int, float]:
    """Each base topic's Jaccard with its partner in `other` under the Hungarian
    assignment that maximises the total Jaccard; 0 where it has none."""
    from scipy.optimize import linear_sum_assignment

    matrix, ta, _ = jaccard_matrix(base, other)
    out = dict.fromkeys(ta.tolist(), 0.0)
    if matrix.size:
        rows, cols = linear_sum_assignment(matrix, maximize=True)
        for r, c in zip(rows, cols, strict=True):
            out[int(ta[r])] = float(matrix[r, c])
    return out


def topic_stability(base: np.ndarray, refits: list[np.ndarray]) -> dict[int, float]:
    """Each base topic's mean partner Jaccard over the refits."""
    scores = [partner_jaccard(base, other) for other in refits]
    topics = np.unique(base[base != OUTLIER]).tolist()
    return {t: float(np.mean([s.get(t, 0.0) for s in scores])) if scores else 1.0 for t in topics}


def mean_ari(labellings: list[np.ndarray]) -> float:
    """Mean adjusted Rand index over every pair of labellings (outliers count as a class)."""
    from sklearn.metrics import adjusted_rand_score

    pairs = list(combinations(labellings, 2))
    if not pairs:
        return 1.0
    return float(np.mean([adjusted_rand_score(a, b) for a, b in pairs]))
