"""Nearest-neighbour graph and UMAP reductions that share it.

The cosine kNN graph is computed once and serves three consumers: the 5-D UMAP for
clustering, the 2-D UMAP for the map, and the "similar papers" list. Up to EXACT_UP_TO
rows it is exact (a blocked matrix product, fast at conference scale); above, its cost
grows with the square of the corpus, so it is approximate (NN-descent, pynndescent), with
the same contract: self first, cosine distances, ties by index.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from explorer.atomic_files import atomic_save_array
from explorer.build import settings
from explorer.vectors import normalise_rows

# Rows of the similarity matrix per step. Each step holds the block, its negation and
# argpartition's int64 indices (~16 bytes x rows x n): at 11,268 papers 2048 rows peaked
# 516 MB over the base in 1.76 s, 256 rows 63 MB in 0.72 s (smaller blocks stay in cache).
_BLOCK = 256
# Up to this many rows the graph is exact; above it, approximate. Below it a corpus's run
# id and outputs are what they were before the approximate path existed. Where exact starts
# costing more (bench/README.md rows 15, 2026-12-03): exact grows with the square of the
# papers (9.5 s at 23,304, 294 s at 100,000), approximate about linearly (10.5 s, 52 s) plus
# 16-20 s compiling NN-descent once per process, so they cross at ~35,000-48,000 papers;
# 50,000 keeps those corpora's exact graphs and run ids for at most ~35 s more
# (docs/scale.md "Nearest neighbours"), and a sample fit's 20,000 papers stay exact.
EXACT_UP_TO = settings.default("exact_neighbours_up_to")
# NN-descent's settings; with the build's seed they decide the approximate graph, so a run
# above EXACT_UP_TO records them in its id (`approximate_method`). One thread: with two the
# graph is as reproducible but another one (and ~1.25x faster), so a machine's core count
# would change results. It searches `search_k` neighbours and keeps the build's k. On the
# neighbourhood generator's corpus (bench/neighbours.py; bench/README.md rows 15 and their
# notes) pynndescent's default, 30, found 97.2% of the exact 10 nearest at 100,000 papers
# but 86.5% at 1,000,000 (one "similar paper" in seven wrong); 60 finds 99.75% and 97.6%,
# for ~2.4x the time (52 s vs 22 s at 100,000; 829 s vs 348 s at 1,000,000, a third of the
# million-paper build, where the exact graph would take hours).
NNDESCENT = {"method": "nndescent", "n_jobs": 1, "search_k": 60}
# Rows whose candidates are re-ranked at a time (rows x candidates x dimensions float32:
# 94 MB at 1,024 x 60 x 384).
_RANK_BLOCK = 1024


@dataclass(frozen=True)
class KnnGraph:
    """Row i: neighbour indices (self first) and cosine distances, nearest first."""

    indices: np.ndarray
    distances: np.ndarray

    def take(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.indices[:, :k].copy(), self.distances[:, :k].copy()


def knn_graph(
    embeddings: np.ndarray, k: int, *, exact_up_to: int = EXACT_UP_TO, seed: int = 0
) -> KnnGraph:
    """Cosine k nearest neighbours of every row, itself included at rank 0: exact up to
    `exact_up_to` rows, approximate (seeded by `seed`) above."""
    if len(embeddings) <= exact_up_to:
        return _exact(embeddings, k)
    return _approximate(embeddings, k, seed)


def approximate_method(n_rows: int, exact_up_to: int = EXACT_UP_TO) -> dict | None:
    """What a run id records about its graph: nothing when exact (ids as they always were),
    else the approximate method and its settings."""
    return dict(NNDESCENT) if n_rows > exact_up_to else None


def _exact(embeddings: np.ndarray, k: int) -> KnnGraph:
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


def _approximate(embeddings: np.ndarray, k: int, seed: int) -> KnnGraph:
    """NN-descent's candidates, re-ranked by exact cosine (self first, ties by index).

    The index normalises its own copy of the vectors (one copy, freed with it); ours are
    passed as they are, never copied when already float32.
    """
    nndescent = _import_nndescent()
    data = np.ascontiguousarray(embeddings, dtype=np.float32)
    k = min(k, len(data))
    search = min(max(k, NNDESCENT["search_k"]), len(data))
    with warnings.catch_warnings():
        # Expected: numba cannot cache the two kernels that take the distance as a global.
        warnings.filterwarnings("ignore", message=".*Cannot cache compiled function.*")
        # Its check for rows left short of neighbours: `_ranked` refuses those itself. Asked
        # for every row (a corpus no larger than search_k, under a test's tiny threshold),
        # pynndescent misses the one slot its self-loop then fills, and warns needlessly.
        warnings.filterwarnings("ignore", message="Failed to correctly find n_neighbors")
        index = nndescent(
            data, metric="cosine", n_neighbors=search, random_state=seed,
            n_jobs=NNDESCENT["n_jobs"], low_memory=True,
        )  # fmt: skip
    candidates = index.neighbor_graph[0]
    del index
    return _ranked(data, candidates, k)


def _ranked(data: np.ndarray, candidates: np.ndarray, k: int) -> KnnGraph:
    """Row i: itself, then its candidates (not itself) by exact cosine, ties by index."""
    n = len(data)
    indices = np.empty((n, k), dtype=np.int32)
    distances = np.empty((n, k), dtype=np.float32)
    for start in range(0, n, _RANK_BLOCK):
        rows = np.arange(start, min(start + _RANK_BLOCK, n))
        cand = candidates[rows].astype(np.int64)
        if (cand < 0).any():
            raise ValueError("the approximate graph left rows without enough neighbours")
        query = normalise_rows(data[rows])[:, :, None]
        sims = (normalise_rows(data[cand]) @ query)[:, :, 0]
        sims[cand == rows[:, None]] = -np.inf  # self goes first, below
        order = np.lexsort((cand, -sims), axis=1)[:, : k - 1]
        indices[rows, 0] = rows
        indices[rows, 1:] = np.take_along_axis(cand, order, axis=1)
        distances[rows, 0] = 0.0
        distances[rows, 1:] = np.clip(1.0 - np.take_along_axis(sims, order, axis=1), 0.0, 2.0)
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

    if "umap" not in _CACHED:
        _cache_kernels((umap.layouts, umap.umap_, umap.utils, umap.spectral))
        _CACHED.add("umap")
    return umap


def _import_nndescent():
    """pynndescent's NNDescent, its numba kernels cached on disk as umap's are.

    Its first use in a process compiled for ~50 s here; cached, the kernels numba can keep
    (all but the two that take the distance as a global) leave 16-21 s (bench/README.md row 15).
    """
    import importlib
    import pkgutil

    import pynndescent

    if "pynndescent" not in _CACHED:
        names = [m.name for m in pkgutil.iter_modules(pynndescent.__path__)]
        _cache_kernels([importlib.import_module(f"pynndescent.{name}") for name in names])
        _CACHED.add("pynndescent")
    return pynndescent.NNDescent


def _cache_kernels(modules) -> None:
    from numba.core.dispatcher import Dispatcher

    for module in modules:
        for kernel in vars(module).values():
            if isinstance(kernel, Dispatcher):
                kernel.enable_caching()


_CACHED: set[str] = set()


# A short list's map (project_2d with topics). Measured on the 38 seed abstracts' 8 topics
# (2026-12-04): by similarity alone their silhouette on the map was 0.11 (every topic
# scattered); UMAP's default target weight, 0.5, gave 0.78 but shrank each topic to a dot
# (a paper's nearest neighbour at 0.5% of the map's width, was 10.7%); 0.05 with min_dist
# 0.5 gives 0.54 with papers 7.5% apart: topics read as regions, papers as points.
TARGET_WEIGHT = 0.05
SHORT_MAP_MIN_DIST = 0.5


@dataclass(frozen=True)
class UmapParams:
    """What a UMAP reduction depends on besides its vectors and graph (and so its cache key):
    target dimensions, neighbours taken from the shared graph, spread, seed."""

    n_components: int
    n_neighbors: int
    min_dist: float
    seed: int
    n_epochs: int | None = None  # None: umap's own (500 up to 10,000 rows, else 200)


def reduce_umap(
    embeddings: np.ndarray,
    graph: KnnGraph,
    params: UmapParams,
    *,
    cache_root: Path | None = None,
    target: np.ndarray | None = None,
) -> np.ndarray:
    """UMAP on the shared graph; fixed seed, so the same input gives the same output.
    `target`: each row's group (-1: none), which the layout then also keeps together
    (UMAP's supervised mode, categorical, at TARGET_WEIGHT).

    With `cache_root`, the result is kept under ``<cache_root>/reductions/`` keyed by
    everything it depends on (vectors, graph, parameters, umap version): a re-fit with
    another --min-topic-size changes neither reduction and skips both.
    """
    indices, distances = graph.take(params.n_neighbors)
    n = embeddings.shape[0]
    # Spectral initialisation needs more points than dimensions + 1; tiny corpora use random.
    init = "spectral" if n > params.n_components + 8 else "random"
    stored = None
    if cache_root is not None:
        key = hashlib.sha256()
        parts = [embeddings.astype(np.float32), indices, distances]
        if target is not None:
            parts += [np.asarray(target, dtype=np.int64), np.float64(TARGET_WEIGHT)]
        for part in parts:
            key.update(np.ascontiguousarray(part).tobytes())
        p = params
        key.update(
            repr(
                (p.n_components, p.n_neighbors, p.min_dist, p.seed, init,
                 metadata.version("umap-learn"), *((p.n_epochs,) if p.n_epochs else ()))
            ).encode()
        )  # fmt: skip
        stored = Path(cache_root) / "reductions" / f"{key.hexdigest()[:32]}.npy"
        try:
            cached = np.load(stored, allow_pickle=False)
            if cached.shape == (n, params.n_components):
                return cached
        except (OSError, ValueError):
            pass  # absent or torn: compute it again
    reduced = _fit_umap(embeddings, (indices, distances), params, init, target)
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        atomic_save_array(stored, reduced)
    return reduced


def _fit_umap(
    embeddings: np.ndarray,
    knn: tuple[np.ndarray, np.ndarray],
    params: UmapParams,
    init: str,
    target: np.ndarray | None = None,
) -> np.ndarray:
    umap = _import_umap()
    model = umap.UMAP(
        n_neighbors=params.n_neighbors,
        n_components=params.n_components,
        min_dist=params.min_dist,
        metric="cosine",
        random_state=params.seed,
        init=init,
        precomputed_knn=(*knn, None),
        low_memory=True,
        n_epochs=params.n_epochs,
        target_metric="categorical",
        target_weight=TARGET_WEIGHT,
    )
    with warnings.catch_warnings():
        # Expected here: no search index (we never transform new data), and
        # random_state disabling parallelism (determinism is the point).
        warnings.filterwarnings("ignore", message=".*knn_search_index.*")
        warnings.filterwarnings("ignore", message=".*n_jobs value.*")
        reduced = model.fit_transform(embeddings, y=target)
    return np.nan_to_num(np.asarray(reduced, dtype=np.float32))


def project_2d(
    embeddings: np.ndarray,
    graph: KnnGraph,
    *,
    n_neighbors: int,
    seed: int,
    cache_root: Path | None = None,
    topics: np.ndarray | None = None,
) -> np.ndarray:
    """The map's coordinates: a 2-D UMAP that reuses the clustering's kNN graph. With
    `topics` (a short list's, topics.is_short_list) the layout also keeps each topic
    together, a little, and spreads its papers apart (SHORT_MAP_MIN_DIST): a few dozen
    papers laid out by similarity alone scatter every topic over the map."""
    spread = 0.1 if topics is None else SHORT_MAP_MIN_DIST
    return reduce_umap(
        embeddings, graph, UmapParams(2, n_neighbors, min_dist=spread, seed=seed),
        cache_root=cache_root, target=topics,
    )  # fmt: skip
