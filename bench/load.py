"""Load test on loopback: N concurrent browser sessions change filters on the topic map.

Reports errors, the p50/p95 time from a filter change to the finished rerun (caption and
chart updated), and the server's RSS growth between the first and last 15 seconds.
Bounded: a fixed number of sessions for a fixed time; every wait has a timeout; it stops
by itself. Results go to bench/results/load.json.

    python -m bench.load [--sessions 20] [--seconds 60] [--corpus icml-2013-2019]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_ICML = ROOT.parent / "shared" / "data" / "paperlists" / "icml"
RESULTS = ROOT / "bench" / "results"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
WORDS = [
    "bandit",
    "kernel",
    "policy",
    "graph",
    "privacy",
    "sparse",
    "adversarial",
    "gaussian",
    "clustering",
    "regret",
]


def ensure_corpus(name: str) -> None:
    """Build the ICML 2013-2019 corpus if it is not built yet (needs ../shared)."""
    usable = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "info", name], cwd=ROOT, capture_output=True
    )
    if usable.returncode == 0:  # built, intact, and of this artifact schema
        return
    if not SHARED_ICML.is_dir():
        sys.exit(f"skip: {SHARED_ICML} is absent, so corpus {name!r} cannot be built")
    subprocess.run(
        [sys.executable, "-m", "explorer.cli", "build", str(SHARED_ICML), "--name", name],
        cwd=ROOT,
        check=True,
    )


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_server(port: int) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    sys.exit("streamlit did not start")


CAPTION = "papers shown"


async def caption(page) -> str:
    return await page.get_by_text(CAPTION).first.inner_text(timeout=30_000)


async def settled(page, previous: str) -> str:
    """Wait until the caption changed and the rerun finished; return the new caption."""
    await page.wait_for_function(
        """([needle, previous]) => {
            const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                .find(e => e.innerText.includes(needle));
            return el && el.innerText !== previous && !document.querySelector('[data-testid="stStatusWidget"]');
        }""",
        arg=[CAPTION, previous],
        timeout=30_000,
    )
    return await caption(page)


async def session(
    browser, url: str, window: dict, index: int, latencies: list[float], errors: list[str]
) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    ready = False
    try:
        await page.goto(url, timeout=120_000)
        current = await caption(page)
        ready = True
        window["ready"].release()
        await window["go"].wait()  # the timed window starts when every session shows the map
        step = 0
        while time.monotonic() < window["until"]:
            query = WORDS[(index + step) % len(WORDS)] if step % 2 == 0 else ""
            box = page.get_by_label("Search title, abstract, authors")
            start = time.perf_counter()
            await box.fill(query)
            await box.press("Enter")
            current = await settled(page, current)
            latencies.append(time.perf_counter() - start)
            if await page.locator('[data-testid="stException"]').count():
                errors.append(f"session {index}: exception shown")
            step += 1
    except Exception as exc:  # a timeout or a crash in one session is a finding, not a stop
        errors.append(f"session {index}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        if not ready:
            window["ready"].release()
    finally:
        await context.close()


async def run(url: str, sessions: int, seconds: float, pid: int) -> dict:
    from playwright.async_api import async_playwright

    samples: list[tuple[float, float]] = []
    latencies: list[float] = []
    errors: list[str] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        window = {"ready": asyncio.Semaphore(0), "go": asyncio.Event(), "until": 0.0}

        async def sample() -> None:
            for _ in range(sessions):  # warm-up: every session loaded (or failed)
                await window["ready"].acquire()
            start = time.monotonic()
            window["until"] = start + seconds
            window["go"].set()
            while time.monotonic() < window["until"]:
                samples.append((time.monotonic() - start, rss_mb(pid)))
                await asyncio.sleep(1)

        await asyncio.gather(
            sample(),
            *(session(browser, url, window, i, latencies, errors) for i in range(sessions)),
        )
        await browser.close()
    first = [r for t, r in samples if t <= 15]
    last = [r for t, r in samples if t >= seconds - 15]
    growth = (statistics.mean(last) / statistics.mean(first) - 1) if first and last else None
    quantiles = statistics.quantiles(latencies, n=20) if len(latencies) >= 20 else []
    return {
        "sessions": sessions,
        "seconds": seconds,
        "filter_changes": len(latencies),
        "errors": errors,
        "latency_p50_s": round(statistics.median(latencies), 3) if latencies else None,
        "latency_p95_s": round(quantiles[18], 3) if quantiles else None,
        "rss_first15_mb": round(statistics.mean(first), 1) if first else None,
        "rss_last15_mb": round(statistics.mean(last), 1) if last else None,
        "rss_growth": round(growth, 4) if growth is not None else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--corpus", default="icml-2013-2019")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"skip: {CHROMIUM} is not installed (make test installs it)")
    ensure_corpus(args.corpus)
    server = start_server(args.port)
    try:
        base = f"http://127.0.0.1:{args.port}"
        urllib.request.urlopen(f"{base}/", timeout=10).read()
        result = asyncio.run(
            run(f"{base}/topic_map?corpus={args.corpus}", args.sessions, args.seconds, server.pid)
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    result.update(
        {
            "corpus": args.corpus,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "load.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    ok = not result["errors"] and result["rss_growth"] is not None and result["rss_growth"] < 0.10
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
