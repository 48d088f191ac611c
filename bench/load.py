"""Load test on loopback: N concurrent sessions change a filter on the topic map for S seconds.

Two kinds of client, both against a real `streamlit run` server:

- `ws` (default): Streamlit websocket clients. Each speaks the browser's protocol on
  `/_stcore/stream`: it sends `BackMsg.rerun_script` with the widget states a browser would
  send, and reads every `ForwardMsg` of the rerun until `script_finished`. No JavaScript
  runs, so the clients cost little CPU and the server alone is measured.
- `browser`: headless-Chromium pages (Playwright contexts). Closer to a user, but on this
  2-core machine 20 software-rendered WebGL maps saturate the CPU the server needs, so the
  client becomes what is measured (bench/README.md).

Reports errors, the p50/p95 time from a filter change to the updated chart, and the
server's RSS growth between the first and last 15 seconds. Bounded: a fixed number of
sessions for a fixed time; every wait has a timeout; it stops by itself.

    python -m bench.load [--client ws|browser] [--sessions 20] [--seconds 60] [--think 0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import ICML, ROOT, explorer_cmd, write_results

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
SEARCH_LABEL = "Search title, abstract, authors"
CAPTION = "papers shown"
PAGE = "topic_map"
TIMEOUT_S = 30.0  # one filter change that takes longer than this is an error
# RSS swings by ~+-100 MB within a second as reruns allocate and free; 4 samples a second
# keep the first-vs-last-15-s comparison from being decided by where one sample falls.
RSS_EVERY_S = 0.25


def ensure_corpus(name: str) -> None:
    """Build the ICML 2013-2019 corpus if it is not built yet (needs ../shared)."""
    usable = subprocess.run(explorer_cmd("info", name), cwd=ROOT, capture_output=True)
    if usable.returncode == 0:  # built, intact, and of this artifact schema
        return
    if not ICML.is_dir():
        print(f"skip: {ICML} is absent, so corpus {name!r} cannot be built")
        sys.exit(0)
    subprocess.run(explorer_cmd("build", str(ICML), "--name", name), cwd=ROOT, check=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used (from /proc, so any process)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def clients_cpu_s(server: int) -> float:
    """CPU seconds of this process and its children (Chromium, Playwright), not the server's."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue  # the process ended while we looked
    total, me = 0.0, os.getpid()
    for pid in parents:
        ancestor = pid
        while ancestor not in (me, server, 0, 1) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == me or pid == me:
            try:
                total += cpu_s(pid)
            except OSError:
                continue
    return total


def start_server(port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py"]
    cmd += ["--server.port", str(port), "--server.address", "127.0.0.1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    sys.exit("streamlit did not start within 60 s")


@dataclass
class Window:
    """The shared clock: the timed window opens once every session has loaded the page."""

    sessions: int
    ready: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(0))
    go: asyncio.Event = field(default_factory=asyncio.Event)
    until: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds used in the window
    arrived: set[int] = field(default_factory=set)

    def arrive(self, index: int) -> None:
        """Session `index` has loaded the page, or failed to: either way, stop waiting for it."""
        if index not in self.arrived:
            self.arrived.add(index)
            self.ready.release()

    async def queries(self, index: int, think: float):
        """Once every session has arrived: this session's search words, until the window ends.

        Alternating a word and the empty box, so every change moves the paper count.
        """
        self.arrive(index)
        await self.go.wait()
        step = 0
        while time.monotonic() < self.until:
            yield WORDS[(index + step) % len(WORDS)] if step % 2 == 0 else ""
            step += 1
            if think:
                await asyncio.sleep(think)

    async def run(self, seconds: float, pid: int, samples: list[tuple[float, float]]) -> None:
        for _ in range(self.sessions):  # warm-up: every session loaded (or failed)
            await self.ready.acquire()
        server, clients = cpu_s(pid), clients_cpu_s(pid)
        start = time.monotonic()
        self.until = start + seconds
        self.go.set()
        while time.monotonic() < self.until:
            samples.append((time.monotonic() - start, rss_mb(pid)))
            await asyncio.sleep(RSS_EVERY_S)
        self.cpu = {"server": cpu_s(pid) - server, "clients": clients_cpu_s(pid) - clients}


@dataclass
class Outcome:
    """What one session saw: per-change latencies and any errors (never raised)."""

    chart_s: list[float] = field(default_factory=list)
    rerun_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# --- websocket clients ---------------------------------------------------------------


@dataclass
class Rerun:
    """One script run as a client sees it: elements, widget ids, timings, end status."""

    texts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # the text boxes shown
    exceptions: list[str] = field(default_factory=list)
    chart_s: float | None = None
    finished_s: float | None = None
    status: str = ""

    def caption(self) -> str | None:
        return next((t for t in self.texts if CAPTION in t), None)


class StreamlitClient:
    """A Streamlit browser session without the browser: the websocket protocol only.

    Like the browser, it keeps the widgets it was shown and mirrors a widget bound to the URL
    (`bind="query-params"`) in the query string it sends with the next rerun.
    """

    def __init__(self, ws, params: dict[str, str]) -> None:
        self.ws = ws
        self.params = dict(params)
        self.widgets: dict[str, tuple[str, str]] = {}  # label -> (widget id, query param)

    async def rerun(self, values: dict[str, str]) -> Rerun:
        """Type these values into the text boxes (by label); read until the script finishes."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        client = msg.rerun_script
        client.page_name = PAGE
        for label, value in values.items():
            widget_id, param = self.widgets[label]
            state = client.widget_states.widgets.add()
            state.id = widget_id
            state.string_value = value
            if param and value:
                self.params[param] = value
            elif param:  # a bound widget at its default leaves the URL
                self.params.pop(param, None)
        client.query_string = urllib.parse.urlencode(self.params)
        run = Rerun()
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            forward = ForwardMsg()
            forward.ParseFromString(await self.ws.recv())
            kind = forward.WhichOneof("type")
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                which = element.WhichOneof("type")
                if which == "plotly_chart" and run.chart_s is None:
                    run.chart_s = time.perf_counter() - start
                elif which == "markdown":
                    run.texts.append(element.markdown.body)
                elif which == "text_input":
                    box = element.text_input
                    self.widgets[box.label] = (box.id, box.query_param_key)
                    run.labels.append(box.label)
                elif which == "exception":
                    run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(forward.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue  # superseded by a rerun the server started itself; it follows
                run.finished_s = time.perf_counter() - start
                run.status = status
                return run


def _check(run: Rerun, previous: str | None) -> str | None:
    """Why this rerun does not show an updated map, or None when it does."""
    if run.exceptions:
        return f"exception on the page: {run.exceptions[0][:200]}"
    if run.status != "FINISHED_SUCCESSFULLY":
        return f"script ended with {run.status}"
    if run.chart_s is None:
        return "no chart in the rerun"
    if run.caption() is None or run.caption() == previous:
        return f"caption did not change (still {previous!r})"
    return None


async def ws_session(
    base: str, corpus: str, window: Window, index: int, think: float, out: Outcome
) -> None:
    from websockets.asyncio.client import connect

    url = base.replace("http://", "ws://") + "/_stcore/stream"
    try:
        async with connect(url, subprotocols=["streamlit"], max_size=None) as ws:
            client = StreamlitClient(ws, {"corpus": corpus})
            first = await asyncio.wait_for(client.rerun({}), 120)
            box = SEARCH_LABEL in first.labels
            problem = _check(first, None) or (None if box else f"no {SEARCH_LABEL!r} box")
            if problem:
                raise RuntimeError(f"first load: {problem}")
            shown = first.caption()
            async for query in window.queries(index, think):
                run = await asyncio.wait_for(client.rerun({SEARCH_LABEL: query}), TIMEOUT_S)
                problem = _check(run, shown)
                if problem:
                    out.errors.append(f"session {index}, q={query!r}: {problem}")
                else:
                    out.chart_s.append(run.chart_s)
                    out.rerun_s.append(run.finished_s)
                shown = run.caption()
    except Exception as exc:  # a timeout or a crash in one session is a finding, not a stop
        out.errors.append(f"session {index}: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        window.arrive(index)


# --- browser clients -----------------------------------------------------------------


async def _caption(page) -> str:
    return await page.get_by_text(CAPTION).first.inner_text(timeout=TIMEOUT_S * 1000)


async def _settled(page, previous: str) -> str:
    """Wait until the caption changed and the rerun finished; return the new caption."""
    await page.wait_for_function(
        """([needle, previous]) => {
            const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                .find(e => e.innerText.includes(needle));
            return el && el.innerText !== previous && !document.querySelector('[data-testid="stStatusWidget"]');
        }""",
        arg=[CAPTION, previous],
        timeout=TIMEOUT_S * 1000,
    )
    return await _caption(page)


async def browser_session(
    browser, url: str, window: Window, index: int, think: float, out: Outcome
) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    try:
        await page.goto(url, timeout=120_000)
        current = await _caption(page)
        async for query in window.queries(index, think):
            box = page.get_by_label(SEARCH_LABEL)
            start = time.perf_counter()
            await box.fill(query)
            await box.press("Enter")
            current = await _settled(page, current)
            seconds = time.perf_counter() - start  # settled: the chart is drawn, the run over
            out.chart_s.append(seconds)
            out.rerun_s.append(seconds)
            if await page.locator('[data-testid="stException"]').count():
                out.errors.append(f"session {index}: exception shown")
    except Exception as exc:
        out.errors.append(
            f"session {index}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        )
    finally:
        window.arrive(index)
        await context.close()


# --- the run -------------------------------------------------------------------------


def _quantiles(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    p95 = statistics.quantiles(values, n=20)[18] if len(values) >= 20 else None
    return round(statistics.median(values), 3), round(p95, 3) if p95 is not None else None


async def run(args: argparse.Namespace, base: str, pid: int) -> dict:
    samples: list[tuple[float, float]] = []
    out = Outcome()
    window = Window(args.sessions)
    if args.client == "ws":
        sessions = [
            ws_session(base, args.corpus, window, i, args.think, out) for i in range(args.sessions)
        ]
        await asyncio.gather(window.run(args.seconds, pid, samples), *sessions)
    else:
        from playwright.async_api import async_playwright

        url = f"{base}/{PAGE}?corpus={args.corpus}"
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            sessions = [
                browser_session(browser, url, window, i, args.think, out)
                for i in range(args.sessions)
            ]
            await asyncio.gather(window.run(args.seconds, pid, samples), *sessions)
            await browser.close()
    first = [r for t, r in samples if t <= 15]
    last = [r for t, r in samples if t >= args.seconds - 15]
    growth = (statistics.mean(last) / statistics.mean(first) - 1) if first and last else None
    chart_p50, chart_p95 = _quantiles(out.chart_s)
    rerun_p50, rerun_p95 = _quantiles(out.rerun_s)
    return {
        "client": args.client,
        "corpus": args.corpus,
        "sessions": args.sessions,
        "seconds": args.seconds,
        "think_s": args.think,
        "filter_changes": len(out.rerun_s),
        "changes_per_s": round(len(out.rerun_s) / args.seconds, 2),
        "errors": out.errors,
        "latency_p50_s": chart_p50,  # filter change -> updated chart received
        "latency_p95_s": chart_p95,
        "rerun_p50_s": rerun_p50,  # filter change -> the whole rerun finished
        "rerun_p95_s": rerun_p95,
        "server_cpu_s": round(window.cpu.get("server", 0.0), 1),  # of seconds x cpus available
        "clients_cpu_s": round(window.cpu.get("clients", 0.0), 1),  # with Chromium
        "rss_first15_mb": round(statistics.mean(first), 1) if first else None,
        "rss_last15_mb": round(statistics.mean(last), 1) if last else None,
        "rss_growth": round(growth, 4) if growth is not None else None,
        "rss_every_s": RSS_EVERY_S,
        "rss_mb": [round(r, 1) for _, r in samples],  # the server's RSS, every rss_every_s
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("ws", "browser"), default="ws")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", type=float, default=0.0, help="pause after each change (s)")
    parser.add_argument("--corpus", default="icml-2013-2019")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if args.client == "browser" and not Path(CHROMIUM).exists():
        print(f"skip: {CHROMIUM} is not installed (make test installs it)")
        sys.exit(0)
    ensure_corpus(args.corpus)
    server = start_server(args.port)
    try:
        base = f"http://127.0.0.1:{args.port}"
        result = asyncio.run(run(args, base, server.pid))
    finally:
        server.terminate()
        server.wait(timeout=20)
    name = "load" if args.client == "ws" else "load-browser"
    path = write_results(name, result)
    print(path.read_text())
    ok = not result["errors"] and result["rss_growth"] is not None and result["rss_growth"] < 0.10
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
