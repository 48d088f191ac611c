"""Nearest-neighbour graph and UMAP reductions that share it.

The exact cosine kNN graph is computed once (a blocked matrix product is both exact
and fast at conference scale) and serves three consumers: the 5-D UMAP for
clustering, the 2-D UMAP for the map, and the "similar papers" list.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from explorer.artifacts import atomic_save_array
from explorer.vectors import normalise_rows

# Rows of the similarity matrix per step. Each step holds the block, its negation and
# argpartition's int64 indices (~16 bytes x rows x n): at 11,268 papers 2048 rows peaked
# 516 MB over the base in 1.76 s, 256 rows 63 MB in 0.72 s (smaller blocks stay in cache).
_BLOCK = 256


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


def _import_umap():
    """umap, with its numba kernels cached on disk (under NUMBA_CACHE_DIR).

    umap-learn compiles its layout kernels on first use in every process (13 s of a
    21 s 5-D reduction on ICML 2013-2019) and does not ask numba to cache them; turning
    the cache on here makes every build after the first on a machine start warm.
    """
    import umap
    import umap.layouts
    import umap.spectral
    import umap.umap_
    import umap.utils
    from numba.core.dispatcher import Dispatcher

    global _UMAP_CACHED
    if not _UMAP_CACHED:
        for module in (umap.layouts, umap.umap_, umap.utils, umap.spectral):
            for kernel in vars(module).values():
                if isinstance(kernel, Dispatcher):
                    kernel.enable_caching()
        _UMAP_CACHED = True
    return umap


_UMAP_CACHED = False


def reduce_umap(
    embeddings: np.ndarray,
    graph: KnnGraph,
    *,
    n_components: int,
    n_neighbors: int,
    min_dist: float,
    seed: int,
    cache_root: Path | None = None,
) -> np.ndarray:
    """UMAP on the shared graph; fixed seed, so the same input gives the same output.

    With `cache_root`, the result is kept under ``<cache_root>/reductions/`` keyed by
    everything it depends on (vectors, graph, parameters, umap version): a re-fit with
    another --min-topic-size changes neither reduction and skips both.
    """
    indices, distances = graph.take(n_neighbors)
    n = embeddings.shape[0]
    # Spectral initialisation needs more points than dimensions + 1; tiny corpora use random.
    init = "spectral" if n > n_components + 8 else "random"
    stored = None
    if cache_root is not None:
        key = hashlib.sha256()
        for part in (embeddings.astype(np.float32), indices, distances):
            key.update(np.ascontiguousarray(part).tobytes())
        key.update(
            repr(
                (n_components, n_neighbors, min_dist, seed, init, metadata.version("umap-learn"))
            ).encode()
        )
        stored = Path(cache_root) / "reductions" / f"{key.hexdigest()[:32]}.npy"
        try:
            cached = np.load(stored, allow_pickle=False)
            if cached.shape == (n, n_components):
                return cached
        except (OSError, ValueError):
            pass  # absent or torn: compute it again
    reduced = _fit_umap(
        embeddings, indices, distances, n_components, n_neighbors, min_dist, seed, init
    )
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        atomic_save_array(stored, reduced)
    return reduced


def _fit_umap(embeddings, indices, distances, n_components, n_neighbors, min_dist, seed, init):
    umap = _import_umap()
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
    embeddings: np.ndarray,
    graph: KnnGraph,
    *,
    n_neighbors: int,
    seed: int,
    cache_root: Path | None = None,
) -> np.ndarray:
    """The map's coordinates: a 2-D UMAP that reuses the clustering's kNN graph."""
    return reduce_umap(
        embeddings,
        graph,
        n_components=2,
        n_neighbors=n_neighbors,
        min_dist=0.1,
        seed=seed,
        cache_root=cache_root,
    )
