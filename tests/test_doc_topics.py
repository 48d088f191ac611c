"""Per-paper topic mixes (summaries.doc_topic_distribution), scored a block of papers at a time."""

from __future__ import annotations

import numpy as np

from explorer.build import summaries
from explorer.build.topics import OUTLIER


def _whole(vectors: np.ndarray, labels: np.ndarray, centroids: np.ndarray, ids: np.ndarray):
    """The mixes computed over every paper at once: the softmax the blocks must reproduce."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit @ centroids.T
    weights = np.exp((sims - sims.max(axis=1, keepdims=True)) / summaries.DISTRIBUTION_TEMPERATURE)
    weights /= weights.sum(axis=1, keepdims=True)
    own = [list(ids).index(t) if t != OUTLIER else -1 for t in labels]
    assigned = np.array([weights[i, c] if c >= 0 else 0.0 for i, c in enumerate(own)])
    return weights, assigned


def test_blocks_give_every_paper_its_softmax_top_topics_and_own_share(monkeypatch):
    rng = np.random.default_rng(0)
    ids = np.array([0, 1, 2, 3, 4, 5, 6])
    centroids = rng.normal(size=(len(ids), 8)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    vectors = rng.normal(size=(23, 8)).astype(np.float32)
    labels = rng.choice([*ids, OUTLIER], size=23)
    monkeypatch.setattr(summaries, "DISTRIBUTION_BLOCK", 5)  # 23 papers: five blocks
    table, assigned = summaries.doc_topic_distribution(vectors, labels, centroids, ids)
    weights, expected = _whole(vectors, labels, centroids, ids)
    k = summaries.TOP_TOPICS_PER_DOC
    assert len(table) == 23 * k
    assert np.array_equal(table["doc"], np.repeat(np.arange(23), k))
    assert np.array_equal(table["rank"], np.tile(np.arange(1, k + 1), 23))
    best = np.argsort(-weights, axis=1)[:, :k]
    assert np.array_equal(table["topic_id"].to_numpy().reshape(23, k), ids[best])
    top_weights = np.take_along_axis(weights, best, axis=1).ravel()
    assert np.allclose(table["score"], top_weights, atol=1e-6)
    assert np.allclose(assigned, expected, atol=1e-6)
    assert np.all(assigned[labels == OUTLIER] == 0)
    assert table["score"].dtype == np.float32 and assigned.dtype == np.float32


def test_fewer_topics_than_the_top_list_rank_them_all():
    ids = np.array([3, 7])
    vectors = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    table, assigned = summaries.doc_topic_distribution(
        vectors, np.array([3, 7, OUTLIER]), np.eye(2, dtype=np.float32), ids
    )
    assert table.groupby("doc")["rank"].max().tolist() == [2, 2, 2]
    assert table.loc[table["rank"] == 1, "topic_id"].tolist()[:2] == [3, 7]
    assert assigned[0] > 0.5 and assigned[1] > 0.5 and assigned[2] == 0


def test_no_papers_give_an_empty_mix():
    ids = np.array([0, 1])
    table, assigned = summaries.doc_topic_distribution(
        np.zeros((0, 4), np.float32), np.zeros(0, int), np.eye(2, 4, dtype=np.float32), ids
    )
    assert len(table) == 0 and len(assigned) == 0
