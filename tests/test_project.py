import numpy as np

from explorer.build.projection import knn_graph


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


def test_reductions_are_cached_by_content_and_parameters(tmp_path, monkeypatch):
    from explorer.build import projection as project

    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 8)).astype(np.float32)
    graph = knn_graph(x, 10)
    calls = []
    real = project._fit_umap
    monkeypatch.setattr(project, "_fit_umap", lambda *a: calls.append(a[4:]) or real(*a))
    kwargs = {"n_components": 2, "n_neighbors": 10, "min_dist": 0.1, "cache_root": tmp_path}
    first = project.reduce_umap(x, graph, seed=1, **kwargs)
    again = project.reduce_umap(x, graph, seed=1, **kwargs)
    assert len(calls) == 1 and np.array_equal(first, again) and first.shape == (60, 2)
    project.reduce_umap(x, graph, seed=2, **kwargs)  # another seed: computed
    project.reduce_umap(x[::-1].copy(), knn_graph(x[::-1].copy(), 10), seed=1, **kwargs)
    assert len(calls) == 3
    for stored in (tmp_path / "reductions").glob("*.npy"):
        stored.write_bytes(b"torn")  # a torn file is recomputed, never trusted
    assert np.array_equal(project.reduce_umap(x, graph, seed=1, **kwargs), first)
    assert len(calls) == 4


def test_umap_kernels_are_cached_on_disk(seed_run):
    """After a build, numba's cache holds umap kernels that umap itself never caches.

    umap declares a few kernels cache=True on its own (layouts' rdist, the epoch loop);
    smooth_knn_dist and compute_membership_strengths it does not, so their index files
    exist only because explorer.build.projection turns caching on.
    """
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "import umap.umap_ as u; from numba.core.caching import NullCache; "
        "print(all(isinstance(k._cache, NullCache) for k in (u.smooth_knn_dist, "
        "u.compute_membership_strengths)))"
    )
    fresh = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert fresh.stdout.strip() == "True", fresh.stderr[-500:]
    cache = Path(os.environ["NUMBA_CACHE_DIR"])
    for kernel in ("umap_.smooth_knn_dist", "umap_.compute_membership_strengths"):
        assert list(cache.rglob(f"{kernel}-*.nbi")), f"{kernel} was not cached in {cache}"
