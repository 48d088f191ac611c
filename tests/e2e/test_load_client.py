"""The load test's websocket client against a real server: it must see what a browser sees.

The load test itself runs in `make bench` (bench/load.py). This checks, in a few seconds, that
its client still speaks the Streamlit version installed here, so a protocol change shows up as
a red test rather than as a load test that measures nothing.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.load_sessions import SEARCH_LABEL
from bench.load_ws import Rerun, StreamlitClient, _check
from tests.e2e.conftest import start_server

pytestmark = pytest.mark.e2e


async def _load_then_filter(url: str, corpus: str) -> tuple[Rerun, Rerun, StreamlitClient]:
    from websockets.asyncio.client import connect

    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    async with connect(stream, subprotocols=["streamlit"], max_size=None) as ws:
        client = StreamlitClient(ws, {"corpus": corpus})
        first = await asyncio.wait_for(client.rerun({}), 60)
        changed = await asyncio.wait_for(client.rerun({SEARCH_LABEL: "reinforcement"}), 60)
        return first, changed, client


def _count(caption: str | None) -> int:
    assert caption is not None
    return int(caption.split(" of ", 1)[0].replace(",", ""))


def test_websocket_client_sees_the_map_and_a_filter_change(seed_cache):
    proc, url = start_server(seed_cache)
    try:
        # A thread of its own: the session's Playwright browser keeps an event loop running
        # in this one, and asyncio.run refuses to nest.
        with ThreadPoolExecutor(1) as pool:
            run = pool.submit(asyncio.run, _load_then_filter(url, "seed"))
            first, changed, client = run.result(timeout=180)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert _check(first, None) is None
    assert SEARCH_LABEL in first.labels
    assert 0 < _count(changed.caption()) < _count(first.caption())
    assert _check(changed, _count(changed.caption())) is None
    assert "not the 999 papers" in _check(changed, 999)
    assert changed.chart_s is not None and changed.chart_s <= changed.finished_s
    assert client.params == {"corpus": "seed", "q": "reinforcement"}  # as the browser's URL


def test_check_flags_what_a_user_would_see_as_broken():
    ok = "FINISHED_SUCCESSFULLY"
    fine = Rerun(texts=["3 of 9 papers shown."], chart_s=0.1, finished_s=0.2, status=ok)
    assert _check(fine, 3) is None
    assert "is not the 9 papers" in _check(fine, 9)
    assert "no paper count" in _check(Rerun(chart_s=0.1, finished_s=0.2, status=ok), None)
    crashed = Rerun(texts=fine.texts, chart_s=0.1, exceptions=["KeyError: 'x'"], status=ok)
    assert "exception" in _check(crashed, None)
    no_chart = Rerun(texts=fine.texts, status=ok)
    assert "no chart" in _check(no_chart, None)
    compile_error = Rerun(texts=fine.texts, chart_s=0.1, status="FINISHED_WITH_COMPILE_ERROR")
    assert "FINISHED_WITH_COMPILE_ERROR" in _check(compile_error, None)
