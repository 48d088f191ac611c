"""Every page in headless chromium (GPU disabled) against `streamlit run`; screenshots saved."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.e2e.conftest import ARTIFACTS, no_exception, start_server, stop_server, wait_for_app
from tests.synthetic import write_synthetic_run

pytestmark = pytest.mark.e2e
PAGES = {"overview": "", "topic_map": "topic_map", "topics": "topics", "papers": "papers"}


@pytest.mark.parametrize("name", list(PAGES))
def test_page_loads_without_exception(server, page, name):
    page.goto(f"{server}/{PAGES[name]}")
    wait_for_app(page)
    no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    assert page.locator("h1").first.inner_text()


def _coloured_pixels(path) -> int:
    """Saturated pixels: topic-coloured points, not white background, grey or text."""
    image = Image.open(path).convert("RGB")
    return sum(1 for r, g, b in image.get_flattened_data() if max(r, g, b) - min(r, g, b) > 60)


def test_map_draws_its_points_without_a_gpu(server, page):
    page.goto(f"{server}/topic_map")
    wait_for_app(page)
    plot_area = page.locator(".js-plotly-plot .nsewdrag").first
    plot_area.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    shot = ARTIFACTS / "topic_map_plot_area.png"
    plot_area.screenshot(path=str(shot))
    assert _coloured_pixels(shot) > 200, "the map's plot area shows no coloured points"


def test_search_filter_narrows_the_table(server, page):
    page.goto(f"{server}/topic_map?q=spiking")
    wait_for_app(page)
    no_exception(page)
    caption = page.get_by_text("papers shown").first.inner_text()
    shown = int(caption.split(" of ")[0].replace(",", ""))
    assert 0 < shown < 38
    page.screenshot(path=str(ARTIFACTS / "topic_map_filtered.png"), full_page=True)


def test_deep_link_on_a_fresh_server_goes_through_the_router(fresh_server, page):
    """The first request a restarted server sees is a shared link to a page, not '/'."""
    page.goto(f"{fresh_server}/topic_map?q=spiking")
    wait_for_app(page)
    no_exception(page)
    assert page.get_by_text("Corpus", exact=True).count() == 1  # app.py's sidebar ran
    caption = page.get_by_text("papers shown").first.inner_text()
    assert 0 < int(caption.split(" of ")[0]) < 38


def test_map_draws_50k_points(tmp_path, browser):
    write_synthetic_run(tmp_path, "big", 50_000)
    proc, url = start_server(tmp_path)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{url}/topic_map")
        wait_for_app(page)
        no_exception(page)
        plot_area = page.locator(".js-plotly-plot .nsewdrag").first
        plot_area.wait_for(timeout=60_000)
        page.wait_for_timeout(3000)
        shot = ARTIFACTS / "topic_map_50k_plot_area.png"
        plot_area.screenshot(path=str(shot))
        assert _coloured_pixels(shot) > 5000
    finally:
        context.close()
        stop_server(proc)
