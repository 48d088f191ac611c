"""Consensus topics (explorer/build/consensus.py): seeded fits on jittered graphs, agreed by
average co-association over the kNN graph's edges. Planted fixtures only: the structure is
known, so the assertions are properties, not one host's rounding."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from explorer.build import consensus as C
from explorer.build.projection import knn_graph
from explorer.build.topics import default_params, partition, short_list
from explorer.node_ids import OUTLIER


def _blocks_graph(sizes: list[int], k: int = 4) -> np.ndarray:
    """kNN indices where each paper's neighbours are the next papers of its own block."""
    rows = []
    start = 0
    for size in sizes:
        for i in range(size):
            rows.append([start + i] + [start + (i + j) % size for j in range(1, k)])
        start += size
    return np.array(rows)


def test_renumber_by_size_puts_largest_first_and_ties_by_old_id():
    labels = np.array([5, 5, 2, 2, 2, OUTLIER, 7, 9, 9])
    assert C.renumber_by_size(labels).tolist() == [1, 1, 0, 0, 0, OUTLIER, 3, 2, 2]


def test_agree_keeps_what_most_fits_put_together():
    # Three planted blocks; every fit splits block 0 at another random place, one fit in
    # four merges blocks 1 and 2, and a few papers are noise in a few fits.
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], [30, 20, 20])
    fits = []
    for f in range(8):
        labels = truth.copy()
        labels[rng.choice(30, size=3, replace=False)] = 3  # a stray split of block 0
        if f % 4 == 0:
            labels[labels == 2] = 1
        labels[rng.choice(70, size=2, replace=False)] = OUTLIER
        fits.append(labels)
    groups = C.agree(np.stack(fits, axis=1), _blocks_graph([30, 20, 20]))
    assert adjusted_rand_score(truth, groups) == pytest.approx(1.0)
    assert groups[0] == 0  # numbered by size


def test_agree_stops_below_a_majority():
    # Two blocks joined in exactly 3 of 8 fits stay apart; in 5 of 8 they merge.
    truth = np.repeat([0, 1], 10)
    graph = _blocks_graph([10, 10])
    graph[9] = [9, 10, 11, 0]  # one edge across, so the blocks are neighbours
    for together, merged in ((3, False), (5, True)):
        fits = np.stack([np.zeros(20) if f < together else truth for f in range(8)], axis=1)
        groups = C.agree(fits.astype(np.int64), graph)
        assert (len(np.unique(groups)) == 1) is merged


def test_agree_never_joins_papers_the_graph_does_not_connect():
    fits = np.zeros((8, 4), dtype=np.int64)  # every fit puts all eight together
    graph = _blocks_graph([4, 4], k=2)  # but the graph has two components
    assert len(np.unique(C.agree(fits, graph))) == 2


def test_consensus_leaves_small_groups_to_outlier_assignment():
    fits = np.repeat(np.repeat([0, 1, 2], [10, 10, 3])[:, None], 4, axis=1)
    groups = C.consensus(fits, _blocks_graph([10, 10, 3], k=3), min_size=5)
    assert (groups[-3:] == OUTLIER).all() and (groups[:20] != OUTLIER).all()


def test_fit_seeds_differ_between_builds_and_repeat_within_one():
    a = {C.fit_seed(42, i) for i in range(C.FITS)}
    b = {C.fit_seed(7, i) for i in range(C.FITS)}
    assert len(a) == len(b) == C.FITS and not a & b
    assert [C.fit_seed(42, i) for i in range(3)] == [C.fit_seed(42, i) for i in range(3)]


def test_a_jittered_graph_is_a_graph_of_the_candidates():
    vectors = np.random.default_rng(3).normal(size=(200, 16)).astype(np.float32)
    candidates = knn_graph(vectors, 20)
    idx, dist = C.jittered_graph(vectors, candidates.indices, 10, seed=5)
    assert idx.shape == dist.shape == (200, 10)
    assert (idx[:, 0] == np.arange(200)).all() and (dist[:, 0] == 0).all()
    assert (np.diff(dist[:, 1:], axis=1) >= 0).all()  # nearest first
    assert all(set(row) <= set(c) for row, c in zip(idx, candidates.indices, strict=True))
    # A small move: most neighbours stay, some change, and the same seed repeats exactly.
    near = candidates.indices[:, :10]
    kept = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(idx, near, strict=True)])
    assert 0.6 < kept < 1.0
    again = C.jittered_graph(vectors, candidates.indices, 10, seed=5)
    assert np.array_equal(idx, again[0]) and np.array_equal(dist, again[1])


def test_candidate_cosines_by_blocks_are_the_cosines_of_one_gather(monkeypatch):
    rng = np.random.default_rng(4)
    # The build's shape: 30 candidates of 384 floats (more per row than numpy's buffer).
    unit = C.jittered(rng.normal(size=(603, 384)).astype(np.float32), seed=1)
    cand = knn_graph(unit, 30).indices.astype(np.int64)
    whole = np.einsum("ij,ikj->ik", unit, unit[cand])
    monkeypatch.setattr(C, "CANDIDATE_ROWS", 50)  # 13 blocks, the last of 3 rows
    assert np.array_equal(C.candidate_cosines(unit, cand), whole)


def test_stability_is_the_share_of_pairs_the_fits_keep_together():
    fits = np.array([[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 0, 0]]).T
    # Papers 0 and 1: together in fits 0, 1, 3 (3 of 4); papers 2 and 3 likewise.
    scores = C.stability(fits, {"a": np.array([0, 1]), "b": np.array([2, 3]), "c": [0]})
    assert scores == {"a": 0.75, "b": 0.75, "c": 1.0}


def test_mean_ari_of_identical_and_unrelated_labellings():
    a = np.repeat(np.arange(5), 40)
    assert C.mean_ari([a, a.copy(), a.copy()]) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    assert abs(C.mean_ari([a, rng.permutation(a)])) < 0.05


def _planted(n_topics=6, per_topic=60, dim=48, seed=0, scale=0.15):
    """Unit vectors around well-separated random directions: topics any seed finds."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_topics, dim))
    vectors = np.repeat(centres, per_topic, axis=0) + rng.normal(
        scale=scale, size=(n_topics * per_topic, dim)
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), np.repeat(np.arange(n_topics), per_topic)


@pytest.fixture(scope="module")
def planted_fits(tmp_path_factory):
    """The planted corpus's consensus under two seeds, and seed 42's again in a new cache."""
    vectors, truth = _planted()
    out = {}
    for name, seed in (("a", 42), ("b", 7), ("again", 42)):
        params = default_params(len(vectors), seed=seed)
        graph = knn_graph(vectors, 2 * params.n_neighbors)
        out[name] = partition(vectors, graph, params, tmp_path_factory.mktemp(name))
    return truth, out


def test_consensus_finds_planted_topics_whatever_the_seed(planted_fits):
    truth, fits = planted_fits
    for part in fits.values():
        assert adjusted_rand_score(truth, part.labels) >= 0.95
        assert part.fits.shape == (len(truth), C.FITS)
    assert adjusted_rand_score(fits["a"].labels, fits["b"].labels) >= 0.95
    # One seed, one run: bit for bit, whatever the cache held.
    assert np.array_equal(fits["a"].labels, fits["again"].labels)
    assert np.array_equal(fits["a"].fits, fits["again"].fits)


def test_a_short_list_gets_a_readers_grouping():
    # 40 papers in six planted subjects of unequal size: UMAP + HDBSCAN's blobs are not
    # what a reader sees; the short-list rule gives several topics, none over 30%.
    vectors, truth = _planted(n_topics=6, per_topic=7, dim=32, scale=0.3)
    vectors, truth = vectors[:40], truth[:40]
    params = default_params(len(vectors), seed=42)
    part = short_list(vectors, params)
    sizes = np.bincount(part.labels[part.labels != OUTLIER])
    assert 4 <= len(sizes) <= 10 and sizes.max() <= 0.3 * len(vectors)
    assert adjusted_rand_score(truth, part.labels) >= 0.8
    assert part.fits.shape == (40, C.FITS)
