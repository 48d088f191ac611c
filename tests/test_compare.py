"""Compare: years inside one corpus, and one corpus's topics against another's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer.manifest import RunConfig
from explorer.view.compare import (
    PRESENT_SHARE,
    compare_corpora,
    incomparable,
    match_topics,
    topic_centroids,
    year_shares,
)
from tests.conftest import ROOT


def test_a_corpus_compared_with_itself_matches_every_topic_to_itself(seed_run):
    papers, topics = seed_run.table("papers"), seed_run.table("topics")
    vectors = seed_run.array("embeddings")
    out = compare_corpora(papers, topics, vectors, papers, topics, vectors)
    real = sorted(t for t in topics["topic_id"] if t != "-1")
    assert sorted(out.matches["a"]) == real and (out.matches["a"] == out.matches["b"]).all()
    assert out.only_a.empty and out.only_b.empty
    assert out.matches["cosine"].min() == pytest.approx(1.0, abs=1e-3)


def test_a_topic_planted_only_in_the_later_year_is_emerging():
    rng = np.random.default_rng(0)
    early = pd.DataFrame({"year": 2008, "topic": rng.choice(["0", "1", "2"], 400)})
    late = pd.DataFrame({"year": 2018, "topic": rng.choice(["0", "1", "2", "3"], 400)})
    papers = pd.concat([early, late], ignore_index=True)
    papers.loc[papers.index[:40], "topic"] = "4"  # only in 2008: fading
    table = year_shares(papers, papers["topic"], 2008, 2018).set_index("node_id")
    assert table.loc["3", "status"] == "emerging" and table.loc["3", "share_a"] == 0
    assert table.loc["4", "status"] == "fading" and table.loc["4", "share_b"] == 0
    assert set(table.loc[["0", "1", "2"], "status"]) == {""}
    assert table.loc["3", "share_b"] >= PRESENT_SHARE
    assert abs(table["shift"]).is_monotonic_decreasing  # largest shifts first


def _blobs(centres: np.ndarray, members: list[int], noise: float, rng) -> np.ndarray:
    vectors = np.repeat(centres, members, axis=0) + rng.normal(
        scale=noise, size=(sum(members), centres.shape[1])
    )
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_planted_topic_split_in_b_matches_one_to_two():
    rng = np.random.default_rng(2)
    dim = 64
    centres = rng.normal(size=(4, dim))
    a_vectors = _blobs(centres, [50] * 4, 0.02, rng)
    a_topics = pd.Series(np.repeat(["0", "1", "2", "3"], 50))
    # In B, topic 3 of A is two topics: its centre nudged two ways, slightly.
    nudge = rng.normal(size=dim) * 0.12
    b_centres = np.vstack([centres[:3], centres[3] + nudge, centres[3] - nudge])
    b_vectors = _blobs(b_centres, [50] * 5, 0.02, rng)
    b_topics = pd.Series(np.repeat(["0", "1", "2", "3", "4"], 50))
    ids_a, cent_a = topic_centroids(a_vectors, a_topics)
    ids_b, cent_b = topic_centroids(b_vectors, b_topics)
    pairs = match_topics(ids_a, cent_a, ids_b, cent_b)
    links = pairs.groupby("a")["b"].apply(sorted).to_dict()
    assert links == {"0": ["0"], "1": ["1"], "2": ["2"], "3": ["3", "4"]}


def test_runs_of_another_model_or_precision_are_refused():
    config = RunConfig(
        embedding_model="m", embedding_model_id="m1", embedding_weights="w",
        embedding_precision="f", seed=1, min_topic_size=None, params={}, read_options={},
    )  # fmt: skip
    assert incomparable(config, replace(config)) is None
    assert "model" in incomparable(config, replace(config, embedding_model_id="m2"))
    assert "precision" in incomparable(config, replace(config, embedding_precision="bfloat16"))


@pytest.fixture
def compare_cache(seed_cache, tmp_path, monkeypatch):
    """The seed corpus twice (as `seed` and `again`) and a synthetic corpus of another model."""
    import shutil

    from explorer.view.ui.data import load_run
    from tests.synthetic import write_synthetic_run

    for name in ("seed", "again"):
        shutil.copytree(seed_cache / "seed", tmp_path / name)
    write_synthetic_run(tmp_path, "syn", 700, n_topics=10)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    load_run.clear()
    return tmp_path


def _compare_page(**params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("pages/compare.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_compare_page_in_years_mode(compare_cache):
    from tests.conftest import shown

    at = _compare_page(corpus="syn", years="2014,2018")
    assert at.selectbox(key="cmp_from").value == 2014 and at.selectbox(key="cmp_to").value == 2018
    assert "emerging and" in shown(at.caption[0].value)
    table = at.dataframe[0].value
    assert {"node", "status", "share_a", "share_b", "shift"} <= set(table.columns)
    assert table["open"].str.startswith("./topics?corpus=syn&topic=").all()  # links carry ids
    assert at.query_params["years"] == "2014,2018"


def test_a_link_s_mode_opens_two_corpora_without_a_or_b(seed_cache, monkeypatch):
    """With one corpus, A and B are both the default, which Streamlit leaves out of the URL:
    ?mode=corpora alone must reopen two corpora (tests/e2e/test_compare_page.py checks the
    browser writes it)."""
    from explorer.view.ui.data import load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(seed_cache))
    load_run.clear()
    assert _compare_page().radio(key="mode").value == "years"
    at = _compare_page(mode="corpora")
    assert at.radio(key="mode").value == "corpora"
    # Nothing to compare it with: the page says so rather than match it to itself.
    assert "Only one corpus is built here" in at.info[0].value and not at.dataframe


def test_the_compare_page_matches_a_corpus_with_its_copy_and_refuses_another_model(
    compare_cache,
):
    from tests.conftest import shown

    at = _compare_page(a="seed", b="again")
    assert at.radio(key="mode").value == "corpora"
    matches = at.dataframe[0].value
    assert (matches["a"] == matches["b"]).all() and len(matches) > 0
    assert "0 topics only in seed, 0 only in again" in shown(at.caption[0].value)
    at.selectbox(key="b").set_value("syn").run()
    assert any("cannot be compared" in shown(e.value) for e in at.error)
    fresh = _compare_page(a="seed", b="syn")  # the same view from a link
    assert any("cannot be compared" in shown(e.value) for e in fresh.error)
    same = _compare_page(a="seed", b="seed")
    assert "Pick two different corpora" in same.info[0].value and not same.dataframe


def test_topic_centroids_in_blocks_equal_the_mean_of_each_topic(monkeypatch):
    import numpy as np
    import pandas as pd

    from explorer import vectors as V
    from explorer.vectors import normalise_rows, unit_float16
    from explorer.view import compare

    vectors = unit_float16(np.random.default_rng(0).normal(size=(500, 8)))
    topics = pd.Series(np.random.default_rng(1).choice(["-1", "0", "1", "10", "2"], 500))
    monkeypatch.setattr(V, "ROW_BLOCK", 37)  # blocks that split every topic
    ids, centroids = compare.topic_centroids(vectors, topics)
    assert ids == ["0", "1", "2", "10"]
    wide = vectors.astype(np.float32)
    expected = normalise_rows(np.stack([wide[topics.to_numpy() == t].mean(axis=0) for t in ids]))
    np.testing.assert_allclose(centroids, expected, atol=1e-6)


def test_the_sankey_colours_each_topic_as_its_corpus_does():
    """Plotly's own node colours gave one topic another colour on each side of the chart and
    on every other page."""
    from explorer.view.charts.comparisons import topic_sankey

    matches = pd.DataFrame(
        {"a": ["0", "0", "2"], "b": ["1", "3", "0"], "label_a": ["x", "x", "y"],
         "label_b": ["p", "q", "r"], "size_a": [9, 9, 4], "size_b": [5, 4, 6],
         "cosine": [0.9, 0.8, 0.95]}
    )  # fmt: skip
    colors_a = {"0": "#111111", "2": "#222222"}
    colors_b = {"0": "#aaaaaa", "1": "#bbbbbb", "3": "#cccccc"}
    node = topic_sankey(matches, "A", "B", colors_a, colors_b).data[0].node
    assert list(node.color) == ["#111111", "#222222", "#bbbbbb", "#cccccc", "#aaaaaa"]
    assert [label.split(":")[0] for label in node.label] == ["0", "2", "1", "3", "0"]
