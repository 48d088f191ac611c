"""The map at 1,000,000 papers (a synthetic run) in Chromium: a density raster with topic
labels, a lasso over it that lists the papers inside, and no websocket message near
Streamlit's limit."""

from __future__ import annotations

import re

import pytest

from explorer.view.charts import maps
from tests.e2e.conftest import ARTIFACTS, page_served, wait_for_app
from tests.synthetic import write_synthetic_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
N_PAPERS = 1_000_000
MESSAGE_LIMIT = 50 * 1024 * 1024  # bytes: well under Streamlit's default of 200 MB


@pytest.fixture(scope="module")
def million(tmp_path_factory):
    cache = tmp_path_factory.mktemp("million")
    write_synthetic_run(cache, "million", N_PAPERS)
    return cache


def test_a_million_papers_draw_as_density_and_a_lasso_selects_a_region(million, browser):
    sizes: list[int] = []

    def watch(ws) -> None:
        ws.on("framereceived", lambda payload: sizes.append(len(payload)))

    with page_served(browser, million, "topic_map?corpus=million") as page:
        page.on("websocket", watch)
        page.reload()
        wait_for_app(page, timeout=180_000)
        page.get_by_text("it shows their density").wait_for(timeout=180_000)
        plot = page.locator(".js-plotly-plot").first
        plot.locator(".heatmaplayer, g.hm image, image").first.wait_for(timeout=60_000)
        assert plot.locator("g.annotation").count() > 0  # topic labels over the density
        page.screenshot(path=str(ARTIFACTS / "density_1m.png"), full_page=True)

        # Lasso (the map's drag mode) a square around the middle of the plot.
        box = plot.locator(".nsewdrag").first.bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        corners = [(-80, -80), (80, -80), (80, 80), (-80, 80), (-80, -78)]
        page.mouse.move(cx + corners[0][0], cy + corners[0][1])
        page.mouse.down()
        for dx, dy in corners[1:]:
            page.mouse.move(cx + dx, cy + dy, steps=6)
        page.mouse.up()
        heading = page.get_by_text(re.compile(r"^Selection: [\d,]+ papers$"))
        heading.wait_for(timeout=180_000)
        selected = int(heading.inner_text().split(":")[1].split()[0].replace(",", ""))
        assert 0 < selected < N_PAPERS
        page.locator(".js-plotly-plot").nth(1).wait_for(timeout=60_000)  # its papers as points
        wait_for_app(page, timeout=180_000)
        heading.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "density_1m_selected.png"))
    assert sizes, "no websocket frame seen"
    assert max(sizes) < MESSAGE_LIMIT, max(sizes)


def test_the_density_layer_is_small_whatever_the_papers():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    papers = pd.DataFrame({"x": rng.normal(size=200_000), "y": rng.normal(size=200_000)})
    fig = maps.density_map(papers, maps.MapOptions(extent=((-5, 5), (-5, 5))))
    heat, bins = fig.data
    assert np.asarray(heat.z).shape == (maps.DENSITY_BINS, maps.DENSITY_BINS)
    assert np.nansum(np.asarray(heat.customdata)) == len(papers)  # every paper in a bin
    assert 0 < len(bins.x) <= maps.DENSITY_BINS**2 and bins.marker.opacity == 0


def test_the_density_puts_papers_in_their_bin_and_the_selectable_centre_there():
    import numpy as np
    import pandas as pd

    # Every paper at x = 7.5, y = 2.5 on a 10 x 10 extent: an off-diagonal bin.
    papers = pd.DataFrame({"x": [7.5] * 5, "y": [2.5] * 5})
    heat, bins = maps.density_map(papers, maps.MapOptions(extent=((0, 10), (0, 10)))).data
    step = 10 / maps.DENSITY_BINS
    col, row = int(7.5 / step), int(2.5 / step)
    counts = np.asarray(heat.customdata)  # rows are y, columns x, as plotly draws z
    assert counts[row, col] == 5 and np.nansum(counts) == 5
    assert np.isfinite(np.asarray(heat.z)[row, col])
    assert len(bins.x) == 1
    assert abs(bins.x[0] - 7.5) <= step and abs(bins.y[0] - 2.5) <= step
