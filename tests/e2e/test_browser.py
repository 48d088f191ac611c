"""Every page in headless chromium (GPU disabled) against `streamlit run`; screenshots saved."""

from __future__ import annotations

import pytest
from PIL import Image
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import ARTIFACTS, fresh_page, no_exception, page_served, wait_for_app
from tests.synthetic import write_synthetic_run

pytestmark = pytest.mark.e2e
PAGES = {
    "overview": "",
    "topic_map": "topic_map",
    "topics": "topics",
    "trends": "trends",
    "papers": "papers",
}


@pytest.mark.parametrize("name", list(PAGES))
def test_page_loads_without_exception(server, page, name):
    page.goto(f"{server}/{PAGES[name]}")
    wait_for_app(page)
    no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    assert page.locator("h1").first.inner_text()


def _map_pixels(page, name: str, settle_ms: int) -> int:
    """Screenshot the map's plot area (no legend) and count its coloured pixels."""
    plot_area = page.locator(".js-plotly-plot .nsewdrag").first
    plot_area.wait_for(timeout=60_000)
    page.wait_for_timeout(settle_ms)
    shot = ARTIFACTS / f"{name}.png"
    plot_area.screenshot(path=str(shot))
    return _coloured_pixels(shot)


def _coloured_pixels(path) -> int:
    """Saturated pixels: topic-coloured points, not white background, grey or text."""
    image = Image.open(path).convert("RGB")
    return sum(1 for r, g, b in image.get_flattened_data() if max(r, g, b) - min(r, g, b) > 60)


def test_map_draws_its_points_without_a_gpu(server, page):
    page.goto(f"{server}/topic_map")
    wait_for_app(page)
    pixels = _map_pixels(page, "topic_map_plot_area", settle_ms=1500)
    assert pixels > 200, "the map's plot area shows no coloured points"


def test_search_filter_narrows_the_table(server, page):
    page.goto(f"{server}/topic_map?q=spiking")
    wait_for_app(page)
    no_exception(page)
    caption = page.get_by_text("papers shown").first.inner_text()
    shown = int(caption.split(" of ")[0].replace(",", ""))
    assert 0 < shown < 38
    page.screenshot(path=str(ARTIFACTS / "topic_map_filtered.png"), full_page=True)


def _sidebar_link(page) -> str:
    return (
        page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first.inner_text().strip()
    )


@pytest.mark.parametrize("finest", [False, True])
def test_a_bar_on_the_overview_opens_its_topic_at_that_level(server, seed_run, page, finest):
    """Streamlit refuses to set the corpus and level in a page switch's URL (both are bound
    to widgets): clicking a bar once raised "Cannot directly set query parameter". At the
    finest level the run has (subtopics where a topic was split), the Topics page opens at
    that level."""
    from explorer.view.store.nodes import available_levels

    level = available_levels(seed_run.table("nodes"))[-1] if finest else None
    page.goto(f"{server}/" + (f"?level={level}" if level else ""))
    wait_for_app(page)
    for _ in range(3):  # a click while the chart is being redrawn selects nothing
        bar = page.locator('[data-testid="stPlotlyChart"] g.point path').first
        bar.wait_for(timeout=60_000)
        bar.click(force=True)
        try:
            page.wait_for_url("**/topics?*", timeout=20_000)
            break
        except PlaywrightTimeout:
            wait_for_app(page)
    page.wait_for_url("**/topics?*", timeout=1_000)
    page.get_by_text("Topic", exact=True).first.wait_for(timeout=60_000)
    wait_for_app(page)
    no_exception(page)
    assert "topic=" in page.url, page.url
    if level:
        picked = page.locator('[data-testid="stRadio"] label:has(input:checked)').first
        assert picked.inner_text().strip() == level


def test_the_chart_toolbar_covers_no_bar_of_the_overview(server, page):
    """Plotly shows its toolbar on hover at the chart's top right: over the largest bar, a
    click there downloaded a PNG instead of opening the topic."""
    page.goto(f"{server}/")
    wait_for_app(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    bars = chart.locator("g.point path")
    bars.first.wait_for(timeout=60_000)
    bars.first.hover(force=True)
    toolbar = chart.locator(".modebar").first
    toolbar.wait_for(state="visible", timeout=10_000)
    tb = toolbar.bounding_box()
    for i in range(bars.count()):
        bar = bars.nth(i).bounding_box()
        apart = (
            bar["y"] >= tb["y"] + tb["height"]
            or bar["y"] + bar["height"] <= tb["y"]
            or bar["x"] + bar["width"] <= tb["x"]
            or bar["x"] >= tb["x"] + tb["width"]
        )
        assert apart, (i, bar, tb)


def test_a_map_without_matches_keeps_its_link_and_host_sign_in(server, page):
    """The page ends early (nothing to draw), not the run: the sidebar is drawn after it."""
    page.goto(f"{server}/topic_map?q=zzzzqqq")
    wait_for_app(page)
    page.get_by_text("No paper matches these filters.").wait_for(timeout=30_000)
    no_exception(page)
    assert "q=zzzzqqq" in _sidebar_link(page)
    assert page.get_by_text("Host sign-in").count() == 1


def test_deep_link_on_a_fresh_server_goes_through_the_router(fresh_server, page):
    """The first request a restarted server sees is a shared link to a page, not '/'."""
    page.goto(f"{fresh_server}/topic_map?q=spiking")
    # The page hands over to the router with one rerun; app.py's sidebar must then appear.
    page.get_by_text("Corpus", exact=True).wait_for(timeout=30_000)
    wait_for_app(page)
    no_exception(page)
    caption = page.get_by_text("papers shown").first.inner_text()
    assert 0 < int(caption.split(" of ")[0]) < 38


def test_map_draws_50k_points(tmp_path, browser):
    write_synthetic_run(tmp_path, "big", 50_000)
    with page_served(browser, tmp_path, "topic_map") as page:
        assert _map_pixels(page, "topic_map_50k_plot_area", settle_ms=3000) > 5000


def _shown(page) -> int:
    caption = page.get_by_text("papers shown").first.inner_text()
    return int(caption.split(" of ")[0].replace(",", ""))


def test_shared_link_reproduces_the_view_in_a_fresh_browser(server, browser, page):
    page.goto(f"{server}/topic_map")
    wait_for_app(page)
    search = page.get_by_label("Search title, abstract, authors")
    search.fill("neural")
    search.press("Enter")
    page.wait_for_function(
        "() => document.body.innerText.includes('papers shown') && !document.body.innerText.includes('38 of 38')"
    )
    wait_for_app(page)
    count = _shown(page)
    link = _sidebar_link(page)
    assert link.startswith(f"{server}/topic_map?") and "q=neural" in link, link
    with fresh_page(browser, link) as fresh:
        wait_for_app(fresh)
        assert _shown(fresh) == count
        fresh.screenshot(path=str(ARTIFACTS / "shared_link.png"), full_page=True)


def test_ask_box_s_question_reaches_the_url_and_the_link_reproduces_the_view(server, browser, page):
    """The "ask" box lives in a fragment, yet its question reaches the URL and the sidebar's
    link (drawn outside the fragment), and the link shows the same matches in a fresh
    browser."""
    page.goto(f"{server}/topic_map")
    wait_for_app(page)
    ask = page.get_by_role("textbox", name="Ask in your own words")
    ask.fill("spiking neurons")
    ask.press("Enter")
    page.get_by_text("Search matches (ringed on the map)").wait_for(timeout=30_000)
    wait_for_app(page)
    page.wait_for_function("() => location.search.includes('ask=spiking')")
    # The sidebar's link is drawn outside the fragment: a new question redraws it too.
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stCode"]')]
            .some(e => e.innerText.includes('ask=spiking'))""",
        timeout=30_000,
    )
    first = _first_match(page)
    with fresh_page(browser, page.url) as fresh:
        fresh.get_by_text("Search matches (ringed on the map)").wait_for(timeout=30_000)
        wait_for_app(fresh)
        assert _first_match(fresh) == first
        fresh.screenshot(path=str(ARTIFACTS / "ask_shared_link.png"), full_page=True)


def _first_match(page) -> str:
    """The first row of the search results table (the grid's accessible table)."""
    grid = page.locator('[data-testid="stDataFrame"]').last
    return grid.locator("table tr").nth(1).inner_text(timeout=30_000)


def test_csv_download_has_the_filtered_rows(server, seed_run, page, tmp_path):
    import csv

    from explorer.view.store.papers import EXPORT_COLUMNS

    page.goto(f"{server}/papers?q=neural")
    wait_for_app(page)
    caption = page.get_by_text("papers match the filters").first.inner_text()
    expected = int(caption.split(" of ")[0])
    with page.expect_download() as download:
        page.get_by_role("button", name=f"Download these {expected} papers (CSV)").click()
    path = tmp_path / "papers.csv"
    download.value.save_as(path)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0].keys()) == EXPORT_COLUMNS and len(rows) == expected
    # The filter searches title, abstract and authors; the CSV has no abstract column.
    abstracts = dict(seed_run.table("papers")[["paper_id", "abstract"]].to_numpy())
    assert all(
        "neural" in (r["title"] + r["authors"] + abstracts[r["paper_id"]]).lower() for r in rows
    )
