"""What a visitor sends is bounded before it costs the server: free text (search boxes, and
the same values arriving through the URL) is cut to MAX_TEXT_CHARS before it reaches the
filters or the per-run memo keys, and a map selection's cost does not grow with the shape a
client sends.

Before: a 20 MB search value became a memo key (40 of them took a worker from 670 to
1,742 MB, for good), and a 50,000-vertex lasso over 60,000 points took 5 s of CPU, with
the cost growing as vertices x points.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from explorer.view.ui import state
from tests.conftest import ROOT
from tests.test_app import _app_on, run_page

HUGE = "diffusion " * 10_000  # 100 kB: far past the cap, under Streamlit's own URL limit


def _strings(value: object) -> list[str]:
    """Every string inside a memo key (tuples, frozen dataclasses such as Filters)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list, frozenset, set)):
        return [s for item in value for s in _strings(item)]
    if hasattr(value, "__dataclass_fields__"):
        return [s for name in value.__dataclass_fields__ for s in _strings(getattr(value, name))]
    return []


def test_a_huge_search_value_is_cut_before_it_reaches_filters_or_memos(seed_cache, monkeypatch):
    from explorer.view.ui.data import Memo

    keys: list[object] = []
    real_get = Memo.get
    monkeypatch.setattr(
        Memo, "get", lambda memo, key, make: keys.append(key) or real_get(memo, key, make)
    )
    at = run_page(_app_on(seed_cache, monkeypatch), "topic_map", **{state.QUERY: HUGE})
    assert len(at.text_input(key=state.QUERY).value) <= state.MAX_TEXT_CHARS
    run_page(at, "papers", **{state.ASK: HUGE})
    assert len(at.text_input(key=state.ASK).value) <= state.MAX_TEXT_CHARS
    strings = [s for key in keys for s in _strings(key)]
    assert any("diffusion" in s for s in strings), "the searches never reached a memo key"
    assert max(map(len, strings)) <= state.MAX_TEXT_CHARS


def test_a_50000_vertex_lasso_over_a_million_points_is_cheap():
    """In a child process with a hard timeout: before, this ran for hours (vertices x
    points); the bound here is an attack's, generous for any host, not a speed target
    (bench/README.md measures that)."""
    code = textwrap.dedent(
        """
        import numpy as np
        from explorer.view.store.selection import in_region
        rng = np.random.default_rng(0)
        x, y = rng.normal(size=1_000_000), rng.normal(size=1_000_000)
        zigzag = {"x": list(np.linspace(-4, 4, 50_000)), "y": [-4.0, 4.0] * 25_000}
        t = np.linspace(0, 2 * np.pi, 50_000, endpoint=False)
        star = {"x": list(3 * np.cos(t)), "y": list(3 * np.sin(t))}
        in_region(x, y, [], [zigzag, star] * 4)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, timeout=120, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_clear_cache_message_does_not_make_the_next_visit_reload_the_corpus(
    seed_cache, monkeypatch
):
    """Any session may send `clear_cache`; Streamlit's handler then empties every st.cache_*
    (streamlit/runtime/app_session.py, `_handle_clear_cache_request`, called here as it
    runs it). Before, the next visit re-read and re-verified the whole run (21.7 s instead
    of about 5 s on ICML 2019); now the run stays loaded in the process."""
    from streamlit.runtime import caching

    from explorer import artifacts
    from explorer.view.ui.data import _built

    _built.clear()  # loaded by an earlier test: this one watches the first load
    opened: list[str] = []
    real_open = artifacts.open_run
    monkeypatch.setattr(
        artifacts, "open_run", lambda *a, **k: opened.append(a[1]) or real_open(*a, **k)
    )
    at = run_page(_app_on(seed_cache, monkeypatch), "topic_map")
    assert opened, "the first visit loads the run"
    opened.clear()
    caching.cache_data.clear()  # what a visitor's clear_cache message runs
    caching.cache_resource.clear()
    run_page(at, "topic_map")
    assert opened == []
