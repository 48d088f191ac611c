"""The curation overlay: each edit's effect on the tables, undo and revert, the log (members
stored once, schema checks, torn and bad lines, migration from curation.json, compact),
locking, and matching curated nodes in a rebuilt run by member overlap."""

from __future__ import annotations

import json
import threading

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts, curation
from explorer.curation import limits, matching
from explorer.curation.log import LEGACY
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
        curation.BuiltTables(**t), curation.read(cache, "syn"), run_id=run_.run_id,
        folder=(cache, "syn"),
    )  # fmt: skip


def _record(cache, run_, op, **args):
    t = _tables(run_)
    nodes = _apply(cache, run_).nodes
    target = curation.EditTarget(cache, "syn", run_.run_id, t["papers"])
    return curation.record(target, nodes, op, source="cli", **args)


def test_rename_reaches_nodes_topics_and_papers(run):
    cache, r = run
    _record(cache, r, "rename", node="1", label="<b>My</b> name")
    out = _apply(cache, r)
    assert out.nodes.set_index("node_id").loc["1", "label"] == "<b>My</b> name"
    assert out.topics.set_index("topic_id").loc["1", "label"] == "<b>My</b> name"
    assert set(out.papers.loc[out.papers["topic_id"] == "1", "topic_label"]) == {"<b>My</b> name"}
    _record(cache, r, "rename", node="A1", label="An area")
    assert "An area" in set(_apply(cache, r).nodes["label"])


def test_a_rename_to_the_label_a_node_has_is_refused_and_not_recorded(run):
    cache, r = run
    _record(cache, r, "rename", node="1", label="Mine")  # its short and long label now
    with pytest.raises(InputError, match="already has that label"):
        _record(cache, r, "rename", node="1", label="  Mine ")
    assert len(curation.read(cache, "syn")) == 1


def test_a_rename_that_changes_the_long_label_or_a_hidden_node_s_label_is_kept(run):
    """The check reads the labels as stored: a rename sets the long label too, and a hidden
    node's shown label carries a mark the stored one does not."""
    cache, r = run
    node = _apply(cache, r).nodes.set_index("node_id").loc["1"]
    assert node["label"] != node["long_label"]
    _record(cache, r, "rename", node="1", label=node["label"])  # the long label changes
    _record(cache, r, "rename", node="2", label="Two")
    _record(cache, r, "hide", node="2")
    shown = _apply(cache, r).nodes.set_index("node_id").at["2", "label"]
    assert shown == "Two (hidden)"
    with pytest.raises(InputError, match="already has that label"):
        _record(cache, r, "rename", node="2", label="Two")
    _record(cache, r, "rename", node="2", label=shown)  # a label that reads "(hidden)"
    assert len(curation.read(cache, "syn")) == 4


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
    curation.legacy_path(cache, "syn").write_text(json.dumps({"schema": 99, "changes": []}))
    with pytest.raises(ArtifactError, match="schema"):
        curation.read(cache, "syn")
    curation.legacy_path(cache, "syn").write_text("{not json")
    with pytest.raises(ArtifactError, match="unreadable"):
        curation.read(cache, "syn")
    curation.path(cache, "syn").write_text('{"schema": 99}\n')
    with pytest.raises(ArtifactError, match=r"curation.jsonl:1: not a curation log"):
        curation.read(cache, "syn")


def test_two_writers_at_once_lose_nothing(run):
    cache, r = run
    t = _tables(r)
    errors = []

    def write(i):
        try:
            curation.record(
                curation.EditTarget(cache, "syn", r.run_id, t["papers"]), t["nodes"], "rename",
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
    members = matching.Members.of_run(papers)
    assert members.find("1", recorded) == "7"
    assert members.find("1", [f"p{i}" for i in range(5)]) is None  # 5/11 < 0.5: reported
    assert matching.Members.of_run(papers).find("A0", [f"p{i}" for i in range(20)]) == "A0"
    # An area renumbered by the rebuild (the old A0 is A1 now) is found by its papers too.
    renumbered = papers.assign(area_id=["A1"] * 11 + ["A0"] * 9)
    assert matching.Members.of_run(renumbered).find("A0", recorded) == "A1"
    # A hand-edited history's malformed id matches nothing; it never breaks the pages.
    assert members.find("1.x/../", recorded) is None


def test_no_curation_changes_nothing_but_adds_hidden(run):
    cache, r = run
    t = _tables(r)
    out = _apply(cache, r)
    assert not out.unmatched and out.applied == 0
    pd.testing.assert_frame_equal(out.papers.drop(columns=["hidden", "stability"]), t["papers"])
    assert np.array_equal(out.topic_similarity, t["topic_similarity"])


# --- the log -------------------------------------------------------------------------------


def _lines(cache) -> list[str]:
    return curation.path(cache, "syn").read_text().splitlines()


def test_members_are_stored_once_per_node_and_run(run):
    cache, r = run
    for i in range(6):
        _record(cache, r, "rename", node="1", label=f"name {i}")
    _record(cache, r, "hide", node="1")
    stored = list((cache / "syn" / curation.MEMBERS).iterdir())
    assert len(stored) == 1  # seven changes name topic 1: its papers are one file
    papers = _tables(r)["papers"]
    assert sorted(json.loads(stored[0].read_text())) == sorted(
        papers.loc[papers["topic_id"] == "1", "paper_id"]
    )
    lines = _lines(cache)
    assert len(lines) == 1 + 7  # a header, then one line per change
    assert all(len(line) < 400 for line in lines)  # no member list in any line
    assert {json.loads(line)["run"] for line in lines[1:]} == {r.run_id}


def test_a_change_on_the_loaded_run_resolves_by_id_without_matching(run, monkeypatch):
    cache, r = run
    _record(cache, r, "rename", node="1", label="By id")
    _record(cache, r, "merge", nodes=["2", "5"])

    def no_matching(*_):
        raise AssertionError("member matching ran for changes made on this run")

    monkeypatch.setattr(matching.Members, "of_run", no_matching)
    out = _apply(cache, r)
    assert out.applied == 2 and out.topics.set_index("topic_id").loc["1", "label"] == "By id"


def test_a_change_from_another_run_is_matched_by_members_once_per_process(run, monkeypatch):
    cache, r = run
    t = _tables(r)
    curation.record(
        curation.EditTarget(cache, "syn", "an-older-run", t["papers"]), t["nodes"], "rename",
        source="cli", node="1", label="Carried",
    )  # fmt: skip
    assert _apply(cache, r).topics.set_index("topic_id").loc["1", "label"] == "Carried"
    calls = []
    monkeypatch.setattr(matching.Members, "find", lambda *a: calls.append(a) or "1")
    assert _apply(cache, r).applied == 1 and not calls  # the match is cached for this run


def test_a_torn_last_line_is_ignored_then_cut_off(run, caplog):
    cache, r = run
    _record(cache, r, "hide", node="2")
    with curation.path(cache, "syn").open("a") as handle:
        handle.write('{"id": 2, "op": "rena')  # a crash mid-append
    with caplog.at_level("WARNING"):
        assert [c["id"] for c in curation.read(cache, "syn")] == [1]
    assert "torn last line" in caplog.text
    _record(cache, r, "rename", node="3", label="After the crash")
    assert [c["id"] for c in curation.read(cache, "syn")] == [1, 2]
    assert all(json.loads(line) for line in _lines(cache))


def test_a_bad_line_before_the_end_names_file_and_line(run):
    cache, r = run
    for node in ("1", "2", "3"):
        _record(cache, r, "hide", node=node)
    lines = _lines(cache)
    lines[2] = "{garbage"
    curation.path(cache, "syn").write_text("\n".join(lines) + "\n")
    with pytest.raises(ArtifactError, match=r"curation\.jsonl:3: not a JSON line") as exc:
        curation.read(cache, "syn")
    assert "\n" not in str(exc.value)
    lines[2] = json.dumps({"id": 7, "op": "hide"})
    curation.path(cache, "syn").write_text("\n".join(lines) + "\n")
    with pytest.raises(ArtifactError, match=r":3: change 2 missing or out of order"):
        curation.read(cache, "syn")


def _legacy_file(cache, r) -> list[dict]:
    """A schema-1 curation.json as the old code wrote it: members in every change."""
    papers = _tables(r)["papers"]
    members = {n: sorted(papers.loc[papers["topic_id"] == n, "paper_id"]) for n in ("1", "2")}
    changes = [
        {"id": 1, "op": "rename", "node": "1", "label": "Old name", "members": {"1": members["1"]},
         "source": "cli", "time": "2026-01-01T00:00:00+00:00"},
        {"id": 2, "op": "hide", "node": "2", "members": {"2": members["2"]},
         "source": "dashboard", "time": "2026-01-01T00:00:01+00:00"},
    ]  # fmt: skip
    text = json.dumps({"schema": 1, "changes": changes}, indent=1)
    curation.legacy_path(cache, "syn").write_text(text)
    return changes


def test_a_schema_1_file_is_read_then_migrated_by_the_first_write(run):
    cache, r = run
    old = _legacy_file(cache, r)
    before = curation.version(cache, "syn")
    assert before != () and [c["label"] for c in curation.read(cache, "syn")[:1]] == ["Old name"]
    out = _apply(cache, r)
    assert out.topics.set_index("topic_id").loc["1", "label"] == "Old name"
    assert out.nodes.set_index("node_id").loc["2", "hidden"]

    _record(cache, r, "rename", node="3", label="New name")
    assert not curation.legacy_path(cache, "syn").exists()
    backup = cache / "syn" / (LEGACY + ".bak")
    assert json.loads(backup.read_text())["changes"] == old  # kept as it was
    history = curation.read(cache, "syn")
    assert [c["id"] for c in history] == [1, 2, 3] and "run" not in history[0]
    assert curation.version(cache, "syn") != before
    out = _apply(cache, r)
    labels = out.topics.set_index("topic_id")["label"]
    assert (labels["1"], labels["3"]) == ("Old name", "New name")
    assert out.nodes.set_index("node_id").loc["2", "hidden"]


def test_compact_keeps_the_state_and_drops_what_was_taken_back(run):
    cache, r = run
    for label in ("a", "b", "c"):
        _record(cache, r, "rename", node="1", label=label)
    _record(cache, r, "hide", node="2")
    _record(cache, r, "merge", nodes=["3", "4"])
    curation.take_back(cache, "syn", to=None, source="cli")  # the merge
    paper = _tables(r)["papers"].query("topic_id == '5'")["paper_id"].iloc[0]
    _record(cache, r, "move", paper=paper, node="0.1")
    state = _apply(cache, r)
    old_log = curation.path(cache, "syn").read_text()

    kept, dropped, backup = curation.compact(cache, "syn")
    history = curation.read(cache, "syn")
    assert (kept, dropped) == (3, 4) and [c["op"] for c in history] == ["rename", "hide", "move"]
    assert [c["id"] for c in history] == [1, 2, 3] and history[0]["label"] == "c"
    assert backup.read_text() == old_log and backup.parent == curation.path(cache, "syn").parent
    again = _apply(cache, r)
    pd.testing.assert_frame_equal(again.papers, state.papers)
    pd.testing.assert_frame_equal(again.nodes, state.nodes)


def test_the_history_is_bounded_and_says_to_compact(run, monkeypatch):
    cache, r = run
    monkeypatch.setattr(limits, "MAX_CHANGES", 3)
    for node in ("1", "2", "3"):
        _record(cache, r, "hide", node=node)
    with pytest.raises(InputError, match=r"explorer curate syn compact"):
        _record(cache, r, "hide", node="4")
    with pytest.raises(InputError, match="history is full"):
        curation.take_back(cache, "syn", to=None, source="cli")
    assert len(curation.read(cache, "syn")) == 3


@pytest.mark.parametrize(
    "label",
    ["bad\udcffbyte", "\u200b", "   ", "\u200b \u200b", "evil\u202eexe", "a\u2066b", "x\u200ey",
     "a\u061cb", "tab\tin", "line\u2028sep", "priv\ue000", "x" * 201, ""],
)  # fmt: skip
def test_labels_that_would_hide_or_break_are_refused(run, label):
    cache, r = run
    with pytest.raises(InputError) as exc:
        _record(cache, r, "rename", node="1", label=label)
    assert "\n" not in str(exc.value) and "label" in str(exc.value)
    assert not curation.path(cache, "syn").exists()


def test_labels_of_any_script_are_kept(run):
    cache, r = run
    for label in ("Graphes et réseaux", "图神经网络", "שלום עולם", "x" * 200, "  padded  "):
        change = _record(cache, r, "rename", node="1", label=label)
        assert change["label"] == label.strip()
        assert curation.read(cache, "syn")[-1]["label"] == label.strip()


def test_publish_copies_the_log_and_the_members_it_needs(run, tmp_path):
    from explorer.hosting import publish

    cache, r = run
    _record(cache, r, "rename", node="1", label="Shipped")
    t = _tables(r)
    curation.record(
        curation.EditTarget(cache, "syn", "an-older-run", t["papers"]), t["nodes"], "hide",
        source="cli", node="2",
    )  # fmt: skip
    site = tmp_path / "site" / "cache"
    (site / "syn").mkdir(parents=True)
    publish._copy_curation(site.parent, r)
    assert curation.read(site, "syn") == curation.read(cache, "syn")
    out = curation.apply(
        curation.BuiltTables(**t), curation.read(site, "syn"), run_id=r.run_id,
        folder=(site, "syn"),
    )  # fmt: skip
    assert out.applied == 2 and not out.unmatched  # the older run's change found its members


def test_a_reader_parses_only_new_lines_yet_notices_a_rewritten_log(run):
    cache, r = run
    for node in ("1", "2"):
        _record(cache, r, "hide", node=node)
    assert [c["node"] for c in curation.read(cache, "syn")] == ["1", "2"]
    _record(cache, r, "hide", node="3")  # appended: parsed from where the reader stopped
    assert [c["node"] for c in curation.read(cache, "syn")] == ["1", "2", "3"]
    log = curation.path(cache, "syn")
    lines = log.read_text().splitlines()
    lines[-1] = lines[-1].replace('"node": "3"', '"node": "4"')
    with log.open("r+") as handle:  # edited in place: the same file, the same size
        handle.write("\n".join(lines) + "\n")
    assert [c["node"] for c in curation.read(cache, "syn")] == ["1", "2", "4"]
