import numpy as np
import pytest

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
    monkeypatch.setattr(project, "_fit_umap", lambda *a: calls.append(a[2:]) or real(*a))
    one, two = (project.UmapParams(2, 10, min_dist=0.1, seed=s) for s in (1, 2))
    first = project.reduce_umap(x, graph, one, cache_root=tmp_path)
    again = project.reduce_umap(x, graph, one, cache_root=tmp_path)
    assert len(calls) == 1 and np.array_equal(first, again) and first.shape == (60, 2)
    project.reduce_umap(x, graph, two, cache_root=tmp_path)  # another seed: computed
    reversed_x = x[::-1].copy()
    project.reduce_umap(reversed_x, knn_graph(reversed_x, 10), one, cache_root=tmp_path)
    assert len(calls) == 3
    for stored in (tmp_path / "reductions").glob("*.npy"):
        stored.write_bytes(b"torn")  # a torn file is recomputed, never trusted
    assert np.array_equal(project.reduce_umap(x, graph, one, cache_root=tmp_path), first)
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


def _planted(n: int = 2000, dims: int = 48, seed: int = 0) -> np.ndarray:
    """Unit vectors in 40 clusters of uneven spread, a few exact duplicates among them."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, dims))
    x = centres[rng.integers(40, size=n)] + rng.normal(size=(n, dims)) * rng.uniform(
        0.3, 1.0, size=(n, 1)
    )
    x[-5:] = x[:5]  # duplicates: each row must still come first in its own list
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_the_approximate_graph_keeps_the_contract_and_finds_the_exact_neighbours():
    x = _planted()
    exact = knn_graph(x, 15)
    approx = knn_graph(x, 15, exact_up_to=1000, seed=3)
    assert approx.indices.shape == exact.indices.shape == (2000, 15)
    assert np.array_equal(approx.indices[:, 0], np.arange(2000))
    assert np.all(approx.distances[:, 0] == 0)
    assert np.all(np.diff(approx.distances, axis=1) >= 0)
    assert np.all((approx.distances >= 0) & (approx.distances <= 2))
    unit = x.astype(np.float64)
    sims = np.einsum("id,ikd->ik", unit, unit[approx.indices[:, 1:]])
    assert np.allclose(approx.distances[:, 1:], 1 - sims, atol=1e-5)  # true cosine distances
    found = [
        len(set(a[1:11]) & set(e[1:11])) for a, e in zip(approx.indices, exact.indices, strict=True)
    ]
    assert np.mean(found) / 10 >= 0.95  # recall@10 against the exact graph


def test_the_approximate_graph_is_the_same_every_time():
    x = _planted(seed=1)
    first = knn_graph(x, 15, exact_up_to=1000, seed=7)
    again = knn_graph(x.copy(), 15, exact_up_to=1000, seed=7)
    assert np.array_equal(first.indices, again.indices)
    assert np.array_equal(first.distances, again.distances)


def test_a_corpus_no_larger_than_the_search_is_searched_whole_and_quietly():
    """Asked for every row (a test's tiny threshold), NN-descent warns of a slot it could not
    fill; the graph is still whole: every other row a candidate, so the exact distances."""
    import warnings

    x = _planted(n=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        approx = knn_graph(x, 15, exact_up_to=0, seed=0)
    assert np.array_equal(approx.indices[:, 0], np.arange(40))
    assert np.allclose(approx.distances, knn_graph(x, 15).distances, atol=1e-5)


def test_below_the_threshold_the_graph_is_exact():
    x = _planted(n=300)
    assert np.array_equal(knn_graph(x, 10).indices, knn_graph(x, 10, exact_up_to=300).indices)
    from explorer.build.projection import approximate_method

    assert approximate_method(300, 300) is None and approximate_method(301, 300)


def test_the_build_graph_follows_the_configured_threshold(monkeypatch):
    from types import SimpleNamespace

    from explorer.build import projection, stages

    calls = []
    real = projection._approximate
    monkeypatch.setattr(projection, "_approximate", lambda *a: calls.append(a[1:]) or real(*a))
    x = _planted(n=400)
    plan = SimpleNamespace(
        params=SimpleNamespace(n_neighbors=15, seed=5),
        config=SimpleNamespace(exact_neighbours_up_to=100),
    )
    graph = stages.neighbours(plan, stages.Embedded(vectors=x, n_new=0))
    # Twice UMAP's neighbours: the candidates of each consensus fit's jittered graph.
    assert calls == [(30, 5)] and graph.indices.shape == (400, 30)


@pytest.mark.realbuild
def test_a_build_above_the_threshold_writes_a_run_that_reads_back(seed_cache, seed_run, tmp_path):
    """The whole build with the approximate graph (the threshold set below the seed corpus):
    the manifest records the method and reads back as a complete run (a million-paper build
    once failed at its very end on this record)."""
    import shutil

    from explorer import artifacts
    from explorer.build.pipeline import build
    from explorer.build.projection import NNDESCENT
    from tests.conftest import SEED_DIR, build_config

    cache = tmp_path / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")  # vectors only
    config = build_config("seed", [SEED_DIR], exact_neighbours_up_to=10)
    run = build(config, cache_dir=cache, progress=False, log=lambda m: None).run
    assert run.manifest.config.neighbours == dict(NNDESCENT)
    assert run.run_id != seed_run.run_id
    assert artifacts.open_run(cache, "seed").manifest == run.manifest
