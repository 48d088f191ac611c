"""Nearest-neighbour graph and UMAP reductions that share it.

The exact cosine kNN graph is computed once (a blocked matrix product is both exact
and fast at conference scale) and serves three consumers: the 5-D UMAP for
clustering, the 2-D UMAP for the map, and the "similar papers" list.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from explorer.embed import normalise_rows

_BLOCK = 2048


@dataclass(frozen=True)
class KnnGraph:
    """Row i: neighbour indices (self first) and cosine distances, nearest first."""

    indices: np.ndarray
    distances: np.ndarray

    def take(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.indices[:, :k].copy(), self.distances[:, :k].copy()


def knn_graph(embeddings: np.ndarray, k: int) -> KnnGraph:
    """Exact cosine k nearest neighbours of every row, itself included at rank 0."""
    unit = normalise_rows(embeddings.astype(np.float32))
    n = unit.shape[0]
    k = min(k, n)
    indices = np.empty((n, k), dtype=np.int32)
    distances = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        sims = unit[start:stop] @ unit.T
        rows = np.arange(stop - start)
        sims[rows, rows + start] = np.inf  # self first, even for duplicate vectors
        if k < n:
            part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        else:
            part = np.tile(np.arange(n), (stop - start, 1))
        part_sims = np.take_along_axis(sims, part, axis=1)
        order = np.lexsort((part, -part_sims), axis=1)  # ties by index: deterministic
        indices[start:stop] = np.take_along_axis(part, order, axis=1)
        ordered = np.take_along_axis(part_sims, order, axis=1)
        ordered[:, 0] = 1.0
        distances[start:stop] = np.clip(1.0 - ordered, 0.0, 2.0)
    return KnnGraph(indices=indices, distances=distances)


def reduce_umap(
    embeddings: np.ndarray,
    graph: KnnGraph,
    *,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    seed: int,
) -> np.ndarray:
    """UMAP on the shared graph; fixed seed, so the same input gives the same output."""
    import umap

    indices, distances = graph.take(n_neighbors)
    n = embeddings.shape[0]
    # Spectral initialisation needs more points than dimensions + 1; tiny corpora use random.
    init = "spectral" if n > n_components + 8 else "random"
    model = umap.UMAP(
        n_neighbors=n_neighbors,
        n_components=n_components,
        min_dist=min_dist,
        metric="cosine",
        random_state=seed,
        init=init,
        precomputed_knn=(indices, distances, None),
        low_memory=True,
    )
    with warnings.catch_warnings():
        # Expected here: no search index (we never transform new data), and
        # random_state disabling parallelism (determinism is the point).
        warnings.filterwarnings("ignore", message=".*knn_search_index.*")
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        reduced = model.fit_transform(embeddings)
    return np.nan_to_num(np.asarray(reduced, dtype=np.float32))


def project_2d(
    embeddings: np.ndarray, graph: KnnGraph, *, n_neighbors: int, seed: int
) -> np.ndarray:
    """The map's coordinates: a 2-D UMAP that reuses the clustering's kNN graph."""
    return reduce_umap(
        embeddings, graph, n_components=2, n_neighbors=n_neighbors, min_dist=0.1, seed=seed
    )
