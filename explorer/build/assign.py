"""Placing papers into topics and a map that were fitted without them, without refitting.

A refit moves topics: UMAP and HDBSCAN regroup a corpus when one abstract joins it, so a
curated topic may not be found again. These functions keep a fitted model and add papers
to it, by the rules the fit itself uses:

- **Topic:** the most cosine-similar topic centroid when the paper is at least as close to
  it as the fit's outlier threshold (the rule `topics.assign_outliers` applies to noise),
  else the outliers.
- **Subtopic:** in a split topic, the most similar subtopic centroid (the rule `levels`
  applies to a split's stragglers).
- **Map place:** the similarity-weighted mean of the places of its `PLACE_NEIGHBOURS` most
  similar reference papers of the same topic, so it lands inside its topic's cloud.

Everything works on unit-length float32 rows, in batches of `BATCH` rows so memory stays
bounded however many papers are added.
"""

from __future__ import annotations

import numpy as np

from explorer.artifacts import OUTLIER
from explorer.vectors import centroids

PLACE_NEIGHBOURS = 10
BATCH = 4096


def nearest_topics(
    unit: np.ndarray, ref_unit: np.ndarray, ref_labels: np.ndarray, threshold: float
) -> np.ndarray:
    """Each row's topic among the reference papers' topics, or OUTLIER when its best
    centroid is less similar than `threshold`."""
    topics = np.array(sorted(set(ref_labels.tolist()) - {OUTLIER}), dtype=np.int64)
    out = np.full(len(unit), OUTLIER, dtype=np.int64)
    if len(topics) == 0 or len(unit) == 0:
        return out
    central = centroids(ref_unit, ref_labels, topics).astype(np.float32)
    for start in range(0, len(unit), BATCH):
        sims = unit[start : start + BATCH] @ central.T
        best = sims.argmax(axis=1)
        close = sims[np.arange(len(best)), best] >= threshold
        out[start : start + BATCH] = np.where(close, topics[best], OUTLIER)
    return out


def nearest_subtopics(
    unit: np.ndarray,
    labels: np.ndarray,
    ref_unit: np.ndarray,
    ref_labels: np.ndarray,
    ref_subtopics: np.ndarray,
) -> np.ndarray:
    """Each row's subtopic id within its topic ("" where the topic is not split)."""
    out = np.full(len(unit), "", dtype=object)
    for topic in sorted(set(labels.tolist()) - {OUTLIER}):
        mine = np.flatnonzero(labels == topic)
        ref = ref_labels == topic
        subs = np.array(sorted(set(ref_subtopics[ref].tolist()) - {""}), dtype=object)
        if len(subs) == 0:
            continue
        central = centroids(ref_unit[ref], ref_subtopics[ref], subs).astype(np.float32)
        out[mine] = subs[(unit[mine] @ central.T).argmax(axis=1)]
    return out


def place(
    unit: np.ndarray,
    labels: np.ndarray,
    ref_unit: np.ndarray,
    ref_labels: np.ndarray,
    ref_coords: np.ndarray,
    k: int = PLACE_NEIGHBOURS,
) -> np.ndarray:
    """Map coordinates for each row, from the reference papers of its own topic (every
    reference paper when its topic has none)."""
    out = np.zeros((len(unit), ref_coords.shape[1]), dtype=np.float32)
    for topic in sorted(set(labels.tolist())):
        mine = np.flatnonzero(labels == topic)
        pool = np.flatnonzero(ref_labels == topic)
        if len(pool) == 0:
            pool = np.arange(len(ref_labels))
        for start in range(0, len(mine), BATCH):
            rows = mine[start : start + BATCH]
            out[rows] = _weighted_places(unit[rows], ref_unit[pool], ref_coords[pool], k)
    return out


def _weighted_places(
    unit: np.ndarray, ref_unit: np.ndarray, ref_coords: np.ndarray, k: int
) -> np.ndarray:
    sims = unit @ ref_unit.T
    k = min(k, sims.shape[1])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    weights = np.clip(np.take_along_axis(sims, top, axis=1), 1e-6, None)
    weights /= weights.sum(axis=1, keepdims=True)
    return (weights[..., None] * ref_coords[top]).sum(axis=1)
