"""Areas, topics and subtopics: every paper has one path, and the levels find real structure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.build.levels import (
    MIN_TOPICS_FOR_AREAS,
    SPLIT_SHARE,
    area_count,
    build_levels,
    cut_areas,
    split_decisions,
)
from explorer.node_ids import OUTLIER_ID


def _blobs(rng, centre, n, spread=0.05):
    return centre + rng.normal(scale=spread, size=(n, len(centre)))


def planted(seed: int = 0):
    """1,680 papers in 32-D: a dominant topic (240, 14%) made of three clear sub-fields of
    80, and forty small topics of 36 (2% each, below the split threshold)."""
    rng = np.random.default_rng(seed)
    field = rng.normal(size=32)
    subfields = [field + rng.normal(scale=0.6, size=32) for _ in range(3)]
    others = [rng.normal(size=32) * 1.5 for _ in range(40)]
    vectors = np.vstack(
        [_blobs(rng, c, 80, 0.12) for c in subfields] + [_blobs(rng, c, 36, 0.12) for c in others]
    ).astype(np.float32)
    topics = np.array([0] * 240 + [t for t in range(1, 41) for _ in range(36)])
    truth = np.array([0] * 80 + [1] * 80 + [2] * 80 + [-1] * 1440)
    return vectors, topics, truth


def test_the_dominant_fields_three_subfields_are_found_as_subtopics():
    vectors, topics, truth = planted()
    levels = build_levels(vectors, topics, min_topic_size=10, seed=42)
    sub = levels.subtopic[:240]
    assert all(s.startswith("0.") for s in sub)  # every member of the split topic has one
    for field in range(3):
        members = sub[truth[:240] == field]
        values, counts = np.unique(members, return_counts=True)
        best = values[counts.argmax()]
        in_field = counts.max() / len(members)  # the field is found as one subtopic...
        purity = (truth[:240][sub == best] == field).mean()  # ...that holds little else
        assert in_field >= 0.8 and purity >= 0.8, (field, values, counts)
    assert not any(s.startswith(("1.", "2.")) for s in levels.subtopic)  # small ones: no split


def test_small_topics_without_structure_keep_no_subtopics():
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(100, 16)).astype(np.float32)
    topics = np.array([0] * 50 + [1] * 50)  # 50% each: both considered, neither has structure
    levels = build_levels(vectors, topics, min_topic_size=10, seed=42)
    assert set(levels.subtopic.tolist()) <= {""} | {f"{t}.{i}" for t in (0, 1) for i in range(9)}
    for topic in (0, 1):
        split = any(s.startswith(f"{topic}.") for s in levels.subtopic)
        assert split or topic in levels.unsplit


def test_only_a_topic_over_the_split_share_is_split():
    sizes = np.array([101, 100, 80])  # 5.05%, 5% and 4% of 2,000 papers
    assert split_decisions(sizes, 2000).tolist() == [True, False, False]


def test_a_heterogeneous_topic_under_the_split_share_stays_whole():
    """Two far-apart fields of 40 papers under one topic id (the least cohesive topic, 80
    papers, 4.8%): the build keeps it whole, and does not list it as considered."""
    rng = np.random.default_rng(3)
    tight = [_blobs(rng, rng.normal(size=16) * 1.5, 40, 0.05) for _ in range(40)]
    mixed = [_blobs(rng, rng.normal(size=16) * 1.5, 40, 0.05) for _ in range(2)]
    vectors = np.vstack(mixed + tight).astype(np.float32)
    topics = np.array([0] * 80 + [t for t in range(1, 41) for _ in range(40)])
    levels = build_levels(vectors, topics, min_topic_size=10, seed=42)
    assert set(levels.subtopic.tolist()) == {""} and levels.unsplit == {}


def test_areas_are_cut_one_per_five_topics_keeping_related_topics_together():
    """Six planted fields of five topics each: six areas, each field whole."""
    rng = np.random.default_rng(2)
    groups = [rng.normal(size=16) for _ in range(6)]
    centroids = np.vstack([g + rng.normal(scale=0.05, size=(5, 16)) for g in groups])
    areas = cut_areas(centroids, np.full(30, 10))
    assert len(set(areas.tolist())) == 6
    assert all(len(set(areas[i * 5 : i * 5 + 5].tolist())) == 1 for i in range(6))
    few = cut_areas(centroids[:5], np.arange(5) + 1)  # too few topics: each is its own area
    assert sorted(few.tolist()) == [0, 1, 2, 3, 4] and few[4] == 0  # largest first


@given(st.integers(MIN_TOPICS_FOR_AREAS, 200), st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_the_area_count_follows_the_topic_count_alone(n_topics, seed):
    """Whatever the topics' positions (a reseed moves them a little, a flat silhouette
    curve then picked another count): one area per five topics, 5 to 15, fewer than the
    topics."""
    centroids = np.random.default_rng(seed).normal(size=(n_topics, 8))
    areas = cut_areas(centroids, np.ones(n_topics, dtype=int))
    expected = min(max(5, min(15, round(n_topics / 5))), n_topics - 1)
    assert len(set(areas.tolist())) == expected == area_count(n_topics)


def test_seed_build_paths_are_complete_and_sizes_add_up(seed_run):
    papers, nodes = seed_run.table("papers"), seed_run.table("nodes")
    assert (
        papers["area_id"].map(type).eq(str).all() and papers["subtopic_id"].map(type).eq(str).all()
    )
    real = papers["topic_id"] != OUTLIER_ID
    assert (papers.loc[~real, "area_id"] == OUTLIER_ID).all()
    assert (papers.loc[~real, "subtopic_id"] == "").all()
    by_id = nodes.set_index("node_id")
    for row in papers[real].itertuples():
        assert by_id.loc[str(row.topic_id), "parent_id"] == row.area_id
        if row.subtopic_id:
            assert by_id.loc[row.subtopic_id, "parent_id"] == str(row.topic_id)
    for node in nodes.itertuples():
        children = nodes[nodes["parent_id"] == node.node_id]
        if len(children):
            assert children["size"].sum() == node.size, node.node_id
        if node.level == "area":
            assert not isinstance(node.parent_id, str)  # areas are the top level
        else:
            assert node.parent_id in by_id.index
    counts = seed_run.manifest.counts.levels
    assert counts.topics == int((nodes["level"] == "topic").sum())
    leaf = papers["subtopic_id"].where(papers["subtopic_id"] != "", papers["topic_id"])
    assert counts.largest_leaf_share == round(leaf[real].value_counts().max() / len(papers), 4)
    assert isinstance(pd.read_parquet(seed_run.path / "nodes.parquet")["node_id"].iloc[0], str)
    assert SPLIT_SHARE == 0.05


def test_ids_sort_numerically_and_a_one_paper_map_has_an_extent():
    import pandas as pd

    from explorer.node_ids import id_order
    from explorer.view.charts.maps import map_extent

    assert sorted(["3.10", "3.2", "12", "-1"], key=id_order) == ["-1", "3.2", "3.10", "12"]
    assert sorted(["A10", "A2"], key=id_order) == ["A2", "A10"]
    (x0, x1), (y0, y1) = map_extent(pd.DataFrame({"x": [1e9], "y": [-3.0]}))
    assert x1 > x0 and y1 > y0  # one paper far from 0 still gets a plot


def test_centroids_are_each_groups_unit_mean_whatever_the_blocks(monkeypatch):
    from explorer import vectors

    rng = np.random.default_rng(4)
    unit = vectors.normalise_rows(rng.normal(size=(300, 8))).astype(np.float32)
    for labels, groups in (
        (rng.integers(-1, 4, 300), [2, 0, 3, 1]),  # ints, outliers (-1) in no group
        (rng.choice(np.array(["", "0.1", "0.0"], dtype=object), 300), ["0.0", "0.1"]),
    ):
        expected = vectors.normalise_rows(
            np.stack([unit[labels == g].mean(axis=0) for g in groups])
        )
        monkeypatch.setattr(vectors, "ROW_BLOCK", 23)  # blocks that split every group
        np.testing.assert_allclose(vectors.centroids(unit, labels, groups), expected, atol=1e-6)
