"""A real `streamlit run app.py` on a free localhost port, and Debian's chromium via Playwright."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.hosting.processes import free_port
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, EDIT_KEY, ROOT  # noqa: F401 (re-exported)

ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"


def start_server(
    cache: Path,
    *,
    python: str = sys.executable,
    app_dir: Path = ROOT,
    edit_key: str | None = EDIT_KEY,
    extra: tuple[str, ...] = (),
) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` on a free loopback port, once healthy. The host edits with
    `edit_key` (None: nobody edits); visitors in the tests never present it."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "EXPLORER_EDIT_KEY"}
    env["EXPLORER_CACHE_DIR"] = str(cache)
    if edit_key is not None:
        env["EXPLORER_EDIT_KEY"] = edit_key
    cmd = [
        python, "-m", "streamlit", "run", str(app_dir / "app.py"),
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", "--client.showErrorDetails", "full", *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not _healthy(port):
        if time.monotonic() < deadline:
            time.sleep(0.5)
            continue
        proc.kill()
        pytest.fail("streamlit did not become healthy: " + proc.stderr.read().decode()[-2000:])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return proc, url


@contextlib.contextmanager
def dashboard(
    cache: Path, log: Path, *options: str, drop_env: tuple[str, ...] = ()
) -> Iterator[int]:
    """`explorer dashboard --port P *options` on `cache` (output to `log`), without the
    edit key or `drop_env` from this environment, once its health check answers; its port.
    Stopped afterwards."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("EXPLORER_EDIT_KEY", *drop_env)}
    command = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(cache), "dashboard",
               "--port", str(port), *options]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while not _healthy(port):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def fresh_page(browser, url: str) -> Iterator:
    """`url` opened in a browser context of its own (1400x1000; no cookie, no session: what
    a shared link's recipient sees), closed afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(url)
        yield page
    finally:
        context.close()


@contextlib.contextmanager
def page_served(browser, cache: Path, path: str) -> Iterator:
    """A page of a fresh server on `cache`, loaded at `path` (1400x1000), checked for
    exceptions; server and browser context are closed afterwards."""
    proc, url = start_server(cache)
    try:
        with fresh_page(browser, f"{url}/{path}") as page:
            wait_for_app(page)
            no_exception(page)
            yield page
    finally:
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


# --- `explorer serve` / a published serve.py: haproxy and N workers ---------------------


def haproxy_or_skip() -> str:
    """haproxy's path; a skip with the reason outside CI, a failure in CI."""
    from explorer.hosting.haproxy import find_haproxy

    found = find_haproxy()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(
                "haproxy is missing in CI: `make test` installs it (apt-get install haproxy)"
            )
        pytest.skip("haproxy not installed (make test installs it when run as root)")
    return found


def start_serve(
    command: list[str], *, cwd: Path, cache: Path | None, log: Path, timeout: float = 180
) -> tuple[subprocess.Popen, str]:
    """Run a serve command (its stderr into `log`) until it prints the URL it serves;
    `cache` None leaves the cache to the command's default."""
    env = {k: v for k, v in os.environ.items() if k != "EXPLORER_CACHE_DIR"}
    if cache is not None:
        env["EXPLORER_CACHE_DIR"] = str(cache)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + timeout
    while "Serving http" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            kill_tree(proc)
            pytest.fail(f"serve did not start (status {proc.poll()}): {log.read_text()[-2000:]}")
        time.sleep(0.5)
    line = next(ln for ln in log.read_text().splitlines() if "Serving http" in ln)
    return proc, line.split("Serving ", 1)[1].split()[0]


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (Linux /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                children = {int(c) for c in task.read_text().split()}
                todo += sorted(children - found)
                found |= children
    return found


def alive(pids: set[int]) -> set[int]:
    """The pids still running (zombies waiting for a reaper count as gone)."""
    running = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] != "Z":
                running.add(pid)
    return running


def kill_tree(proc: subprocess.Popen, extra: set[int] = frozenset()) -> None:
    """Cleanup after a failed test: the supervisor and anything it started, by pid."""
    pids = descendants(proc.pid) | set(extra)
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10  # children get SIGTERM from the kernel (PDEATHSIG)
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in alive(pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def run_async(coro, timeout: float = 300):
    """Run a coroutine in a thread of its own: the session's Playwright browser keeps an
    event loop running in this one, and asyncio.run refuses to nest."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=timeout)


@contextlib.asynccontextmanager
async def proxied_visit(url: str, corpus: str, cookies: dict[str, str] | None = None):
    """A browser's visit through the proxy, with its own cookie jar (bench.load_ws.visit).
    Yields (jar, worker that answered the websocket, a bench.load_ws StreamlitClient)."""
    from bench.load_ws import visit

    async with visit(url, corpus, cookies) as (jar, ws, client):
        yield jar, ws.response.headers.get("X-Explorer-Worker"), client


def check_rerun(run) -> None:
    """The script finished, without an exception, and shows the paper count."""
    assert run.status == "FINISHED_SUCCESSFULLY", run.status
    assert not run.exceptions, run.exceptions
    assert run.caption() is not None


async def load_and_filter(client) -> None:
    """The page's first run, then a search that changes the paper count."""
    import asyncio

    from bench.load_sessions import SEARCH_LABEL

    first = await asyncio.wait_for(client.rerun({}), 120)
    check_rerun(first)
    changed = await asyncio.wait_for(client.rerun({SEARCH_LABEL: "reinforcement"}), 120)
    check_rerun(changed)
    assert changed.caption() != first.caption()
