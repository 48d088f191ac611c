"""Every page rendered headless with AppTest against a real build of the seed corpus,
with at least one interaction per page that must change what is shown."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from explorer.view.text import md_math
from tests.conftest import EDIT_KEY, ROOT, shown, topic_ids

TIMEOUT = 60


def _app_on(cache, monkeypatch) -> AppTest:
    """An AppTest of app.py serving `cache`, with the run cache emptied first."""
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.chdir(ROOT)
    from explorer.view.ui.data import load_run

    load_run.clear()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


@pytest.fixture
def app(seed_cache, monkeypatch):
    return _app_on(seed_cache, monkeypatch)


@pytest.fixture
def planted_app(planted_cache, monkeypatch):
    from explorer.view.ui.data import load_run

    yield _app_on(planted_cache, monkeypatch)
    load_run.clear()


@pytest.fixture(scope="session")
def planted_run(planted_cache):
    from explorer.artifacts import open_run

    return open_run(planted_cache, "planted")


def as_host(at: AppTest, monkeypatch) -> AppTest:
    """`at` as the host: the server has an edit key (explorer/view/ui/editing.py) and the
    session presents it on its first run, as the one-click link does."""
    monkeypatch.setenv("EXPLORER_EDIT_KEY", EDIT_KEY)
    at.query_params["edit_key"] = EDIT_KEY
    return at


def run_page(app: AppTest, page: str, **params) -> AppTest:
    """Open the app, go to `page`, and load it with `params` in the URL (as a shared link does)."""
    app.run()
    if page != "overview":
        app.switch_page(f"pages/{page}.py")
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def topic_papers(app: AppTest):
    """The Topics page's table of the shown topic's papers (after its subtopics' table
    when the topic has subtopics)."""
    return next(d.value for d in app.dataframe if "title" in d.value.columns)


def texts(app: AppTest) -> str:
    return "\n".join(
        shown(e.value) for e in [*app.text, *app.markdown, *app.caption, *app.subheader, *app.title]
    )


def test_overview(app, seed_run):
    at = run_page(app, "overview")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Papers"] == "38"
    levels = shown(metrics["Areas · topics · subtopics"]).split(" · ")
    assert levels[1] == str(seed_run.manifest.counts.topics)
    assert "Overview: seed" in texts(at)
    # The sidebar's line and the page give the outliers alike.
    outliers = shown(metrics["Outliers"])
    assert any(f"{outliers} outliers" in shown(c.value) for c in at.sidebar.caption), outliers


def test_topic_map_filters_change_the_table(app, seed_run):
    at = run_page(app, "topic_map")
    assert "38 of 38 papers shown" in texts(at)
    assert len(at.dataframe[0].value) == 38
    papers = seed_run.table("papers")
    (topic, *_) = topic_ids(seed_run)  # the largest (ids follow size): it has several papers
    members = papers[papers["topic_id"] == topic]
    at.multiselect(key="topics").set_value([topic]).run()
    n0 = len(members)
    assert f"{n0} of 38 papers shown" in texts(at)
    assert len(at.dataframe[0].value) == n0
    # A word of the topic's first abstract that not every member has: the search narrows.
    word = max(
        (w for w in members["abstract"].iloc[0].lower().split() if w.isalpha()),
        key=lambda w: (~members["abstract"].str.lower().str.contains(w)).sum(),
    )
    at.text_input(key="q").set_value(word).run()
    assert 0 < len(at.dataframe[0].value) < n0, word


def test_topics_page_detail_follows_the_picked_topic(planted_app, planted_run):
    """On the planted build (the seed corpus may group into one topic under some seed):
    the page opens on the first topic and follows the picker to another."""
    at = run_page(planted_app, "topics")
    topics = planted_run.table("topics")
    assert len(at.dataframe[0].value) == int((topics.topic_id != "-1").sum())
    first_text = texts(at)
    first, other = topic_ids(planted_run)[0], topic_ids(planted_run)[-1]
    assert at.selectbox(key="topic_pick").value == first  # names the topic shown, not blank
    assert at.query_params["topic"] == first  # and the URL shares it
    at.selectbox(key="topic_pick").set_value(other).run()
    label = topics.set_index("topic_id").loc[other, "label"]
    assert f"Topic {other}: {label}" in texts(at) and texts(at) != first_text
    members = topic_papers(at)
    assert len(members) == int(topics.set_index("topic_id").loc[other, "size"])
    # Its place in the merge tree: the first merge holding it, and the others merged there.
    tree = planted_run.table("hierarchy")
    first_merge = tree[tree["topics"].map(lambda ids: int(other) in list(ids))]
    first_merge = first_merge.loc[first_merge["topics"].map(len).idxmin()]
    merged = ", ".join(map(str, first_merge["topics"]))
    assert f"First merged into: {first_merge['parent_label']} (topics {merged})" in texts(at)


def test_papers_deep_link_opens_that_paper(app, seed_run):
    papers = seed_run.table("papers")
    target = papers.iloc[5]
    at = run_page(app, "papers", paper=target["paper_id"])
    # Shown as Markdown: escaped text, its allowed math spans left for KaTeX (md_math).
    assert md_math(target["abstract"]) in [m.value for m in at.markdown]
    similar = at.dataframe[1].value
    assert len(similar) == 10


def test_papers_bad_link_shows_a_notice(app):
    at = run_page(app, "papers", paper="no-such-paper")
    assert any("Ignoring ?paper=no-such-paper" in shown(w.value) for w in at.warning)


def test_no_corpus_page(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "explorer build data/icml2025 --name icml2025" in [c.value for c in at.code]


def test_the_private_streamlit_flag_the_router_flips_still_exists():
    """explorer/view/ui/router.py flips this flag; a Streamlit that renames it must fail here."""
    import streamlit
    from streamlit.runtime.pages_manager import PagesManager

    assert "uses_pages_directory" in vars(PagesManager), streamlit.__version__
    assert PagesManager.__annotations__["uses_pages_directory"] in ("bool | None", bool | None)


def test_viewer_never_imports_the_modelling_stack(seed_cache):
    """Render every page in a fresh interpreter, then inspect sys.modules."""
    script = textwrap.dedent(
        f"""
        import os, sys
        os.environ["EXPLORER_CACHE_DIR"] = {str(seed_cache)!r}
        os.chdir({str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file("app.py", default_timeout=60).run()
        for page in ("topic_map", "topics", "trends", "papers"):
            at.switch_page(f"pages/{{page}}.py"); at.run()
            assert not at.exception, at.exception
        heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {{"torch", "sentence_transformers", "bertopic", "umap", "hdbscan", "transformers", "sklearn"}})
        print("HEAVY=" + ",".join(heavy))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HEAVY=\n" in out.stdout + "\n", out.stdout


@pytest.fixture(scope="session")
def trend_cache(tmp_path_factory):
    """A real two-year build: the seed abstracts split over 2019/2020 as paperlists JSON,
    with a planted term ("zorblax") in 1 paper of 2019 and 12 of 2020."""
    import json

    from explorer.build.pipeline import build
    from explorer.build.sources import read_inputs
    from tests.conftest import SEED_DIR, build_config

    root = tmp_path_factory.mktemp("trend")
    abstracts = [p.abstract for p in read_inputs([SEED_DIR]).papers]
    for year, part in ((2019, abstracts[:19]), (2020, abstracts[19:])):
        entries = []
        for i, text in enumerate(part):
            planted = (year == 2019 and i == 0) or (year == 2020 and i < 12)
            entries.append(
                {
                    "id": str(i),
                    "title": f"Paper {year}-{i}",
                    "abstract": text + (" zorblax quuxification." if planted else ""),
                    "status": "Oral" if i % 4 == 0 else "Poster",
                    "author": "A; B",
                }
            )
        (root / f"icml{year}.json").write_text(json.dumps(entries))
    cache = root / "cache"
    build(
        build_config("trend", [root / "icml2019.json", root / "icml2020.json"]),
        cache_dir=cache,
        progress=False,
        log=lambda m: None,
    )
    return cache


def trends_app(trend_cache, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(trend_cache))
    monkeypatch.chdir(ROOT)
    from explorer.view.ui.data import load_run

    load_run.clear()
    return run_page(
        AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT), "trends", **params
    )


@pytest.mark.realbuild
def test_trend_numbers_equal_counts_from_the_papers(trend_cache, monkeypatch):
    from explorer.artifacts import open_run

    at = trends_app(trend_cache, monkeypatch, kw="zorblax")
    assert at.multiselect(key="kw").value == ["zorblax"]
    table = at.dataframe[0].value  # tabs: over time, across classes, rising, falling
    assert list(table.columns) == ["term", "value", "papers", "class_papers", "share"]
    papers = open_run(trend_cache, "trend").table("papers")
    for year in (2019, 2020):
        in_year = papers[papers["year"] == year]
        direct = int(in_year["abstract"].str.contains("zorblax").sum())
        row = table[(table["term"] == "zorblax") & (table["value"] == str(year))].iloc[0]
        assert row["papers"] == direct and row["class_papers"] == len(in_year)
    assert (table["papers"].tolist(), table["class_papers"].tolist()) == ([1, 12], [19, 19])


@pytest.mark.realbuild
def test_planted_rising_term_ranks_first(trend_cache, monkeypatch):
    at = trends_app(trend_cache, monkeypatch)
    rising = at.dataframe[2].value
    assert rising.columns[:2].tolist() == ["term", "z"]
    # The planted sentence "Zorblax quuxification." yields three tied n-grams on top.
    assert set(rising["term"].head(3)) == {"zorblax", "quuxification", "zorblax quuxification"}
    assert rising["z"].iloc[2] > rising["z"].iloc[3]
    assert "zorblax" in at.multiselect(key="kw").value  # the default picks the top risers
    # Every pick is a chart line: no "Select N matches" (Enter would add them all).
    assert at.multiselect(key="kw").proto.select_all == 0
    assert at.multiselect(key="trend_topics").proto.select_all == 0


@pytest.mark.realbuild
def test_class_comparison_normalises_by_class_size(trend_cache, monkeypatch):
    from explorer.artifacts import open_run

    at = trends_app(trend_cache, monkeypatch, kw="zorblax")
    table = at.dataframe[1].value.set_index("value")
    papers = open_run(trend_cache, "trend").table("papers")
    for status in ("Oral", "Poster"):
        group = papers[papers["status"] == status]
        assert table.loc[status, "share"] == pytest.approx(
            group["abstract"].str.contains("zorblax").mean()
        )


def test_single_year_corpus_hides_the_time_axis(app):
    """The seed corpus is one year, one venue, no status or track: the first tab must not
    send the reader to a next tab that has nothing to compare either."""
    at = run_page(app, "trends")
    notes = [shown(i.value) for i in at.info]
    assert any("single year (2025)" in n and "nothing to compare" in n for n in notes), notes
    assert any("no classes to compare" in n for n in notes)
    assert not any("next tab" in n for n in notes)


def test_stale_link_values_are_ignored_with_a_notice(app):
    at = run_page(app, "topic_map", topics="999: no such topic", corpus="no-such-corpus", kw="x")
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "'999: no such topic'" in warnings and "link's topics" in warnings
    assert "'no-such-corpus'" in warnings
    assert "38 of 38 papers shown" in texts(at)  # the stale filter was dropped, not applied


def test_paper_detail_has_its_topic_map(app, seed_run):
    target = seed_run.table("papers").iloc[3]
    at = run_page(app, "papers", paper=target["paper_id"])
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) == 1
    import json

    spec = json.loads(charts[0].proto.spec)
    highlighted = spec["data"][1]
    import base64

    assert highlighted["name"] == "this paper"
    x = highlighted["x"]  # plotly ships arrays as typed binary: one float32 = 4 bytes
    assert x["dtype"] == "f4" and len(base64.b64decode(x["bdata"])) == 4


def test_semantic_search_ranks_and_shares_via_url(app, seed_run):
    from explorer.view.ui.search_box import result_count

    papers = seed_run.table("papers")
    spiking = papers.loc[papers["abstract"].str.contains("spiking", case=False), "title"]
    at = run_page(app, "papers", ask="spiking neural networks")
    results = at.dataframe[0].value
    assert "score" in results.columns and results["score"].is_monotonic_decreasing
    assert set(results["title"].head(3)) & set(spiking)
    assert len(results) == result_count(len(papers)) < len(papers)  # not the whole corpus
    assert at.text_input(key="ask").value == "spiking neural networks"
    assert "Keyword (TF-IDF) ranking" not in texts(at) + "".join(shown(i.value) for i in at.info)
    assert "(score: cosine similarity)" in texts(at)


def test_a_source_over_its_question_budget_is_told_and_not_searched(app, monkeypatch):
    """A new question over the source's fair share is not run (view/ui/fair.py); a question
    the session already ran is, whatever the budget."""
    from explorer.view.ui import fair

    monkeypatch.setattr(fair, "GATE", fair.QueryGate(burst=1, rate=1e-3, max_wait_s=0.0))
    at = run_page(app, "papers", ask="spiking neural networks")
    assert "score" in at.dataframe[0].value.columns and not at.warning
    at.text_input(key="ask").set_value("graph neural networks").run()
    assert any("Many questions are coming from your address" in shown(w.value) for w in at.warning)
    assert not any("score" in d.value.columns for d in at.dataframe)
    at.text_input(key="ask").set_value("spiking neural networks").run()
    assert not at.warning and "score" in at.dataframe[0].value.columns


def test_the_share_link_names_the_corpus_even_when_it_is_the_default(app, seed_run):
    """Streamlit leaves the default corpus (the first by name) out of the URL; a link
    without it would open another corpus once one named before it is built."""
    at = run_page(app, "topic_map", ask="spiking neural networks")
    assert "corpus" not in at.query_params  # the picker's default: Streamlit's URL omits it
    (link,) = [c.value for c in at.sidebar.code]
    assert f"corpus={seed_run.corpus}" in link and "ask=spiking" in link


def test_a_share_link_too_long_for_a_shared_server_is_said_to_be(app):
    """A view whose link is over MAX_LINK_CHARS (the proxy answers such links with a page
    saying they are too long) gets a warning above its link; a short one gets none."""
    from explorer.hosting.settings import MAX_LINK_CHARS

    at = run_page(app, "topic_map", ask="spiking neural networks")
    assert not at.sidebar.warning
    at = run_page(app, "topic_map", note="x" * MAX_LINK_CHARS)
    (link,) = [c.value for c in at.sidebar.code]
    assert len(link) > MAX_LINK_CHARS
    assert any("characters long" in shown(w.value) for w in at.sidebar.warning)


def test_search_respects_filters_and_falls_back_without_the_model(app, seed_run, monkeypatch):
    import explorer.view.query_encoder

    monkeypatch.setattr(explorer.view.query_encoder, "encoder_available", lambda onnx=None: False)
    papers = seed_run.table("papers")
    # The topic of the paper the query describes (not whichever topic paper 0 fell in: it
    # may be an outlier under another seed), so the filtered ranking has a paper to find.
    query = "neural processes risk"
    found = papers[papers["topic_id"] != "-1"]
    hits = found["abstract"].str.lower().map(lambda a: sum(w in a for w in query.split()))
    topic = found.loc[hits.idxmax(), "topic_id"]
    from explorer.view.store.nodes import node_name

    name = node_name(seed_run.table("nodes"))(topic)  # the URL holds the picker's label
    at = run_page(app, "topic_map", ask=query, topics=name)
    assert any("Keyword (TF-IDF) ranking" in shown(i.value) for i in at.info)
    assert "(score: TF-IDF match, not semantic)" in texts(at)
    assert "cosine similarity" not in texts(at)
    results = at.dataframe[-1].value
    allowed = set(papers.loc[papers["topic_id"] == topic, "title"])
    assert len(results) >= 1 and set(results["title"]) <= allowed


def test_search_says_why_when_the_model_cannot_load(app, seed_run, monkeypatch):
    import explorer.build.models
    import explorer.view.query_encoder
    import explorer.view.ui.search_box

    def offline(name, progress=True):
        raise OSError("We couldn't connect to 'https://huggingface.co'")

    monkeypatch.setattr(explorer.build.models, "load_model", offline)
    monkeypatch.setattr(explorer.view.query_encoder, "runtime_available", lambda: False)  # no ONNX
    explorer.view.ui.search_box._model.clear()
    try:
        at = run_page(app, "papers", ask="spiking neural networks")
        notices = " ".join(shown(i.value) for i in at.info)
        assert "could not be loaded (We couldn't connect" in notices
        assert "score" in at.dataframe[0].value.columns  # ranked by TF-IDF instead
    finally:
        explorer.view.ui.search_box._model.clear()  # later tests load the real model again


@pytest.fixture
def levels_app(tmp_path, monkeypatch):
    """A factory of apps on a synthetic run with areas and subtopics (the seed corpus is
    too small for them)."""
    from tests.synthetic import write_synthetic_run

    write_synthetic_run(tmp_path, "levels", 3000, n_topics=30)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    from explorer.view.ui.data import load_run

    load_run.clear()
    return lambda: AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


@pytest.mark.parametrize("page", ["overview", "topic_map", "topics", "trends"])
def test_level_picker_changes_the_view_and_lives_in_the_url(levels_app, page):
    at = run_page(levels_app(), page)
    assert at.radio(key="level").options == ["area", "topic", "subtopic"]
    assert not at.radio(key="level").disabled
    before = _level_view(at, page)
    at.radio(key="level").set_value("subtopic").run()
    assert not at.exception
    after = _level_view(at, page)
    assert "0.1: node 0.1" in after and "0.1: node 0.1" not in before
    fresh = run_page(levels_app(), page, level="area")
    assert fresh.radio(key="level").value == "area"
    assert "A0: node A0" in _level_view(fresh, page)


def test_a_run_of_one_level_says_so_instead_of_offering_a_choice(app, seed_run):
    """The seed corpus's 38 papers (any seed) make too few topics for areas; where none
    was split either, the level picker has nothing to offer and the filter names topics."""
    from explorer.view.store.nodes import available_levels, levels_named
    from explorer.view.ui.widgets.pickers import LEVELS_HELP, ONE_LEVEL_HELP

    levels = available_levels(seed_run.table("nodes"))
    at = run_page(app, "topic_map")
    radio = at.radio(key="level")
    assert radio.options == levels and radio.disabled == (len(levels) == 1)
    assert shown(radio.help) == (ONE_LEVEL_HELP if len(levels) == 1 else LEVELS_HELP)
    assert shown(at.multiselect(key="topics").label) == levels_named(levels)


def test_levels_are_named_as_a_label_reads():
    from explorer.view.store.nodes import levels_named

    assert levels_named(["topic"]) == "Topics"
    assert levels_named(["topic", "subtopic"]) == "Topics and subtopics"
    assert levels_named(["area", "topic", "subtopic"]) == "Areas, topics and subtopics"


def _level_view(at: AppTest, page: str) -> str:
    """What the level changes on each page, as node names."""
    if page == "topics":
        table = at.dataframe[0].value
        return " ".join(f"{i}: node {i}" for i in table["id"])
    if page == "trends":
        return " ".join(str(o) for o in at.multiselect(key="trend_topics").options)
    return " ".join(str(c.proto.spec) for c in at.get("plotly_chart"))


def test_filters_accept_a_node_of_any_level(levels_app):
    at = run_page(levels_app(), "topic_map")
    options = at.multiselect(key="topics").options
    assert any(o.startswith("A0: ") for o in options) and any(
        o.startswith("0.1: ") for o in options
    )
    total = int(texts(at).split(" of ")[1].split(" ")[0].replace(",", ""))
    counts = {}
    for node in ("A0", "0", "0.1"):
        at.multiselect(key="topics").set_value([node]).run()
        counts[node] = int(texts(at).split(" of ")[0].split("\n")[-1].replace(",", ""))
    assert total > counts["A0"] >= counts["0"] > counts["0.1"] > 0


def test_a_long_table_sends_its_first_rows_sorted_and_offers_all(app, seed_run, monkeypatch):
    """Above TABLE_ROWS a table sends only its first rows, in the order picked before the
    cap (newest first here), says how many there are, and downloads every row."""
    from explorer.view.ui.widgets import tables

    monkeypatch.setattr(tables, "TABLE_ROWS", 10)
    at = run_page(app, "papers")
    assert len(at.dataframe[0].value) == 10
    assert "First 10 of 38 papers, as listed." in texts(at)
    at.selectbox(key="papers_table_sort").set_value("year, newest first").run()
    years = seed_run.table("papers")["year"].dropna().astype(int)
    sent = at.dataframe[0].value["year"].tolist()
    assert sent == sorted(years, reverse=True)[:10]
    assert "First 10 of 38 papers, year, newest first." in texts(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert any(shown(label) == "Download these 38 papers (CSV)" for label in labels), labels
