"""The Compare page in Chromium: two corpora (a Sankey of matched topics and the tables)
and two years of one corpus (the chart of the largest shifts), each from a shared link."""

from __future__ import annotations

import shutil

import pytest

from tests.e2e.conftest import (
    ARTIFACTS,
    fresh_page,
    no_exception,
    start_server,
    stop_server,
    wait_for_app,
)
from tests.synthetic import write_synthetic_run

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def compare_server(seed_cache, tmp_path_factory):
    cache = tmp_path_factory.mktemp("compare-cache")
    for name in ("seed", "again"):
        shutil.copytree(seed_cache / "seed", cache / name)
    write_synthetic_run(cache, "syn", 700, n_topics=10)
    proc, url = start_server(cache)
    yield url
    stop_server(proc)


def test_two_corpora_from_a_link(compare_server, page):
    page.goto(f"{compare_server}/compare?a=seed&b=again")
    page.get_by_text("Matched topics").wait_for(timeout=60_000)
    wait_for_app(page)
    no_exception(page)
    page.locator(".sankey-node").first.wait_for(timeout=30_000)
    assert page.locator(".sankey-node").count() >= 2  # the Sankey drew its topics
    assert "0 topics only in seed, 0 only in again" in page.locator("body").inner_text()
    page.screenshot(path=str(ARTIFACTS / "compare_corpora.png"), full_page=True)


def test_two_years_from_a_link(compare_server, page):
    page.goto(f"{compare_server}/compare?corpus=syn&years=2013,2019")
    page.get_by_text("emerging and").wait_for(timeout=60_000)
    wait_for_app(page)
    no_exception(page)
    bars = page.locator(".js-plotly-plot .bars path")  # the largest shifts, once drawn
    bars.first.wait_for(timeout=30_000)
    assert bars.count() > 0
    page.screenshot(path=str(ARTIFACTS / "compare_years.png"), full_page=True)


def test_another_model_is_refused_on_the_page(compare_server, page):
    page.goto(f"{compare_server}/compare?a=seed&b=syn")
    page.get_by_text("cannot be compared").wait_for(timeout=60_000)
    no_exception(page)


def test_two_corpora_of_one_corpus_stay_in_the_link(server, browser, page):
    """Corpus A and B both the only corpus are Streamlit's defaults, left out of the URL: the
    link must still say "two corpora", or it reopens two years."""
    page.goto(f"{server}/compare")
    wait_for_app(page)
    page.get_by_text("Two corpora", exact=True).click()
    page.wait_for_function("() => location.search.includes('mode=corpora')", timeout=30_000)
    # Nothing to compare the one corpus with: the page says so (not a match with itself).
    page.get_by_text("Only one corpus is built here").wait_for(timeout=60_000)
    with fresh_page(browser, page.url) as fresh:
        fresh.get_by_text("Only one corpus is built here").wait_for(timeout=60_000)
        wait_for_app(fresh)
        no_exception(fresh)
