"""A real `streamlit run app.py` on a free localhost port, and Debian's chromium via Playwright."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(
                f"{CHROMIUM} is missing in CI: `make test` installs it (apt-get install chromium)"
            )
        pytest.skip(f"{CHROMIUM} not installed (make test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def start_server(
    cache: Path, *, python: str = sys.executable, app_dir: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` on a free loopback port, once healthy."""
    port = _free_port()
    env = {**os.environ, "EXPLORER_CACHE_DIR": str(cache)}
    cmd = [
        python, "-m", "streamlit", "run", str(app_dir / "app.py"),
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", "--client.showErrorDetails", "full",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not become healthy: " + proc.stderr.read().decode()[-2000:])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return proc, url


@contextlib.contextmanager
def page_served(browser, cache: Path, path: str) -> Iterator:
    """A page of a fresh server on `cache`, loaded at `path` (1400x1000), checked for
    exceptions; server and browser context are closed afterwards."""
    proc, url = start_server(cache)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{url}/{path}")
        wait_for_app(page)
        no_exception(page)
        yield page
    finally:
        context.close()
        stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def server(seed_cache):
    """Base URL of a streamlit server serving the seed build, shared by the session."""
    proc, url = start_server(seed_cache)
    yield url
    stop_server(proc)


@pytest.fixture
def fresh_server(seed_cache):
    """A server no session has visited yet (what a shared link meets after a restart)."""
    proc, url = start_server(seed_cache)
    yield url
    stop_server(proc)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    context.close()


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Until the script has finished running (no 'running' status widget)."""
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout)
    page.wait_for_selector("h1", timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout
    )
    page.wait_for_timeout(800)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]'
    ).first.inner_text()
