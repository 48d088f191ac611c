"""Placing papers into topics and a map that were fitted without them, without refitting.

A refit moves topics: UMAP and HDBSCAN regroup a corpus when one abstract joins it, so a
curated topic may not be found again. These functions keep a fitted model and add papers
to it, by the rules the fit itself uses:

- **Topic:** the similarity-weighted vote of its `VOTERS` most similar fitted papers (the
  fit's outliers vote too, so a paper among them stays one). A fit's clusters follow a
  neighbour graph (UMAP's), not centroids, and a vote follows it too.
- **Subtopic:** in a split topic, the most similar subtopic centroid (the rule `levels`
  applies to a split's stragglers).
- **Map place:** the similarity-weighted mean of the places of its `PLACE_NEIGHBOURS` most
  similar reference papers of the same topic, so it lands inside its topic's cloud.

Everything works on unit-length float32 rows, in batches of `BATCH` rows so memory stays
bounded however many papers are added. Above `PARALLEL_ABOVE` rows, `assign_all` spreads
batches of `PARALLEL_BATCH` rows over a process pool, or over Ray tasks under the Ray engine.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from explorer.node_ids import OUTLIER
from explorer.vectors import centroids

PLACE_NEIGHBOURS = 10
# Fitted papers whose vote decides a new paper's topic. On ~23k real abstracts fitted on a
# sample of 5,000 (10,000), the rest assigned by this vote agreed with the full fit of seed 42
# (the first version of bench/sample_fit.py compared with that one fit) at ARI 0.52 (0.56);
# by the nearest centroid above the outlier threshold, 0.46 (0.55); by the vote kept only
# above that threshold, 0.41 (0.51).
VOTERS = 15
BATCH = 4096
# Below this many rows one process is faster than starting workers (each is sent the
# reference papers' vectors once).
PARALLEL_ABOVE = 20_000
PARALLEL_BATCH = 20_000


@dataclass(frozen=True)
class Reference:
    """The fitted papers new ones are assigned against (unit rows, as fitted)."""

    unit: np.ndarray
    labels: np.ndarray
    subtopics: np.ndarray
    coords: np.ndarray


def assign_rows(ref: Reference, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topic, subtopic and map place of each row."""
    labels = nearest_topics(unit, ref.unit, ref.labels)
    subtopics = nearest_subtopics(unit, labels, ref.unit, ref.labels, ref.subtopics)
    return labels, subtopics, place(unit, labels, ref.unit, ref.labels, ref.coords)


def assign_all(
    ref: Reference, unit: np.ndarray, *, engine: str = "local"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`assign_rows` over every row, in parallel batches when there are many."""
    if len(unit) <= PARALLEL_ABOVE:
        return assign_rows(ref, unit)
    batches = [unit[i : i + PARALLEL_BATCH] for i in range(0, len(unit), PARALLEL_BATCH)]
    parts = _on_ray(ref, batches) if engine == "ray" else _on_pool(ref, batches)
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


_REFERENCE: Reference | None = None  # a pool worker's copy, set once by its initializer


def _set_reference(ref: Reference) -> None:
    global _REFERENCE
    _REFERENCE = ref


def _assign_batch(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    assert _REFERENCE is not None
    return assign_rows(_REFERENCE, unit)


def _on_pool(ref: Reference, batches: list[np.ndarray]) -> list:
    # spawn, not fork: the build process holds torch's and BLAS's threads.
    workers = min(len(batches), os.cpu_count() or 1)
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_set_reference,
        initargs=(ref,),
    ) as pool:
        return list(pool.map(_assign_batch, batches))


def _on_ray(ref: Reference, batches: list[np.ndarray]) -> list:
    import ray

    task = ray.remote(assign_rows)
    shared = ray.put(ref)  # once in the object store, read by every task
    return ray.get([task.remote(shared, batch) for batch in batches])


def nearest_topics(unit: np.ndarray, ref_unit: np.ndarray, ref_labels: np.ndarray) -> np.ndarray:
    """Each row's topic: the similarity-weighted vote of its `VOTERS` most similar
    reference papers. Outliers vote too, so a paper among the fit's outliers is one."""
    topics = np.array(sorted(set(ref_labels.tolist()) - {OUTLIER}), dtype=np.int64)
    out = np.full(len(unit), OUTLIER, dtype=np.int64)
    if len(topics) == 0 or len(unit) == 0:
        return out
    codes = np.searchsorted(topics, ref_labels)  # a column per topic, the last for outliers
    codes[ref_labels == OUTLIER] = len(topics)
    choices = np.append(topics, OUTLIER)
    k = min(VOTERS, len(ref_labels))
    for start in range(0, len(unit), BATCH):
        rows = unit[start : start + BATCH]
        sims = rows @ ref_unit.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        weights = np.clip(np.take_along_axis(sims, top, axis=1), 1e-6, None)
        votes = np.zeros((len(rows), len(choices)), dtype=np.float32)
        np.add.at(votes, (np.arange(len(rows))[:, None], codes[top]), weights)
        out[start : start + BATCH] = choices[votes.argmax(axis=1)]
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
