"""Viewer benchmarks: server-side run time per page, a filter change, the map's first
render in headless Chromium, the server's RSS after every page, every page at 50k, and at
1,000,000 papers every page's run time and the server's RSS after every page.

Server-side times come from AppTest (the page script run by Streamlit's own runtime,
in this process) after one warm-up run, so Streamlit's caches are warm as they are for
any visitor after the first. Browser figures come from a real `streamlit run` server.

    python -m bench.viewer [--corpus bench-icml] [--runs 7] [--big 50000] [--million 1000000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, median, write_results
from bench.load_browser import ARGS, CHROMIUM
from bench.load_server import Server

PAGES = ("overview", "topic_map", "topics", "trends", "papers")


def _apptest(cache: Path, corpus: str):
    from streamlit.testing.v1 import AppTest

    os.environ["EXPLORER_CACHE_DIR"] = str(cache)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["corpus"] = corpus
    return at


def _timed_run(at) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        sys.exit(f"page raised: {[e.value for e in at.exception]}")
    return elapsed


def page_times(cache: Path, corpus: str, runs: int) -> dict[str, float]:
    """Median seconds of a page's script run, after one warm-up run of that page."""
    out = {}
    for page in PAGES:
        at = _apptest(cache, corpus)
        at.run()
        if page != "overview":
            at.switch_page(f"pages/{page}.py")
        _timed_run(at)  # warm-up: loads the run and fills this page's caches
        out[page] = median([_timed_run(at) for _ in range(runs)])
    return out


def filter_times(cache: Path, corpus: str, runs: int) -> dict[str, float]:
    """A filter change on the topic map: a search word, then the topic filter, alternating."""
    at = _apptest(cache, corpus)
    at.run()
    at.switch_page("pages/topic_map.py")
    _timed_run(at)
    words, topics = [], []
    for i in range(runs):
        at.text_input(key="q").set_value("bandit" if i % 2 == 0 else "")
        words.append(_timed_run(at))
    for i in range(runs):
        at.multiselect(key="topics").set_value([str(i % 3)] if i % 2 == 0 else [])  # ids are text
        topics.append(_timed_run(at))
    return {"search_word": median(words), "topic_filter": median(topics)}


MAP_DRAWN = """() => {
    const h = document.querySelector('[data-testid="stMain"] h1');
    return h && h.innerText.includes('Topic map')
        && document.querySelector('.js-plotly-plot canvas'); }"""


def browser(corpus: str, port: int = 8766, repeats: int = 5) -> dict[str, object]:
    """The map's first render when a user moves to it from another page (the dashboard is
    already loaded, as it is after any first visit), a fresh tab's full load for
    reference, and the server's RSS after every page was visited."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is not installed (make test installs it)"}
    server = Server.start(port, 0)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            visit_every_page(chromium, base, corpus)  # the server's caches are now warm
            rss = server.rss_mb()
            navigations, loads = [], []
            for _ in range(repeats):
                tab = chromium.new_page(viewport={"width": 1280, "height": 900})
                tab.goto(f"{base}/?corpus={corpus}")
                tab.wait_for_selector(".js-plotly-plot", timeout=120_000)
                tab.wait_for_timeout(1000)
                start = time.perf_counter()
                tab.get_by_role("link", name="Topic map").click()
                tab.wait_for_function(MAP_DRAWN, timeout=60_000)
                navigations.append(round(time.perf_counter() - start, 3))
                start = time.perf_counter()
                tab.goto(f"{base}/topic_map?corpus={corpus}")
                tab.wait_for_function(MAP_DRAWN, timeout=60_000)
                loads.append(round(time.perf_counter() - start, 3))
                tab.close()
            chromium.close()
    finally:
        server.stop()
    return {
        "map_first_render_s": median(navigations),
        "map_navigation_runs_s": navigations,
        "map_fresh_tab_load_s": median(loads),
        "map_fresh_tab_runs_s": loads,
        "rss_mb": round(rss, 1),
    }


def visit_every_page(chromium, base: str, corpus: str) -> None:
    """Open each page once in a new tab, as a visitor touring the dashboard."""
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    for name in PAGES:
        page.goto(f"{base}/{'' if name == 'overview' else name}?corpus={corpus}")
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=300_000)
        page.wait_for_timeout(2000)
    page.close()


def million(n_papers: int, runs: int, port: int = 8767) -> dict[str, object]:
    """A synthetic run of `n_papers`: every page's run time (AppTest), and the RSS of a real
    `streamlit run` after a visitor opened every page in Chromium."""
    from playwright.sync_api import sync_playwright

    from tests.synthetic import write_synthetic_run

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        write_synthetic_run(cache, "synthetic", n_papers)
        out: dict[str, object] = {"papers": n_papers}
        out["page_s"] = page_times(cache, "synthetic", runs)
        if not Path(CHROMIUM).exists():
            return {**out, "skipped": f"{CHROMIUM} is not installed (make test installs it)"}
        server = Server.start(port, 0, cache=cache)
        try:
            with sync_playwright() as p:
                chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                visit_every_page(chromium, f"http://127.0.0.1:{port}", "synthetic")
                out["rss_mb"] = round(server.rss_mb(), 1)
                chromium.close()
        finally:
            server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="bench-icml")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--big", type=int, default=50_000)
    parser.add_argument("--million", type=int, default=1_000_000, help="0: skip that run")
    args = parser.parse_args()
    os.chdir(ROOT)
    cache = ROOT / "cache"
    result: dict[str, object] = {"corpus": args.corpus, "runs": args.runs}
    result["page_s"] = page_times(cache, args.corpus, args.runs)
    result["filter_s"] = filter_times(cache, args.corpus, args.runs)
    os.environ["EXPLORER_CACHE_DIR"] = str(cache)
    result["browser"] = browser(args.corpus)
    from tests.synthetic import write_synthetic_run

    with tempfile.TemporaryDirectory() as tmp:
        write_synthetic_run(Path(tmp), "synthetic", args.big)
        result["big_papers"] = args.big
        result["big_page_s"] = page_times(Path(tmp), "synthetic", max(3, args.runs // 2))
    if args.million:
        result["million"] = million(args.million, 3)
    result["page_p50_max_s"] = max(result["page_s"].values())
    result["big_page_max_s"] = max(result["big_page_s"].values())
    path = write_results("viewer", result)
    print(path.read_text())


if __name__ == "__main__":
    main()
