"""The browser client of the load test: headless-Chromium pages (Playwright contexts) that
type into the topic map's search box and wait for the updated caption. Closer to a user than
the websocket client, but on a 2-core machine 20 software-rendered WebGL maps saturate the
CPU the server needs, so the client becomes what is measured (bench/README.md). CHROMIUM and
ARGS are how every benchmark launches the browser (bench/viewer.py too).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from bench.load_sessions import CAPTION, SEARCH_LABEL, TIMEOUT_S

if TYPE_CHECKING:
    from bench.load_sessions import Outcome, Plan, Window

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


async def _caption(page) -> str:
    return await page.get_by_text(CAPTION).first.inner_text(timeout=TIMEOUT_S * 1000)


async def _settled(page, expected: int) -> None:
    """Wait until the caption shows the `expected` count and the rerun finished."""
    await page.wait_for_function(
        """([needle, prefix]) => {
            const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                .find(e => e.innerText.includes(needle));
            return el && el.innerText.startsWith(prefix) && !document.querySelector('[data-testid="stStatusWidget"]');
        }""",
        arg=[CAPTION, f"{expected:,} of "],
        timeout=TIMEOUT_S * 1000,
    )


async def browser_session(
    browser, url: str, window: Window, index: int, plan: Plan, out: Outcome
) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    try:
        await page.goto(url, timeout=120_000)
        await _caption(page)
        async for query, expected in window.queries(index, plan.values, plan.think):
            box = page.get_by_label(SEARCH_LABEL)
            start = time.perf_counter()
            await box.fill(query)
            await box.press("Enter")
            await _settled(page, expected)
            seconds = time.perf_counter() - start  # settled: the chart is drawn, the run over
            out.chart_s.append(seconds)
            out.rerun_s.append(seconds)
            out.by_session.setdefault(index, []).append(seconds)
            if await page.locator('[data-testid="stException"]').count():
                out.errors.append(f"session {index}: exception shown")
    except Exception as exc:
        out.errors.append(
            f"session {index}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        )
    finally:
        window.arrive(index)
        await context.close()
