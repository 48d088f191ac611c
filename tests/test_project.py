import numpy as np

from explorer.project import knn_graph


def test_knn_graph_is_exact_cosine_with_self_first():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 16)).astype(np.float32)
    graph = knn_graph(x, 8)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, np.inf)
    expected = np.argsort(-sims, axis=1, kind="stable")[:, :8]
    assert np.array_equal(graph.indices, expected)
    assert np.allclose(graph.distances[:, 0], 0)
    assert np.all(np.diff(graph.distances, axis=1) >= -1e-6)


def test_knn_graph_handles_duplicates_and_k_above_n():
    x = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
    graph = knn_graph(x, 10)
    assert graph.indices.shape == (3, 3)
    assert list(graph.indices[:, 0]) == [0, 1, 2]
