"""The Ray engine on a real two-node Ray cluster on this machine (tests/ray_cluster.py):
a head node and a worker node joining it, in a private network namespace where they bind
to 127.0.0.1, started and stopped by the fixture.

The seed corpus is built three times into cold caches of their own: through the cluster,
with the local engine, and through the cluster while an actor dies after its first chunk
(the first to finish one, on whichever node Ray Data handed it to). Checked: the engines' vectors (bit-identical at the default chunk size),
run ids and every artifact; the fault's outcome; and that the local engine never imports
ray.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts
from explorer.build.embed import EmbeddingCache, text_key
from tests.conftest import BUILD_SEED, ROOT, SEED_ARGS, SEED_DIR
from tests.ray_cluster import namespace_tools, run_in_namespace

pytestmark = pytest.mark.slow
TABLES = ("papers", "topics", "nodes", "doc_topics", "neighbors", "keywords")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> dict:
    pytest.importorskip("ray", reason="the Ray engine's extra: pip install '.[ray]'")
    if why := namespace_tools():
        pytest.fail(f"the Ray tests need a private network namespace: {why}")
    workdir = tmp_path_factory.mktemp("ray")
    done = run_in_namespace(
        "tests.ray_cluster", "build", str(workdir), str(SEED_DIR), str(BUILD_SEED)
    )  # the builds run in the namespace, out of the seed guard's sight: checked below
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((workdir / "result.json").read_text())
    result["workdir"] = workdir
    return result


def run_of(scenario: dict, cache: str) -> artifacts.Run:
    run = artifacts.open_run(scenario["workdir"] / cache, "seed")
    assert run.manifest.config.seed == BUILD_SEED  # EXPLORER_TEST_SEED reached it
    return run


def vectors(run: artifacts.Run) -> np.ndarray:
    """The run's papers' float32 vectors from its embedding cache (the stored run keeps
    float16 only)."""
    config = run.manifest.config
    cache = EmbeddingCache(
        run.path.parents[1],
        config.embedding_model,
        weights=config.embedding_weights,
        precision=config.embedding_precision,
    )
    known = cache.load()
    from explorer.build.sources import read_inputs

    texts = [p.text for p in read_inputs([str(SEED_DIR)]).papers]
    return np.stack([known[text_key(t)] for t in texts])


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.realbuild
def test_the_cluster_has_two_nodes_and_both_builds_succeed(scenario):
    assert scenario["nodes"] == 2
    for name in ("ray", "local"):
        assert scenario[name]["status"] == 0, scenario[name]["stderr"][-2000:]
    assert "Ray: 2 node(s), 2 CPUs" in scenario["ray"]["stderr"]
    assert "embedded: 38 new, 0 from cache" in scenario["ray"]["stdout"]


def same_run(a: artifacts.Run, b: artifacts.Run) -> None:
    """The same run id, vectors and artifacts. Keyword weights are KeyBERT scores of
    candidate words embedded in the build's own process: two local cold builds differ in
    them too (about 1e-4), so they are compared at 1e-3; every label is compared exactly."""
    np.testing.assert_array_equal(vectors(a), vectors(b))
    assert a.run_id == b.run_id  # the engine is not part of the run id
    for name in TABLES:
        x, y = a.table(name), b.table(name)
        if name == "topics":
            weights = [np.array(list(w), dtype=float) for w in (x, y) for w in w["keyword_weights"]]
            half = len(weights) // 2
            for left, right in zip(weights[:half], weights[half:], strict=True):
                np.testing.assert_allclose(left, right, atol=1e-3)
            x, y = x.drop(columns="keyword_weights"), y.drop(columns="keyword_weights")
        pd.testing.assert_frame_equal(x, y, obj=name)
    np.testing.assert_array_equal(a.array("embeddings"), b.array("embeddings"))


@pytest.mark.realbuild
def test_ray_vectors_are_bit_identical_and_so_is_every_artifact(scenario):
    same_run(run_of(scenario, "ray"), run_of(scenario, "local"))


@pytest.mark.realbuild
def test_a_node_whose_actor_dies_is_retried_and_the_build_finishes(scenario):
    fault = scenario["fault"]
    assert scenario["fault_marker"], "the hook fired: an actor exited mid-build"
    assert fault["status"] == 0, fault["stderr"][-2000:]
    assert "will be retried" in fault["stdout"] + fault["stderr"]  # Ray said what it did
    assert "embedded: 38 new, 0 from cache" in fault["stdout"]
    # The lost chunk was encoded again: every vector is there and equal to the local one.
    same_run(run_of(scenario, "fault-cache"), run_of(scenario, "local"))


def test_the_local_engine_never_imports_ray(seed_cache, tmp_path):
    import shutil

    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")  # the fit still runs
    code = (
        "import sys\n"
        "from explorer.cli import main\n"
        f"status = main(['--cache-dir', {str(tmp_path)!r}, 'build', {str(SEED_DIR)!r}, "
        f"'--name', 'seed', '--no-progress', *{SEED_ARGS!r}])\n"
        "assert status == 0 and 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = artifacts.open_run(tmp_path, "seed").manifest
    assert manifest.counts.papers == 38 and manifest.config.seed == BUILD_SEED


def test_ray_options_without_the_ray_engine_are_one_line(tmp_path, capsys):
    from explorer.cli import main

    argv = ["--cache-dir", str(tmp_path), "build", str(SEED_DIR), "--name", "seed", *SEED_ARGS]
    assert main([*argv, "--ray-batch-size", "16"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "need --engine ray" in err, err
    assert main([*argv, "--engine", "ray", "--ray-batch-size", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "at least 1" in err, err
    assert not (tmp_path / "seed").exists()


def test_the_ray_engine_without_ray_installed_is_one_line(tmp_path, capsys, monkeypatch):
    import importlib.util

    from explorer.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    argv = ["--cache-dir", str(tmp_path), "build", str(SEED_DIR), "--name", "seed", *SEED_ARGS]
    assert main([*argv, "--engine", "ray"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install '.[ray]'" in err, err
    assert not (tmp_path / "seed").exists()
