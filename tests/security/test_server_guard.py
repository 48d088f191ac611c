"""What every dashboard server adds in front of Streamlit (explorer/view/ui/asgi.py), tried
on a plain `streamlit run app.py`, which is also what each `explorer serve` worker, `make
run` and a published folder run (issue 28, items 2-4).

Before: a handshake from a foreign Origin made Streamlit ask an external address for this
machine's IP (blocking, up to 2 s, in the worker's event loop); any visitor's clear_cache
message emptied every st.cache_* of the process; a (re)started server answered its health
check, and so took visitors, before it had loaded a corpus or run a page.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from explorer.view.ui.asgi import run_page
from tests.e2e.conftest import run_async, start_server, stop_server
from tests.ray_cluster import namespace_tools, run_in_namespace

# st.cache_data's entries, as Streamlit's metrics endpoint lists them (5 s TTL there).
METRICS = "/_stcore/metrics?families=cache_memory_bytes"
METRICS_TTL_S = 5.5
CACHED = "explorer.view.ui.data._default_keywords"  # filled by the Trends page


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_a_foreign_origin_is_refused_with_no_call_out(seed_cache):
    """In a private network namespace, with an audit hook on the server's sockets: the
    foreign handshake gets 403 and the server looks up or connects to nothing outside."""
    reason = namespace_tools()
    if reason:
        pytest.fail(f"cannot make a private network namespace: {reason}")
    done = run_in_namespace("tests.security.origin_probe", str(seed_cache), timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["foreign"] == 403
    assert result["same_site"] == 101
    assert result["outside"] == [], "the handshake set off calls out of the machine"


async def _visit_then_clear_cache(url: str) -> None:
    from websockets.asyncio.client import connect

    async with connect(url.replace("http://", "ws://") + "/_stcore/stream",
                       subprotocols=["streamlit"], max_size=None) as ws:  # fmt: skip
        await run_page(ws, "trends", "corpus=seed")
        clear = BackMsg()
        clear.clear_cache = True
        await ws.send(clear.SerializeToString())
        await run_page(ws, "papers", "corpus=seed")  # after the clear_cache was read; no Trends


@pytest.fixture
def server_url(seed_cache):
    """A fresh `streamlit run app.py` per test (each test needs the server's first state:
    a shared one would let one test's visit fill the cache another checks); its URL."""
    proc, url = start_server(seed_cache)
    try:
        yield url
    finally:
        stop_server(proc)


def test_a_visitors_clear_cache_message_empties_no_cache(server_url):
    run_async(_visit_then_clear_cache(server_url), timeout=120)
    time.sleep(METRICS_TTL_S)  # the metrics endpoint recounts after its TTL
    status, metrics = _get(server_url + METRICS)
    assert status == 200
    assert CACHED in metrics, "the visitor's clear_cache emptied st.cache_data"


def test_health_passes_only_once_every_page_has_run(server_url):
    """`start_server` returns at the first 200 from /_stcore/health: by then the warm-up
    visit has run every page (the Trends page filled its st.cache_data entry), so the
    first visitor a proxy sends pays no first-load costs."""
    status, metrics = _get(server_url + METRICS)
    assert status == 200
    assert CACHED in metrics, "health passed before the pages had run"


def test_the_warm_up_visit_runs_pages_without_an_error(server_url):
    """The warm-up client drives a real session: each page reaches script_finished."""
    from explorer.view.ui.asgi import visit_every_page
    from explorer.view.ui.router import PAGE_PATHS

    done = run_async(visit_every_page(server_url, ["seed"], list(PAGE_PATHS)), timeout=120)
    assert done == len(PAGE_PATHS)


def test_a_flood_of_refusals_writes_one_log_line_a_minute(monkeypatch):
    """An attacker's 1,000 foreign handshakes must not write 1,000 lines to the host's log."""
    from explorer.view.ui import asgi

    lines: list[str] = []
    monkeypatch.setattr(asgi._log, "warning", lambda msg, *a: lines.append(msg % a))
    monkeypatch.setattr(asgi, "_LAST_WARNING", {"at": -float("inf"), "muted": 0})
    clock = iter([0.0] * 1000 + [61.0])
    monkeypatch.setattr(asgi, "_clock", lambda: next(clock))
    for _ in range(1001):
        asgi._warn_once_a_minute("refused a websocket from origin %r", "https://evil.test")
    assert lines == [
        "refused a websocket from origin 'https://evil.test'",
        "refused a websocket from origin 'https://evil.test' (999 more refusals in the last minute)",
    ]
