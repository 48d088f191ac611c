"""The map's labels in Chromium at 1400x1000 on ICML 2013-2019 (a real 3,000-paper build):
every area label and at least 15 topic labels are drawn, and no two label boxes overlap.

Needs ../shared/data/paperlists (skipped with the reason when it is absent).
"""

from __future__ import annotations

import pytest

from tests.conftest import SHARED, build_config
from tests.e2e.conftest import ARTIFACTS, page_served

pytestmark = [pytest.mark.e2e, pytest.mark.realbuild]
ICML = SHARED / "paperlists" / "icml"
FONT_SIZES_JS = """
() => [...document.querySelectorAll('.js-plotly-plot g.annotation')].map(g => {
  const r = g.getBoundingClientRect();
  const text = g.querySelector('text');
  return {text: g.textContent, size: parseFloat(text.style.fontSize || '0'),
          box: [r.left, r.top, r.right, r.bottom]};
})
"""


@pytest.fixture(scope="module")
def icml_cache(seed_cache, tmp_path_factory):
    if not ICML.is_dir():
        pytest.skip(f"{ICML} is absent: the ICML 2013-2019 map test needs the shared paper lists")
    from explorer.build.pipeline import build

    cache = tmp_path_factory.mktemp("icml")
    run = build(
        build_config("icml", [ICML]), cache_dir=cache, progress=False,
        log=lambda m: None,
    ).run  # fmt: skip
    return cache, run


def test_area_and_topic_labels_are_drawn_without_overlaps(icml_cache, browser):
    cache, run = icml_cache
    nodes = run.table("nodes")
    n_areas = int((nodes["level"] == "area").sum())
    assert n_areas >= 5
    with page_served(browser, cache, "topic_map?level=topic") as page:
        page.locator(".js-plotly-plot g.annotation").first.wait_for(timeout=30_000)
        labels = page.evaluate(FONT_SIZES_JS)
        page.screenshot(path=str(ARTIFACTS / "map_labels_icml.png"), full_page=True)
    areas = [label for label in labels if label["size"] >= 15]
    topics = [label for label in labels if label["size"] < 15]
    assert len(areas) == n_areas, [a["text"] for a in areas]
    assert len(topics) >= 15, [t["text"] for t in topics]
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            x0, y0, x1, y1 = a["box"]
            u0, v0, u1, v1 = b["box"]
            overlap = x0 < u1 - 0.5 and u0 < x1 - 0.5 and y0 < v1 - 0.5 and v0 < y1 - 0.5
            assert not overlap, (a["text"], b["text"])
