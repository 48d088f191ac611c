"""Curation on every page it touches: a rename, merge, hide or move shows on Overview, the
Topic map, Topics, Trends and Papers; the Curate page's forms record and take back changes;
links keep working because they carry ids; `explorer export` writes the curated names.

AppTest on a private copy of the planted build (tests/planted.py: the seed abstracts plus
well-separated subject groups, so at least the six topics these tests curate, whatever the
build seed; the curation log is written beside its runs), and on a synthetic run for areas
and subtopics. The tests pick topics from the run's ids (`Built.ids`), never assume them.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from dataclasses import dataclass

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer import artifacts, cli, curation
from explorer.artifacts import open_run
from explorer.view.map_layout import HIDDEN_COLOR
from tests.conftest import ROOT, shown, topic_ids
from tests.test_app import TIMEOUT, as_host, run_page, texts, topic_papers

CORPUS = "planted"


def _clear_caches() -> None:
    from explorer.view.ui.data import _built, load_run

    load_run.clear()
    _built.clear()


def _app_factory(cache, monkeypatch):
    """New AppTests of the app on `cache`, each the host's session (signed in with the
    edit key on its first run, as the one-click link does)."""
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.chdir(ROOT)
    _clear_caches()
    return lambda: as_host(
        AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT), monkeypatch
    )


@pytest.fixture
def cache(planted_cache, tmp_path):
    """A copy of the planted build: curating it never touches the session's cache."""
    cache = tmp_path / "cache"
    shutil.copytree(planted_cache / CORPUS, cache / CORPUS)
    if (planted_cache / "models").exists():  # the query encoder, read only: shared
        (cache / "models").symlink_to(planted_cache / "models")
    return cache


@pytest.fixture
def app(cache, monkeypatch):
    yield _app_factory(cache, monkeypatch)
    _clear_caches()


@dataclass(frozen=True)
class Built:
    """The planted run as built (before any curation)."""

    papers: pd.DataFrame
    topics: pd.DataFrame  # indexed by topic_id
    ids: list[str]  # its topics (no outliers), in id order: the tests pick from these

    def size(self, topic: str) -> int:
        return int(self.topics.loc[topic, "size"])

    def label(self, topic: str) -> str:
        return str(self.topics.loc[topic, "label"])

    def members(self, topic: str) -> pd.DataFrame:
        return self.papers[self.papers["topic_id"] == topic]


@pytest.fixture
def built(cache) -> Built:
    run = open_run(cache, CORPUS)
    topics = run.table("topics").set_index("topic_id")
    ids = topic_ids(run)
    # Eight planted subject groups: at least one topic each, whatever the seed.
    assert len(ids) >= 6, f"the tests curate six distinct topics; the build has {ids}"
    return Built(run.table("papers"), topics, ids)


def curate(cache, corpus: str, *args: str) -> str:
    """`explorer curate CORPUS ARGS...` in-process; its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["--cache-dir", str(cache), "curate", corpus, *args])
    assert status == 0, out.getvalue()
    return out.getvalue()


def open_page(app: AppTest, page: str, **params) -> AppTest:
    """`run_page`, except that the Overview (the page the first run shows) gets its
    parameters before that run: a bound widget reads the URL only when it is created."""
    if page != "overview":
        return run_page(app, page, **params)
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def map_figure(at: AppTest) -> dict:
    (figure,) = charts(at)  # the Topic map page draws one chart: the map
    return figure


def hover_names(figure: dict) -> set[str]:
    """The node names in the map's hover texts (`title<br>venue year status<br>id: label`)."""
    return {h.rsplit("<br>", 1)[1] for trace in figure["data"] for h in trace["hovertext"]}


def annotations(figure: dict) -> list[str]:
    return [a["text"] for a in figure["layout"].get("annotations", [])]


def total(at: AppTest) -> int:
    """The Topic map's "N of M papers shown" count N."""
    caption = next(c for c in texts(at).splitlines() if " papers shown" in c)
    return int(caption.split(" of ")[0].replace(",", ""))


def node_links(at: AppTest) -> pd.DataFrame:
    """The Topics page's table of every node with a link to its topic."""
    return next(d.value for d in at.dataframe if {"open", "level"} <= set(d.value.columns))


def topic_picker(at: AppTest):
    """The Topics page's topic picker (its key carries the curation's version)."""
    return next(s for s in at.selectbox if str(s.key).startswith("topic_pick"))


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


# --- rename ------------------------------------------------------------------------------


def drawn(label: str, shown: list[str]) -> bool:
    """Whether the map draws `label` (the map shortens long labels with an ellipsis)."""
    return any(a == label or (a.endswith("…") and label.startswith(a[:-1])) for a in shown)


def test_a_renamed_topic_shows_on_every_page(cache, app, built):
    # A topic sharing its area with another (an area of one topic is labelled like it, and
    # that label is drawn instead), whose own label the map draws if the layout leaves room
    # for one: where it draws none (label placement depends on the host's layout), the
    # map's drawn labels are not checked, everything else is.
    before = annotations(map_figure(run_page(app(), "topic_map")))
    areas = built.papers.drop_duplicates("topic_id").set_index("topic_id")["area_id"]
    shared = [t for t in built.ids if t in set(areas[areas.duplicated(keep=False)].index)]
    assert shared, "the planted corpus has an area of several topics"
    t = next((t for t in shared if drawn(built.label(t), before)), shared[0])
    was_drawn = drawn(built.label(t), before)
    label, old = "Curated robots", built.label(t)
    assert curate(cache, CORPUS, "rename", t, label).startswith("#1 ")
    name, members = f"{t}: {label}", built.members(t)

    at = open_page(app(), "overview", level="topic")
    sizes = json.dumps(charts(at)[0])
    assert name in sizes and f"{t}: {old}" not in sizes

    at = run_page(app(), "topic_map")
    figure = map_figure(at)
    assert name in hover_names(figure) and f"{t}: {old}" not in hover_names(figure)
    assert not was_drawn or label in annotations(figure)
    table = at.dataframe[0].value
    assert set(table.loc[table["paper_id"].isin(members["paper_id"]), "topic_label"]) == {label}
    assert name in at.multiselect(key="topics").options

    at = run_page(app(), "topics", topic=t)
    assert at.dataframe[0].value.set_index("id").loc[t, "label"] == label
    assert f"Topic {t}: {label}" in texts(at)
    assert name in topic_picker(at).options

    at = run_page(app(), "trends")
    options = at.multiselect(key="trend_topics").options
    assert name in options and f"{t}: {old}" not in options

    at = run_page(app(), "papers", paper=members["paper_id"].iloc[0])
    assert label in [e.value for e in at.text]
    assert old not in [e.value for e in at.text]
    assert label in set(at.dataframe[0].value["label"])  # the topic distribution


@pytest.fixture
def syn_app(tmp_path, monkeypatch):
    """A synthetic run with areas (A0-A5) and two subtopics of topic 0 (0.0, 0.1)."""
    from tests.synthetic import write_synthetic_run

    cache = tmp_path / "syn-cache"
    write_synthetic_run(cache, "syn", 600, n_topics=12)
    factory = _app_factory(cache, monkeypatch)
    yield cache, factory
    _clear_caches()


def test_renamed_areas_and_subtopics_show_on_every_page(syn_app, tmp_path):
    cache, app = syn_app
    curate(cache, "syn", "rename", "A1", "Curated area")
    curate(cache, "syn", "rename", "0.1", "Curated subtopic")
    area, sub = "A1: Curated area", "0.1: Curated subtopic"

    at = open_page(app(), "overview", level="area")
    assert area in json.dumps(charts(at)[0]) and "A1: node A1" not in json.dumps(charts(at)[0])
    at = open_page(app(), "overview", level="subtopic")
    assert sub in json.dumps(charts(at)[0])

    at = run_page(app(), "topic_map", level="area")
    figure = map_figure(at)
    assert area in hover_names(figure) and "Curated area" in annotations(figure)
    options = at.multiselect(key="topics").options
    assert area in options and sub in options and "A1: node A1" not in options
    at = run_page(app(), "topic_map", level="subtopic")
    assert sub in hover_names(map_figure(at))

    at = run_page(app(), "topics", level="area", topic="1")  # topic 1 is in area A1
    assert at.dataframe[0].value.set_index("id").loc["A1", "label"] == "Curated area"
    assert "Area A1: Curated area" in texts(at).replace("**", "")
    at = run_page(app(), "topics", level="subtopic", topic="0")
    assert at.dataframe[0].value.set_index("id").loc["0.1", "label"] == "Curated subtopic"
    subtopics = at.dataframe[1].value.set_index("subtopic")  # topic 0's subtopics
    assert subtopics.loc["0.1", "label"] == "Curated subtopic"

    at = run_page(app(), "trends", level="subtopic")
    assert sub in at.multiselect(key="trend_topics").options
    at = run_page(app(), "trends", level="area")
    assert area in at.multiselect(key="trend_topics").options

    out = tmp_path / "syn.csv"
    assert cli.main(["--cache-dir", str(cache), "export", "syn", "--out", str(out)]) == 0
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(frame.loc[frame["area_id"] == "A1", "area_label"]) == {"Curated area"}
    assert set(frame.loc[frame["subtopic_id"] == "0.1", "subtopic_label"]) == {"Curated subtopic"}


# --- merge -------------------------------------------------------------------------------


def _merge_one_two(cache, built) -> tuple[str, str, int]:
    """Merge the run's second and third topics: (the id kept, the id merged away, the
    merged size)."""
    a, b = built.ids[1], built.ids[2]
    keeper, gone = (a, b) if (built.size(a), b) >= (built.size(b), a) else (b, a)
    curate(cache, CORPUS, "merge", a, b)
    return keeper, gone, built.size(a) + built.size(b)


def test_merged_topics_are_one_node_everywhere(cache, app, built):
    keeper, gone, size = _merge_one_two(cache, built)
    label = built.label(keeper)

    at = run_page(app(), "topics", topic=keeper)
    table = at.dataframe[0].value.set_index("id")
    assert gone not in table.index and table.loc[keeper, "size"] == size
    assert not [o for o in topic_picker(at).options if o.startswith(f"{gone}: ")]
    assert f"{size} papers (" in texts(at)
    assert len(topic_papers(at)) == size
    assert gone not in set(node_links(at)["id"])  # the hierarchy's links
    at = run_page(app(), "topics", topic=gone)  # an old link to the merged-away topic
    assert any(f"Ignoring ?topic={gone}" in shown(w.value) for w in at.warning)

    at = run_page(app(), "trends")
    assert not [o for o in at.multiselect(key="trend_topics").options if o.startswith(f"{gone}:")]

    at = run_page(app(), "topic_map")
    assert not [o for o in at.multiselect(key="topics").options if o.startswith(f"{gone}: ")]
    assert f"{gone}: {built.label(gone)}" not in hover_names(map_figure(at))
    table = at.dataframe[0].value
    merged = built.papers.loc[built.papers["topic_id"].isin([keeper, gone]), "paper_id"]
    assert set(table.loc[table["paper_id"].isin(merged), "topic_label"]) == {label}

    at = open_page(app(), "overview", level="topic")
    bars = charts(at)[0]["data"][0]
    assert not [y for y in bars["y"] if y.startswith(f"{gone}: ")]

    moved = built.members(gone)["paper_id"].iloc[0]
    at = run_page(app(), "papers", paper=moved)
    assert f"**Topic:** {keeper} ·" in texts(at)
    assert label in [e.value for e in at.text]


def test_overview_counts_follow_a_merge(cache, app, built):
    _merge_one_two(cache, built)
    at = open_page(app(), "overview")
    metrics = {m.label: shown(m.value) for m in at.metric}
    real = len(built.ids)  # topics, not the outlier row (a run may have no outliers)
    assert metrics["Areas · topics · subtopics"].split(" · ")[1] == str(real - 1)


# --- hide --------------------------------------------------------------------------------


def test_hidden_topic_leaves_the_map_unless_asked_for_and_is_greyed(cache, app, built):
    at = run_page(app(), "topic_map")
    assert "show_hidden" not in [c.key for c in at.checkbox]  # nothing hidden: no checkbox
    t = built.ids[3]
    curate(cache, CORPUS, "hide", t)
    hidden = f"{built.label(t)} (hidden)"
    n, members = len(built.papers), built.members(t)

    at = run_page(app(), "topic_map")
    assert total(at) == n - built.size(t)
    assert at.checkbox(key="show_hidden").value is False
    assert not set(at.dataframe[0].value["paper_id"]) & set(members["paper_id"])
    at = run_page(app(), "topic_map", show_hidden="true")
    assert total(at) == n and at.checkbox(key="show_hidden").value is True
    figure = map_figure(at)
    assert f"{t}: {hidden}" in hover_names(figure)
    greyed = [
        color
        for trace in figure["data"]
        for color, h in zip(trace["marker"]["color"], trace["hovertext"], strict=True)
        if h.endswith(f"<br>{t}: {hidden}")
    ]
    assert greyed and set(greyed) == {HIDDEN_COLOR}
    table = at.dataframe[0].value
    assert set(table.loc[table["paper_id"].isin(members["paper_id"]), "topic_label"]) == {hidden}

    at = run_page(app(), "papers")
    assert f"{n - built.size(t)} of {n} papers match the filters." in texts(at)

    at = run_page(app(), "topics", topic=t)
    long_label = built.topics.loc[t, "long_label"]  # the table shows long labels
    assert at.dataframe[0].value.set_index("id").loc[t, "label"] == f"{long_label} (hidden)"
    assert f"Topic {t}: {hidden}" in texts(at)
    at = run_page(app(), "trends")
    assert f"{t}: {hidden}" in at.multiselect(key="trend_topics").options

    curate(cache, CORPUS, "unhide", t)
    at = run_page(app(), "topic_map")
    assert total(at) == n and "show_hidden" not in [c.key for c in at.checkbox]


# --- move --------------------------------------------------------------------------------


def test_a_moved_paper_shows_in_its_new_topic(cache, app, built):
    source, target = built.ids[4], built.ids[0]
    paper = built.members(source).iloc[0]
    curate(cache, CORPUS, "move", paper["paper_id"], target)

    at = run_page(app(), "papers", paper=paper["paper_id"])
    assert f"**Topic:** {target} ·" in texts(at)
    assert built.label(target) in [e.value for e in at.text]

    at = run_page(app(), "topics", topic=target)
    assert f"{built.size(target) + 1} papers (" in texts(at)
    assert paper["title"] in set(topic_papers(at)["title"])
    at = run_page(app(), "topics", topic=source)
    assert paper["title"] not in set(topic_papers(at)["title"])
    assert at.dataframe[0].value.set_index("id").loc[source, "size"] == built.size(source) - 1


# --- the Curate page ---------------------------------------------------------------------


def picker(widgets, key: str):
    """The Curate page's picker `key` at the overlay's current version (its key carries
    the version: pages/curate.py, `versioned`)."""
    (found,) = [w for w in widgets if str(w.key).startswith(f"{key}@")]
    return found


def history(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "in effect" in d.value.columns)


def test_curate_page_renames_and_undoes(cache, app, built, clickable):
    t = built.ids[0]
    at = run_page(app(), "curate")
    assert "No changes yet." in [e.value for e in at.text]
    picker(at.selectbox, "cur_rename_node").set_value(t)
    at.text_input(key="cur_label").input("Dashboard name")
    button(at, "Rename").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value for s in at.success] == ["Saved."]
    table = history(at)
    assert table["change"].tolist() == [f"rename {t} to 'Dashboard name'"]
    assert table["source"].tolist() == ["dashboard"] and table["in effect"].tolist() == [True]

    renamed = picker(at.selectbox, "cur_rename_node")
    assert renamed.value == t and renamed.options[renamed.index] == f"{t}: Dashboard name"
    topics = run_page(app(), "topics", topic=t)
    assert f"Topic {t}: Dashboard name" in texts(topics)

    button(at, "Undo the last change").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Took back: #1 " in e.value for e in at.text)
    table = history(at).set_index("id")
    assert table.loc[2, "change"] == "undo (takes back 1)" and not table.loc[1, "in effect"]
    topics = run_page(app(), "topics", topic=t)
    assert f"Topic {t}: {built.label(t)}" in texts(topics)
    assert [c["source"] for c in curation.read(cache, CORPUS)] == ["dashboard"] * 2


def test_a_change_saved_elsewhere_between_choosing_and_submitting_edits_the_chosen_node(
    cache, app, built, clickable
):
    def saved_elsewhere(node: str) -> None:
        """Another tab (or the CLI) saves: the overlay's version moves."""
        run = artifacts.open_run(cache, CORPUS)
        curation.record(
            curation.EditTarget(cache, CORPUS, run.run_id, run.table("papers")),
            curation.of_run(run).nodes, "hide", source="cli", node=node,
        )  # fmt: skip

    t = built.ids
    at = run_page(app(), "curate")
    picker(at.selectbox, "cur_rename_node").set_value(t[2])
    saved_elsewhere(t[1])
    at.text_input(key="cur_label").input("Chosen node's name")
    button(at, "Rename").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert curation.read(cache, CORPUS)[-1]["node"] == t[2]  # not the picker's first node

    at = run_page(app(), "curate")
    picker(at.multiselect, "cur_merge").set_value([t[3], t[4]])
    saved_elsewhere(t[5])
    button(at, "Merge").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert curation.read(cache, CORPUS)[-1]["nodes"] == [t[3], t[4]]


def test_curate_page_merges_hides_moves_and_reverts(cache, app, built, clickable):
    t = built.ids
    at = run_page(app(), "curate")
    picker(at.multiselect, "cur_merge").set_value([t[1]])
    button(at, "Merge").click().run()  # one topic is not a merge: refused, nothing written
    assert any("two or more" in shown(e.value) for e in at.error)
    assert not curation.path(cache, CORPUS).exists()

    picker(at.multiselect, "cur_merge").set_value([t[1], t[2]])
    button(at, "Merge").click().run()
    picker(at.selectbox, "cur_hide_node").set_value(t[3])
    button(at, "Hide").click().run()
    paper = built.members(t[4])["paper_id"].iloc[0]
    picker(at.selectbox, "cur_paper").set_value(paper)
    picker(at.selectbox, "cur_target").set_value(t[0])
    button(at, "Move").click().run()
    assert not at.exception, [e.value for e in at.exception]
    changes = curation.read(cache, CORPUS)
    assert [(c["op"], c["source"]) for c in changes] == [
        ("merge", "dashboard"), ("hide", "dashboard"), ("move", "dashboard"),
    ]  # fmt: skip
    keeper = t[1] if (built.size(t[1]), t[2]) >= (built.size(t[2]), t[1]) else t[2]
    gone = t[2] if keeper == t[1] else t[1]
    # A node merged away can no longer be picked; the hidden one is named as hidden.
    assert not [
        o for o in picker(at.selectbox, "cur_hide_node").options if o.startswith(f"{gone}:")
    ]
    assert f"{t[3]}: {built.label(t[3])} (hidden)" in picker(at.selectbox, "cur_hide_node").options

    page = run_page(app(), "papers", paper=paper)
    assert f"**Topic:** {t[0]} ·" in texts(page)

    at.selectbox(key="cur_to").set_value(1)
    button(at, "Revert").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [c["id"] for c in curation.active(curation.read(cache, CORPUS))] == [1]
    page = run_page(app(), "papers", paper=paper)
    assert f"**Topic:** {t[4]} ·" in texts(page)
    page = run_page(app(), "topics", topic=keeper)
    assert gone not in set(page.dataframe[0].value["id"])  # the merge, still in effect


def test_curate_page_lists_unmatched_changes(cache, app, built):
    # A change recorded on papers this run never grouped that way: topic 0 "was" one
    # paper of each topic, so no node of this run shares half its papers with it.
    papers = built.papers.copy()
    strays = papers.groupby("topic_id").head(1).index
    papers["topic_id"] = "9"
    papers.loc[strays, "topic_id"] = "0"
    nodes = pd.DataFrame({"node_id": ["0"], "label": ["as built"], "long_label": ["as built"]})
    change = curation.record(
        curation.EditTarget(cache, CORPUS, "an-older-run", papers), nodes, "rename",
        source="cli", node="0", label="Lost label",
    )  # fmt: skip
    at = run_page(app(), "curate")
    assert any("1 change(s) do not match" in shown(w.value) for w in at.warning)
    assert curation.describe(change) in [e.value for e in at.text]
    at = run_page(app(), "topics", topic=built.ids[0])
    assert "Lost label" not in texts(at)


# --- links -------------------------------------------------------------------------------


def test_links_carry_ids_so_they_survive_a_rename(cache, app, built):
    t = built.ids[0]
    curate(cache, CORPUS, "rename", t, "Renamed once")
    at = run_page(app(), "topics", topic=t)
    assert f"Topic {t}: Renamed once" in texts(at)
    links = node_links(at)
    assert set(links["open"]) == {
        f"./topics?corpus={CORPUS}&topic={i}" for i in built.topics.index if i != "-1"
    }
    papers = topic_papers(at)
    assert all(link.startswith(f"./papers?corpus={CORPUS}&paper=") for link in papers["open"])

    curate(cache, CORPUS, "rename", t, "Renamed twice")
    at = run_page(app(), "topics", topic=t)  # the same link, after another rename
    assert f"Topic {t}: Renamed twice" in texts(at) and not at.warning


def test_a_shared_topic_filter_link_survives_a_rename(cache, app, built):
    """The filter's URL holds ids (`?topics=0`); an older link's `0: label` still works."""
    t = built.ids[0]
    for link in (t, f"{t}: {built.label(t)}"):
        at = run_page(app(), "topic_map", topics=link)
        assert total(at) == built.size(t)
        assert at.query_params["topics"] in (t, [t])  # rewritten to the id
    curate(cache, CORPUS, "rename", t, "Renamed")
    at = run_page(app(), "topic_map", topics=f"{t}: {built.label(t)}")
    assert not at.warning and total(at) == built.size(t)


# --- export ------------------------------------------------------------------------------


def test_export_writes_the_curated_names_and_assignments(cache, app, built, tmp_path):
    t = built.ids
    curate(cache, CORPUS, "rename", t[0], "Exported name")
    keeper, gone, size = _merge_one_two(cache, built)
    curate(cache, CORPUS, "hide", t[3])
    paper = built.members(t[4])["paper_id"].iloc[0]
    curate(cache, CORPUS, "move", paper, t[0])

    out = tmp_path / "planted.csv"
    assert cli.main(["--cache-dir", str(cache), "export", CORPUS, "--out", str(out)]) == 0
    frame = pd.read_csv(out, dtype=str, keep_default_na=False).set_index("paper_id")
    assert len(frame) == len(built.papers)  # hidden papers are exported, labelled
    assert set(frame.loc[frame["topic_id"] == t[0], "topic_label"]) == {"Exported name"}
    assert gone not in set(frame["topic_id"]) and (frame["topic_id"] == keeper).sum() == size
    assert set(frame.loc[frame["topic_id"] == t[3], "topic_label"]) == {
        f"{built.label(t[3])} (hidden)"
    }
    assert frame.loc[paper, "topic_id"] == t[0]
    assert frame.loc[paper, "topic_label"] == "Exported name"


def test_closest_topics_never_name_a_merged_away_topic(cache, app, built):
    _, gone, _ = _merge_one_two(cache, built)
    for topic in [t for t in built.ids if t != gone]:
        closest = [
            t.value for t in run_page(app(), "topics", topic=topic).text if "Closest" in t.value
        ]
        assert not [line for line in closest if f"{gone}: " in line], (topic, closest)
