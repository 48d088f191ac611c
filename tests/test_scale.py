"""The map and the filters at 50,000 papers (synthetic), and the sampling notice above it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.view import charts
from tests.conftest import ROOT, shown
from tests.synthetic import write_synthetic_run


@pytest.fixture(scope="module")
def big_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("big")
    write_synthetic_run(cache, "big", 50_000)
    write_synthetic_run(cache, "huge", charts.MAX_MAP_POINTS + 5_000, seed=1)
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
    assert not any("random sample" in shown(w.value) for w in at.warning)
    at.multiselect(key="topics").set_value(["0"]).run()  # node ids are text
    assert "of 50,000 papers shown" in caption_text(at) and "50,000 of" not in caption_text(at)


def test_above_the_limit_the_map_samples_with_a_notice(big_cache, monkeypatch):
    at = open_map(big_cache, "huge", monkeypatch)
    assert any(f"random sample of {charts.MAX_MAP_POINTS:,}" in shown(w.value) for w in at.warning)
