"""The seed corpus (38 ICML 2025 abstracts) as a reader would group it, and the stability
every build now scores from its consensus fits. Properties only: they must hold under
`EXPLORER_TEST_SEED=42`, `7` and `2026` (`pytest -m realbuild`)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from explorer import cli
from explorer.node_ids import OUTLIER_ID
from tests.conftest import ROOT


@pytest.mark.realbuild
def test_the_seed_corpus_is_several_subjects_none_dominant(seed_run):
    papers = seed_run.table("papers")
    topics = seed_run.table("topics")
    real = topics[topics["topic_id"] != OUTLIER_ID]
    share = papers["topic_id"].value_counts(normalize=True)
    assert 4 <= len(real) <= 8, real[["topic_id", "size"]]
    assert share.drop(OUTLIER_ID, errors="ignore").max() <= 0.30
    assert (papers["topic_id"] == OUTLIER_ID).mean() <= 0.10
    assert real["label"].str.strip().str.len().gt(0).all()


@pytest.mark.realbuild
def test_a_short_lists_map_shows_its_topics_as_regions(seed_run):
    """Laid out by similarity alone, 38 papers scattered every topic over the map
    (silhouette of the topics on the map ~0.1); a short list's map keeps them together."""
    from sklearn.metrics import silhouette_score

    papers = seed_run.table("papers")
    real = papers[papers["topic_id"] != OUTLIER_ID]
    assert silhouette_score(real[["x", "y"]].to_numpy(), real["topic_id"]) >= 0.3


@pytest.mark.realbuild
def test_a_short_lists_levels_each_group_something(seed_run):
    nodes = seed_run.table("nodes")
    n = len(seed_run.table("papers"))
    for level in ("area", "subtopic"):
        sizes = nodes.loc[nodes["level"] == level, "size"]
        assert len(sizes) == 0 or len(sizes) < n, f"one {level} per paper"
    if seed_run.manifest.counts.levels.has_areas:
        topics_per_area = nodes[nodes["level"] == "topic"].groupby("parent_id").size()
        assert topics_per_area.min() >= 2, "an area holding a single topic"


@pytest.mark.realbuild
def test_every_build_scores_its_topics_stability(seed_cache, seed_run, tmp_path):
    topics = seed_run.table("topics")
    real = topics[topics["topic_id"] != OUTLIER_ID]
    assert real["stability"].between(0, 1).all()
    counts = seed_run.manifest.counts.stability
    assert counts.refits >= 2 and -1 <= counts.mean_ari <= 1
    nodes = seed_run.table("nodes")
    scored = nodes[nodes["level"] != "area"]
    assert scored["stability"].between(0, 1).all()
    out = tmp_path / "export.csv"
    assert cli.main(["--cache-dir", str(seed_cache), "export", "seed", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert all(r["stability"] != "" for r in rows if r["topic_id"] != OUTLIER_ID)


@pytest.mark.realbuild
def test_the_stability_filter_hides_less_stable_topics(seed_cache, seed_run, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from explorer.view.ui.data import load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(seed_cache))
    load_run.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/topics.py").run()
    assert "stability" in at.dataframe[0].value.columns
    at.switch_page("pages/topic_map.py").run()
    assert "topic stability" in at.get("plotly_chart")[0].proto.spec  # the map's hover
    shown = int(at.caption[0].value.split(" of ")[0])
    at.slider(key="min_stability").set_value(1.0).run()
    stable = int(at.caption[0].value.split(" of ")[0])
    papers, topics = seed_run.table("papers"), seed_run.table("topics")
    real = topics[topics["topic_id"] != OUTLIER_ID]
    expected = (papers["topic_id"] == OUTLIER_ID).sum() + sum(
        int(n) for n, s in zip(real["size"], real["stability"], strict=True) if s >= 1.0
    )
    assert stable == expected and stable <= shown
    assert np.isfinite(real["stability"]).all()


def test_stability_k_is_retired_with_one_line(tmp_path, capsys):
    argv = ["--cache-dir", str(tmp_path), "build", str(ROOT / "data" / "icml2025"),
            "--name", "seed", "--stability", "3", "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--stability is retired" in err
    assert not (tmp_path / "seed").exists()
