"""Consensus topics: several seeded fits of one partition, and what they agree on.

A single UMAP + HDBSCAN fit is a noisy sample of the corpus's structure: another seed, or
vectors that differ in their last bits (another CPU), moves about one paper in four into
another topic. The build therefore fits `FITS` partitions, each with its own seed derived
from (the build's seed, the fit's number) and on its own small seeded move of the vectors
(`jittered_graph`: the cosines of vectors moved by `JITTER`, read on the shared graph's
candidate edges), and keeps what most of them agree on:

- the co-association of two papers is the share of fits that put them in one group;
- groups grow by average linkage over the kNN graph's edges (only neighbouring groups are
  ever compared, so nothing is n x n), the average taken over every pair of their papers,
  from per-group counts of each fit's labels; merging stops below a majority (`MAJORITY`);
- a group smaller than the fit's smallest topic is left to outlier assignment.

Varying the input as well as the seed is what makes the result hold across hosts: seeds
alone averaged away the seed's noise but not the graph's sensitivity to a 1e-4 move of
the vectors (docs/consensus.md, bench/README.md row 12).

Each group's stability, how often its papers stayed together across the fits, comes from
the same counts (`stability`). The fits run a process per core (`seeded_fits`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.build.cores import on_cores
from explorer.node_ids import OUTLIER
from explorer.vectors import normalise_rows

if TYPE_CHECKING:
    from explorer.build.projection import UmapParams

# Partitions agreed on. On ICML 2013-2019 (2026-12-04) 4 fits (500 epochs) agreed across
# seeds at topic ARI 0.883 and across precisions at 0.869; 16 (200 epochs) at 0.903 and
# 0.932, but AISTATS 2019-2025 across precisions only at 0.896. 24 fits (2026-12-05) meet
# every target on the three corpora: seeds 0.926-0.940, precisions 0.924-0.953 (row 12).
FITS = 24
JITTER = 0.05  # norm of each fit's random move of a unit vector
# Each fit's UMAP epochs. On ICML 2013-2019 (2026-12-04) sixteen fits of 200 took 24 s and
# agreed at topic ARI 0.903 across seeds, 0.932 across precisions; umap's own 500 (below
# 10,000 rows) took 55 s for 0.929 and 0.918; 100 (2026-12-07, 24 or 32 fits) left ICML's
# leaf ARI below 0.85 (docs/consensus.md, "What it costs").
FIT_EPOCHS = 200
MAJORITY = 0.5  # groups merge while at least half the fits, on average, put them together
CANDIDATE_ROWS = 256  # rows whose candidates' vectors are gathered at once (~12 MB at 30 x 384)


def renumber_by_size(labels: np.ndarray) -> np.ndarray:
    """Largest topic becomes 0; ties broken by the old id, so the result is deterministic."""
    labels = np.asarray(labels, dtype=np.int64)
    kept = labels != OUTLIER
    ids, counts = np.unique(labels[kept], return_counts=True)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.lexsort((ids, -counts))] = np.arange(len(ids))
    out = np.full(len(labels), OUTLIER, dtype=np.int64)
    out[kept] = rank[np.searchsorted(ids, labels[kept])]
    return out


def fit_seed(seed: int, fit: int) -> int:
    """The seed of fit `fit` of a build seeded `seed`: a hash of both, so two builds'
    seeds share no fit, and one build's fits are the same on every run."""
    return int(np.random.SeedSequence([seed, fit]).generate_state(1, dtype=np.uint32)[0])


def jittered(vectors: np.ndarray, seed: int) -> np.ndarray:
    """Unit rows, each moved by a random vector of norm `JITTER` (seeded) and made unit
    again: a copy of the vectors as another host might have computed them, magnified."""
    rng = np.random.default_rng(seed)
    unit = normalise_rows(np.asarray(vectors, dtype=np.float32))
    noise = normalise_rows(rng.standard_normal(unit.shape, dtype=np.float32))
    return normalise_rows(unit + JITTER * noise)


def jittered_graph(
    vectors: np.ndarray, indices: np.ndarray, k: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of each row's candidate neighbours (`indices`, self first) by the
    cosine of vectors moved by a random vector of norm `JITTER` each (seeded): the graph
    a fit sees. Only candidate edges are scored, so a fit costs n x candidates dot
    products, not a new neighbour search; the move changes cosines by ~0.004, far less
    than the gap to a row's 2k-th neighbour, so the candidates hold every new neighbour."""
    moved = jittered(vectors, seed)
    cand = np.asarray(indices, dtype=np.int64)
    k = min(k, cand.shape[1])
    sims = candidate_cosines(moved, cand)
    sims[:, 0] = np.inf  # self stays first
    order = np.lexsort((cand, -sims), axis=1)[:, :k]
    picked = np.take_along_axis(cand, order, axis=1)
    dist = np.clip(1.0 - np.take_along_axis(sims, order, axis=1), 0.0, 2.0)
    dist[:, 0] = 0.0
    return picked.astype(np.int32), dist.astype(np.float32)


def candidate_cosines(unit: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Each row's dot product with each of its candidates (`cand`, rows x candidates), a
    block of `CANDIDATE_ROWS` rows at a time: the candidates' vectors gathered at once
    would be rows x candidates x width floats (ICML 2013-2019: 139 MB per fit; a fit on
    20,000 papers: 0.9 GB in each process), a block of them a few MB. Each value is the
    same sum of products whatever the block, so the result is too."""
    out = np.empty(cand.shape, dtype=unit.dtype)
    for start in range(0, len(cand), CANDIDATE_ROWS):
        block = slice(start, start + CANDIDATE_ROWS)
        out[block] = np.einsum("ij,ikj->ik", unit[block], unit[cand[block]])
    return out


def _label_codes(labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Each fit's labels as columns of one count table: (n, K) column codes, -1 where a
    paper is noise in that fit (noise puts a paper with nobody), and the column count."""
    codes = np.full(labels.shape, -1, dtype=np.int64)
    offset = 0
    for f in range(labels.shape[1]):
        col = labels[:, f]
        real = col != OUTLIER
        ids, inverse = np.unique(col[real], return_inverse=True)
        codes[real, f] = inverse + offset
        offset += len(ids)
    return codes, offset


class _Groups:
    """Groups being merged: per group its size and its count of each fit's labels, kept
    sparse (a paper alone is its row of label codes; a merged group, the columns it has and
    their counts), so memory grows with papers x fits, never with papers x labels."""

    def __init__(self, codes: np.ndarray, columns: int) -> None:
        self.codes = codes  # papers x fits: label columns, -1 for noise
        self.columns = columns
        self.fits = codes.shape[1]
        self.sizes = np.ones(len(codes), dtype=np.int64)
        self.merged: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # group -> (columns, counts)

    def _sparse(self, group: int) -> tuple[np.ndarray, np.ndarray]:
        if group in self.merged:
            return self.merged[group]
        row = self.codes[group]
        row = row[row >= 0]
        return row, np.ones(len(row), dtype=np.int64)

    def linkage(self, group: int, others: np.ndarray) -> np.ndarray:
        """Average co-association of `group` with each of `others` over all their pairs:
        the integer count of agreeing (pair, fit)s, divided once (exact and reproducible)."""
        dense = np.zeros(self.columns + 1, dtype=np.int64)  # the last slot: noise, 0
        columns, counts = self._sparse(group)
        dense[columns] = counts
        agree = np.empty(len(others), dtype=np.int64)
        alone = np.array([int(o) not in self.merged for o in others], dtype=bool)
        agree[alone] = dense[self.codes[others[alone]]].sum(axis=1)
        for i in np.flatnonzero(~alone):
            columns, counts = self.merged[int(others[i])]
            agree[i] = int((counts * dense[columns]).sum())
        return agree / (self.fits * self.sizes[others] * float(self.sizes[group]))

    def merge(self, a: int, b: int) -> None:
        """Group b joins group a: their counts and sizes add up."""
        ca, ka = self._sparse(a)
        cb, kb = self._sparse(b)
        columns, inverse = np.unique(np.concatenate([ca, cb]), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate([ka, kb])).astype(np.int64)
        self.merged[a] = (columns, counts)
        self.merged.pop(b, None)
        self.sizes[a] += self.sizes[b]


def agree(labels: np.ndarray, indices: np.ndarray, *, threshold: float = MAJORITY) -> np.ndarray:
    """Consensus group of each paper (0 = largest), from `labels` (papers x fits, OUTLIER
    for noise) and the kNN graph's `indices` (row i: its neighbours): average linkage over
    the graph's edges, stopped when no neighbouring groups' average co-association reaches
    `threshold`. Ties are broken by group number, so the result is deterministic."""
    n = len(labels)
    groups = _Groups(*_label_codes(labels))
    neighbours = _edges(indices, n)
    heap: list[tuple[float, int, int, int, int]] = []
    version = np.zeros(n, dtype=np.int64)
    for a in range(n):
        later = np.array(sorted(j for j in neighbours[a] if j > a), dtype=np.int64)
        _push(heap, groups, a, later, version)
    alive = np.ones(n, dtype=bool)
    owner = np.arange(n)
    while heap:
        negative, a, b, va, vb = heapq.heappop(heap)
        if -negative < threshold:
            break
        if not (alive[a] and alive[b]) or version[a] != va or version[b] != vb:
            continue
        _merge(groups, neighbours, a, b)
        alive[b] = False
        owner[owner == b] = a
        version[a] += 1
        _push(heap, groups, a, np.array(sorted(neighbours[a]), dtype=np.int64), version)
    # A group's number is its smallest paper (b always joins a < b): ties go to it.
    return renumber_by_size(owner)


def _edges(indices: np.ndarray, n: int) -> list[set[int]]:
    """Each row's neighbours, both ways (the kNN graph made symmetric), self left out."""
    out: list[set[int]] = [set() for _ in range(n)]
    for i, row in enumerate(np.asarray(indices).tolist()):
        for j in row:
            if j != i and 0 <= j < n:
                out[i].add(j)
                out[j].add(i)
    return out


def _push(heap: list, groups: _Groups, a: int, others: np.ndarray, version: np.ndarray) -> None:
    """Queue the links of group `a` to `others` (as the pair's smaller number first), with
    both groups' versions, so a link queued before either group grew is skipped later."""
    if not len(others):
        return
    links = groups.linkage(a, others)
    for b, link in zip(others.tolist(), links.tolist(), strict=True):
        lo, hi = (a, b) if a < b else (b, a)
        heapq.heappush(heap, (-link, lo, hi, int(version[lo]), int(version[hi])))


def _merge(groups: _Groups, neighbours: list[set[int]], a: int, b: int) -> None:
    """Group b joins group a: counts and sizes add up, b's neighbours become a's."""
    groups.merge(a, b)
    for c in neighbours[b]:
        neighbours[c].discard(b)
        if c != a:
            neighbours[c].add(a)
            neighbours[a].add(c)
    neighbours[a].discard(b)
    neighbours[b] = set()


def stability(labels: np.ndarray, members_of: dict) -> dict:
    """For each key of `members_of` (group -> paper rows): the share of its papers' pairs
    that the fits put together, averaged over the fits (1: every fit kept it whole). A
    group of one paper is stable by definition."""
    codes, _ = _label_codes(labels)
    out = {}
    for key, rows in members_of.items():
        rows = np.asarray(rows)
        pairs = len(rows) * (len(rows) - 1) / 2
        if pairs == 0:
            out[key] = 1.0
            continue
        together = 0.0
        for f in range(codes.shape[1]):
            col = codes[rows, f]
            _, counts = np.unique(col[col >= 0], return_counts=True)
            together += float((counts * (counts - 1) / 2).sum()) / pairs
        out[key] = together / codes.shape[1]
    return out


def seeded_fits(
    vectors: np.ndarray,
    candidates: np.ndarray,
    *,
    umap: UmapParams,
    label: Callable[[np.ndarray], np.ndarray],
    cache_root: Path | None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Each fit's labels (papers x fits, or papers x fits x groupings when `label` returns
    several groupings per paper) and fit 0's reduction, for `FITS` fits (read at each call:
    bench/subtopic_rules.py raises it in its own process to ask for more). Fit i reduces the graph
    `jittered_graph` makes with seed `fit_seed(umap.seed, i)` (its reduction cached like
    any other) and `label` groups the reduction (OUTLIER for noise).

    The fits run on every core, one process each (`cores.on_cores`): a seeded UMAP runs on one
    thread and holds the GIL, and each fit depends only on its own seed, so the labels are
    the same bytes on any number of cores."""
    from tqdm.auto import tqdm

    columns, first = [], None
    fits = on_cores(
        _one_fit, [(vectors, candidates, umap, label, cache_root, i) for i in range(FITS)]
    )
    for labels, reduced in tqdm(
        fits, total=FITS, desc="Consensus fits", disable=not progress, leave=False
    ):
        columns.append(np.asarray(labels, dtype=np.int64))
        first = reduced if first is None else first
    return np.stack(columns, axis=1), first


def _one_fit(
    vectors: np.ndarray,
    candidates: np.ndarray,
    umap: UmapParams,
    label: Callable[[np.ndarray], np.ndarray],
    cache_root: Path | None,
    i: int,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Fit i's labels, and its reduction for fit 0 (the map's 5-D layout)."""
    from explorer.build.projection import KnnGraph, reduce_umap

    seed = fit_seed(umap.seed, i)
    graph = KnnGraph(*jittered_graph(vectors, candidates, umap.n_neighbors, seed))
    params = replace(umap, seed=seed, n_epochs=FIT_EPOCHS)
    reduced = reduce_umap(vectors, graph, params, cache_root=cache_root)
    return label(reduced), (reduced if i == 0 else None)


def consensus(labels: np.ndarray, indices: np.ndarray, min_size: int) -> np.ndarray:
    """The fits' consensus groups (`agree`), numbered by size; a group smaller than
    `min_size` papers is left as OUTLIER, as HDBSCAN leaves a too-small cluster."""
    groups = agree(labels, indices)
    small = np.bincount(groups)[groups] < min_size
    return np.where(small, OUTLIER, groups).astype(np.int64)


@dataclass(frozen=True)
class Stability:
    """Per-topic stability over the consensus's fits, and their mean pairwise ARI."""

    topics: dict[int, float]
    refits: int  # the fits (each a refit of the topic stage with a derived seed)
    mean_ari: float


def topic_stability(fits: np.ndarray | None, labels: np.ndarray) -> Stability | None:
    """How often each topic's papers stayed together across the fits (rows of `fits` and
    `labels` alike), and the fits' mean pairwise adjusted Rand index; None without fits
    (topics kept from another run)."""
    if fits is None:
        return None
    topics = np.unique(labels[labels != OUTLIER])
    members = {int(t): np.flatnonzero(labels == t) for t in topics}
    return Stability(stability(fits, members), fits.shape[1], mean_ari(list(fits.T)))


def mean_ari(labellings: list[np.ndarray]) -> float:
    """Mean adjusted Rand index over every pair of labellings (outliers count as a class):
    how far single fits agree, which the consensus improves on."""
    from itertools import combinations

    from sklearn.metrics import adjusted_rand_score

    pairs = list(combinations(labellings, 2))
    if not pairs:
        return 1.0
    return float(np.mean([adjusted_rand_score(a, b) for a, b in pairs]))
