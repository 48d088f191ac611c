"""The map and the filters at 50,000 papers (synthetic), and the density map above it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.view.charts.maps import MAX_MAP_POINTS
from tests.conftest import ROOT, shown
from tests.synthetic import write_synthetic_run


@pytest.fixture(scope="module")
def big_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("big")
    write_synthetic_run(cache, "big", 50_000)
    write_synthetic_run(cache, "huge", MAX_MAP_POINTS + 5_000, seed=1)
    return cache


def open_map(cache, corpus, monkeypatch) -> AppTest:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["corpus"] = corpus
    at.run()
    at.switch_page("pages/topic_map.py")
    at.query_params["corpus"] = corpus
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def caption_text(at: AppTest) -> str:
    return "\n".join(shown(c.value) for c in at.caption)


def test_map_at_50k_papers_renders_every_point_and_filters(big_cache, monkeypatch):
    at = open_map(big_cache, "big", monkeypatch)
    assert "50,000 of 50,000 papers shown" in caption_text(at)
    assert not any("density" in shown(i.value) for i in at.info)  # 50,000: still points
    at.multiselect(key="topics").set_value(["0"]).run()  # node ids are text
    assert "of 50,000 papers shown" in caption_text(at) and "50,000 of" not in caption_text(at)


def test_above_the_limit_the_map_is_a_density_with_a_notice(big_cache, monkeypatch):
    at = open_map(big_cache, "huge", monkeypatch)
    notices = [shown(i.value) for i in at.info]
    assert any("it shows their density" in n for n in notices), notices
    assert f"{MAX_MAP_POINTS + 5_000:,} of" in caption_text(at)
    at.multiselect(key="topics").set_value(["0"]).run()  # few enough for points again
    assert not any("density" in shown(i.value) for i in at.info)


def test_the_paper_picker_lists_5000_and_the_shared_paper(big_cache, monkeypatch):
    """At 50,000 papers a select box of every title would send megabytes on each rerun."""
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(big_cache))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["corpus"] = "big"
    at.run()
    at.switch_page("pages/papers.py")
    at.query_params.update({"corpus": "big", "paper": "syn-49999"})  # a shared link
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox[0]
    assert len(picker.options) == 5_001 and picker.value == "syn-49999"
    assert "first 5,000 of 50,000 papers" in caption_text(at)
    similar = next(d.value for d in at.dataframe if "similarity" in d.value.columns)
    # The synthetic run's neighbours of paper i are papers i+1 .. i+10 (wrapping).
    assert similar["title"].str.extract(r"paper (\d+) ")[0].astype(int).tolist() == list(range(10))
