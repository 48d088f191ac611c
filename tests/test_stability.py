"""Per-topic stability: planted, well-separated topics score high under refits with other
seeds; a real topic split in two at random scores low for both halves."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.build.stability import (
    jaccard_matrix,
    mean_ari,
    partner_jaccard,
    refit_labels,
    topic_stability,
)
from tests.conftest import ROOT, SEED_ARGS, SEED_DIR


def test_partner_jaccard_is_a_one_to_one_assignment():
    base = np.array([0, 0, 0, 0, 1, 1, 1, 1, -1])
    same_renamed = np.array([5, 5, 5, 5, 2, 2, 2, 2, -1])
    assert partner_jaccard(base, same_renamed) == {0: 1.0, 1: 1.0}
    merged = np.array([0] * 8 + [-1])  # both base topics are one topic here
    scores = partner_jaccard(base, merged)
    assert sorted(scores.values()) == [0.0, 0.5]  # one partner only: the other gets none
    matrix, ta, tb = jaccard_matrix(base, merged)
    assert matrix.shape == (2, 1) and list(ta) == [0, 1] and list(tb) == [0]


def test_mean_ari_of_identical_and_unrelated_labellings():
    a = np.repeat(np.arange(5), 40)
    assert mean_ari([a, a.copy(), a.copy()]) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    assert abs(mean_ari([a, rng.permutation(a)])) < 0.05


def _planted(n_topics=6, per_topic=120, dim=48, seed=0):
    """Unit vectors around well-separated random directions: topics any seed finds."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_topics, dim))
    vectors = np.repeat(centres, per_topic, axis=0) + rng.normal(
        scale=0.15, size=(n_topics * per_topic, dim)
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), np.repeat(np.arange(n_topics), per_topic)


@pytest.fixture(scope="module")
def refits(tmp_path_factory):
    """The planted corpus refitted with three seeds, as `explorer build --stability 3` does."""
    from explorer.build.projection import knn_graph
    from explorer.build.topics import default_params

    vectors, truth = _planted()
    cache = tmp_path_factory.mktemp("stability-cache")
    params = default_params(len(vectors), seed=42)
    graph = knn_graph(vectors, params.n_neighbors)
    fits = [refit_labels(vectors, graph, params, seed, cache) for seed in (42, 43, 44, 45)]
    return truth, fits


def test_planted_well_separated_topics_are_stable(refits):
    _, (base, *others) = refits
    scores = topic_stability(base, others)
    assert len(scores) == 6
    assert min(scores.values()) >= 0.9, scores
    assert mean_ari([base, *others]) >= 0.9


def test_a_topic_split_at_random_scores_low_for_both_halves(refits):
    _, (base, *others) = refits
    rng = np.random.default_rng(1)
    split = base.copy()
    members = np.flatnonzero(base == 0)
    half = rng.choice(members, size=len(members) // 2, replace=False)
    split[half] = base.max() + 1  # a planted random split of a real topic
    scores = topic_stability(split, others)
    assert scores[0] <= 0.6 and scores[int(base.max()) + 1] <= 0.6, scores
    assert all(scores[t] >= 0.9 for t in scores if t not in (0, int(base.max()) + 1))


@pytest.fixture(scope="module")
def stable_cache(tmp_path_factory):
    """The seed corpus built with --stability 2."""
    from explorer import cli

    cache = tmp_path_factory.mktemp("stability-build")
    seed = str(SEED_DIR)
    argv = [
        "--cache-dir",
        str(cache),
        "build",
        seed,
        "--name",
        "seed",
        "--stability",
        "2",
        *SEED_ARGS,
    ]
    assert cli.main([*argv, "--no-progress"]) == 0
    return cache


@pytest.mark.realbuild
def test_a_stability_build_scores_every_topic_and_shows_it(stable_cache, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from explorer import artifacts, cli
    from explorer.view.ui.data import load_run

    run = artifacts.open_run(stable_cache, "seed")
    topics = run.table("topics")
    real = topics[topics["topic_id"] != "-1"]
    assert real["stability"].between(0, 1).all()
    counts = run.manifest.counts.stability
    assert counts.refits == 2 and -1 <= counts.mean_ari <= 1
    assert run.manifest.config.stability == 2  # K is part of the run id
    out = tmp_path / "export.csv"
    assert cli.main(["--cache-dir", str(stable_cache), "export", "seed", "--out", str(out)]) == 0
    import csv

    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert all(r["stability"] != "" for r in rows if r["topic_id"] != "-1")
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(stable_cache))
    load_run.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/topics.py").run()
    assert "stability" in at.dataframe[0].value.columns
    at.switch_page("pages/topic_map.py").run()
    assert "topic stability" in at.get("plotly_chart")[0].proto.spec  # the map's hover
    shown = int(at.caption[0].value.split(" of ")[0])
    at.slider(key="min_stability").set_value(1.0).run()
    stable = int(at.caption[0].value.split(" of ")[0])
    assert stable == (run.table("papers")["topic_id"] == "-1").sum() + sum(
        int(n) for n, s in zip(real["size"], real["stability"], strict=True) if s >= 1.0
    )
    assert stable <= shown
