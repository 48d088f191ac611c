"""The Topics page's hierarchy (issue 52, item 4): one row per node in tree order, so every
label is horizontal text at one size, on a planted hierarchy."""

import pandas as pd

from explorer.view.charts.topics import ROW_PX, hierarchy_rows, hierarchy_tree

NODES = pd.DataFrame(
    [
        ("A0", "area", None, 30, "small area"),
        ("A1", "area", None, 70, "big area"),
        ("1", "topic", "A1", 40, "big topic"),
        ("2", "topic", "A1", 30, "second topic"),
        ("3", "topic", "A0", 30, "lone topic"),
        ("1.1", "subtopic", "1", 25, "big part"),
        ("1.2", "subtopic", "1", 15, "small part"),
    ],
    columns=["node_id", "level", "parent_id", "size", "label"],
).assign(long_label=lambda f: f["label"] + ", more words")


def test_rows_follow_the_tree_largest_first():
    rows = hierarchy_rows(NODES)
    assert rows["node_id"].tolist() == ["A1", "1", "2", "A0", "3"]
    assert rows["depth"].tolist() == [0, 1, 1, 0, 1]
    deep = hierarchy_rows(NODES, subtopics=True)
    assert deep["node_id"].tolist() == ["A1", "1", "1.1", "1.2", "2", "A0", "3"]
    assert deep["depth"].tolist() == [0, 1, 2, 2, 1, 0, 1]


def test_without_an_area_level_topics_are_the_first_level():
    """A short list's build has one area per topic: no area level, so no area rows."""
    topics = NODES[NODES["level"] == "topic"]
    own = topics.assign(node_id=["A0", "A1", "A2"], level="area", parent_id=None)
    rows = hierarchy_rows(pd.concat([own, topics.assign(parent_id=["A0", "A1", "A2"])]))
    assert rows["node_id"].tolist() == ["1", "2", "3"] and set(rows["depth"]) == {0}


def test_every_node_gets_a_row_of_its_own_height():
    fig = hierarchy_tree(NODES, {}, subtopics=True)
    bar = fig.data[0]
    assert [c[0] for c in bar.customdata] == ["A1", "1", "1.1", "1.2", "2", "A0", "3"]
    assert len(set(bar.y)) == len(NODES)  # one category per node: labels never merge
    assert fig.layout.height >= ROW_PX * len(NODES)


def test_levels_show_by_style_and_labels_stay_text():
    hostile = NODES.assign(label=NODES["label"].where(NODES["node_id"] != "2", "<a>x</a> %{y}"))
    bar = hierarchy_tree(hostile, {}, subtopics=True).data[0]
    first, second = bar.y[0], bar.y[4]  # A1 (an area), then topic 2 of it
    assert first.startswith("<b>") and bar.y[2].startswith("<i>")  # a subtopic
    assert "&lt;a&gt;" in second and "%{" not in second  # escaped, never a template
