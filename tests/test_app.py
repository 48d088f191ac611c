"""Every page rendered headless with AppTest against a real build of the seed corpus,
with at least one interaction per page that must change what is shown."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

TIMEOUT = 60


@pytest.fixture
def app(seed_cache, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(seed_cache))
    monkeypatch.chdir(ROOT)
    from explorer.ui.data import load_run

    load_run.clear()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


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


def texts(app: AppTest) -> str:
    return "\n".join(
        str(e.value) for e in [*app.text, *app.markdown, *app.caption, *app.subheader, *app.title]
    )


def test_overview(app, seed_run):
    at = run_page(app, "overview")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Papers"] == "38"
    assert metrics["Topics"] == str(seed_run.manifest["counts"]["topics"])
    assert "Overview: seed" in texts(at)


def test_topic_map_filters_change_the_table(app, seed_run):
    at = run_page(app, "topic_map")
    assert "38 of 38 papers shown" in texts(at)
    assert len(at.dataframe[0].value) == 38
    at.multiselect(key="topics").set_value([0]).run()
    n0 = int((seed_run.table("papers")["topic_id"] == 0).sum())
    assert f"{n0} of 38 papers shown" in texts(at)
    assert len(at.dataframe[0].value) == n0
    at.text_input(key="q").set_value("spiking").run()
    assert len(at.dataframe[0].value) < n0


def test_topics_page_detail_follows_the_picked_topic(app, seed_run):
    at = run_page(app, "topics")
    topics = seed_run.table("topics")
    assert len(at.dataframe[0].value) == int((topics.topic_id >= 0).sum())
    first = texts(at)
    at.selectbox(key="topic_pick").set_value(1).run()
    label = topics.set_index("topic_id").loc[1, "label"]
    assert f"Topic 1: {label}" in texts(at) and texts(at) != first
    members = at.dataframe[1].value
    assert len(members) == int(topics.set_index("topic_id").loc[1, "size"])


def test_papers_deep_link_opens_that_paper(app, seed_run):
    papers = seed_run.table("papers")
    target = papers.iloc[5]
    at = run_page(app, "papers", paper=target["paper_id"])
    assert target["abstract"] in [t.value for t in at.text]
    similar = at.dataframe[1].value
    assert len(similar) == 10


def test_papers_bad_link_shows_a_notice(app):
    at = run_page(app, "papers", paper="no-such-paper")
    assert any("Ignoring ?paper=no-such-paper" in w.value for w in at.warning)


def test_no_corpus_page(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "explorer build data/icml2025 --name icml2025" in [c.value for c in at.code]


def test_viewer_never_imports_the_modelling_stack(seed_cache):
    """Render every page in a fresh interpreter, then inspect sys.modules."""
    script = textwrap.dedent(
        f"""
        import os, sys
        os.environ["EXPLORER_CACHE_DIR"] = {str(seed_cache)!r}
        os.chdir({str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file("app.py", default_timeout=60).run()
        for page in ("topic_map", "topics", "papers"):
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
