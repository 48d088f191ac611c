"""The curation overlay: each edit's effect on the tables, undo and revert, schema checks,
locking, and matching curated nodes in a rebuilt run by member overlap."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts, curation
from explorer.errors import ArtifactError, InputError
from tests.synthetic import write_synthetic_run


@pytest.fixture
def run(tmp_path):
    write_synthetic_run(tmp_path, "syn", 600, n_topics=12)
    return tmp_path, artifacts.open_run(tmp_path, "syn")


def _tables(run_):
    return {name: run_.table(name) for name in ("papers", "topics", "nodes", "doc_topics")} | {
        "topic_similarity": run_.array("topic_similarity")
    }


def _apply(cache, run_):
    t = _tables(run_)
    return curation.apply(
        t["papers"], t["topics"], t["nodes"], t["doc_topics"], t["topic_similarity"],
        curation.read(cache, "syn"),
    )  # fmt: skip


def _record(cache, run_, op, **args):
    t = _tables(run_)
    nodes = _apply(cache, run_).nodes
    return curation.record(cache, "syn", t["papers"], nodes, op, source="cli", **args)


def test_rename_reaches_nodes_topics_and_papers(run):
    cache, r = run
    _record(cache, r, "rename", node="1", label="<b>My</b> name")
    out = _apply(cache, r)
    assert out.nodes.set_index("node_id").loc["1", "label"] == "<b>My</b> name"
    assert out.topics.set_index("topic_id").loc["1", "label"] == "<b>My</b> name"
    assert set(out.papers.loc[out.papers["topic_id"] == "1", "topic_label"]) == {"<b>My</b> name"}
    _record(cache, r, "rename", node="A1", label="An area")
    assert "An area" in set(_apply(cache, r).nodes["label"])


def test_merge_keeps_the_largest_members_id_and_area(run):
    cache, r = run
    raw = _tables(r)
    sizes = raw["topics"].set_index("topic_id")["size"]
    a, b = "2", "5"
    keeper = a if sizes[a] >= sizes[b] else b
    _record(cache, r, "merge", nodes=[a, b])
    out = _apply(cache, r)
    gone = b if keeper == a else a
    assert gone not in set(out.nodes["node_id"]) and gone not in set(out.topics["topic_id"])
    assert not (out.papers["topic_id"] == gone).any()
    assert (out.papers["topic_id"] == keeper).sum() == sizes[a] + sizes[b]
    area = raw["nodes"].set_index("node_id").loc[keeper, "parent_id"]
    assert set(out.papers.loc[out.papers["topic_id"] == keeper, "area_id"]) == {area}
    assert out.nodes.set_index("node_id").loc[keeper, "size"] == sizes[a] + sizes[b]
    real = (out.topics["topic_id"] != "-1").sum()
    assert out.topic_similarity.shape == (real, real)
    assert gone not in set(out.doc_topics["topic_id"])


def test_merging_subtopics_of_one_topic(run):
    cache, r = run
    _record(cache, r, "merge", nodes=["0.0", "0.1"])
    out = _apply(cache, r)
    subs = set(out.papers.loc[out.papers["topic_id"] == "0", "subtopic_id"])
    assert len(subs) == 1 and subs <= {"0.0", "0.1"}
    with pytest.raises(InputError, match="within their topic|two or more"):
        _record(cache, r, "merge", nodes=["0.0", "1"])


def test_hide_flags_the_node_and_its_papers_and_unhide_clears(run):
    cache, r = run
    _record(cache, r, "hide", node="3")
    out = _apply(cache, r)
    assert out.nodes.set_index("node_id").loc["3", "hidden"]
    assert out.papers.loc[out.papers["topic_id"] == "3", "hidden"].all()
    assert not out.papers.loc[out.papers["topic_id"] != "3", "hidden"].any()
    _record(cache, r, "unhide", node="3")
    assert not _apply(cache, r).papers["hidden"].any()


def test_move_puts_a_paper_in_another_topic(run):
    cache, r = run
    paper = _tables(r)["papers"].query("topic_id == '4'")["paper_id"].iloc[0]
    _record(cache, r, "move", paper=paper, node="0.1")
    row = _apply(cache, r).papers.set_index("paper_id").loc[paper]
    assert (row["topic_id"], row["subtopic_id"]) == ("0", "0.1")
    assert row["area_id"] == _tables(r)["nodes"].set_index("node_id").loc["0", "parent_id"]


def test_undo_and_revert_take_back_and_say_what(run):
    cache, r = run
    for label in ("one", "two", "three"):
        _record(cache, r, "rename", node="1", label=label)
    back, restored = curation.take_back(cache, "syn", to=None, source="cli")
    assert [c["label"] for c in back] == ["three"] and restored == []
    assert _apply(cache, r).topics.set_index("topic_id").loc["1", "label"] == "two"
    back, _ = curation.take_back(cache, "syn", to=1, source="cli")
    assert [c["label"] for c in back] == ["two"]
    assert _apply(cache, r).topics.set_index("topic_id").loc["1", "label"] == "one"
    history = curation.read(cache, "syn")
    assert [c["op"] for c in history] == ["rename"] * 3 + ["undo", "revert"]  # nothing erased
    with pytest.raises(InputError, match="unknown change id 99"):
        curation.take_back(cache, "syn", to=99, source="cli")


def test_revert_returns_to_the_state_right_after_that_change(run):
    """Even when a later undo took back what was in effect then: revert restores it."""
    cache, r = run
    _record(cache, r, "rename", node="1", label="named")  # 1
    _record(cache, r, "hide", node="2")  # 2
    curation.take_back(cache, "syn", to=None, source="cli")  # 3: undo the hide
    _record(cache, r, "rename", node="3", label="later")  # 4
    back, restored = curation.take_back(cache, "syn", to=2, source="cli")  # 5
    assert [c["id"] for c in back] == [4] and [c["id"] for c in restored] == [2]
    assert [c["id"] for c in curation.active(curation.read(cache, "syn"))] == [1, 2]
    out = _apply(cache, r)
    assert out.nodes.set_index("node_id").loc["2", "hidden"]
    assert out.topics.set_index("topic_id").loc["3", "label"] != "later"
    assert "restores 2" in curation.describe(curation.read(cache, "syn")[-1])
    with pytest.raises(InputError, match="already is the state"):
        curation.take_back(cache, "syn", to=5, source="cli")


def test_unknown_ids_write_nothing(run):
    cache, r = run
    for op, args in (
        ("rename", {"node": "999", "label": "x"}),
        ("hide", {"node": "A99"}),
        ("move", {"paper": "nope", "node": "1"}),
        ("merge", {"nodes": ["1", "77"]}),
    ):
        with pytest.raises(InputError, match="unknown"):
            _record(cache, r, op, **args)
    assert not curation.path(cache, "syn").exists()


def test_a_damaged_or_foreign_file_is_refused(run):
    cache, r = run
    curation.path(cache, "syn").write_text(json.dumps({"schema": 99, "changes": []}))
    with pytest.raises(ArtifactError, match="schema"):
        curation.read(cache, "syn")
    curation.path(cache, "syn").write_text("{not json")
    with pytest.raises(ArtifactError, match="unreadable"):
        curation.read(cache, "syn")


def test_two_writers_at_once_lose_nothing(run):
    cache, r = run
    t = _tables(r)
    errors = []

    def write(i):
        try:
            curation.record(
                cache, "syn", t["papers"], t["nodes"], "rename",
                source="dashboard", node=str(i % 5), label=f"label {i}",
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    history = curation.read(cache, "syn")
    assert [c["id"] for c in history] == list(range(1, 17))
    assert sorted(c["label"] for c in history) == sorted(f"label {i}" for i in range(16))


def test_version_changes_with_every_write(run):
    cache, r = run
    before = curation.version(cache, "syn")
    _record(cache, r, "hide", node="2")
    after = curation.version(cache, "syn")
    assert before == () and after != before


def test_members_match_a_rebuilt_run_by_overlap():
    recorded = [f"p{i}" for i in range(10)]
    papers = pd.DataFrame(
        {
            "paper_id": [f"p{i}" for i in range(20)],
            # The old topic 1 is topic 7 now, with one paper more; topic 1 is other papers.
            "topic_id": ["7"] * 11 + ["1"] * 9,
            "area_id": ["A0"] * 20,
            "subtopic_id": [""] * 20,
        }
    )
    members = curation.Members.of_run(papers)
    assert members.find("1", recorded) == "7"
    assert members.find("1", [f"p{i}" for i in range(5)]) is None  # 5/11 < 0.5: reported
    assert curation.Members.of_run(papers).find("A0", [f"p{i}" for i in range(20)]) == "A0"


def test_no_curation_changes_nothing_but_adds_hidden(run):
    cache, r = run
    t = _tables(r)
    out = _apply(cache, r)
    assert not out.unmatched and out.applied == 0
    pd.testing.assert_frame_equal(out.papers.drop(columns=["hidden", "stability"]), t["papers"])
    assert np.array_equal(out.topic_similarity, t["topic_similarity"])
