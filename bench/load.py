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
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
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


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in found]


@dataclass
class Server:
    """The server under test: one `streamlit run`, or `explorer serve` (haproxy and N
    workers). CPU and memory are summed over its whole process tree."""

    proc: subprocess.Popen

    @classmethod
    def start(
        cls, port: int, workers: int, app_dir: Path = ROOT, cache: Path = ROOT / "cache"
    ) -> Server:
        """Serve `app_dir`'s app (this project, or e.g. a worktree of an older commit for a
        side-by-side comparison) on `cache` (this project's, by default)."""
        address = ["--server.port", str(port), "--server.address", "127.0.0.1"]
        if workers:
            cmd = explorer_cmd("serve", "--workers", str(workers), "--port", str(port))
        else:
            cmd = [sys.executable, "-m", "streamlit", "run", "app.py", *address]
        env = {**os.environ, "EXPLORER_CACHE_DIR": str(cache)}
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        proc = subprocess.Popen(cmd, cwd=app_dir, env=env, **quiet)
        server = cls(proc)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2):
                    return server
            except OSError:
                time.sleep(0.5)
        server.stop()
        sys.exit(f"{' '.join(cmd[:4])} did not start within 120 s")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def pids(self) -> list[int]:
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(_children(pid))
        return found

    def cpu_s(self) -> float:
        return sum(_safe(cpu_s, pid) for pid in self.pids())

    def rss_mb(self) -> float:
        return sum(_safe(rss_mb, pid) for pid in self.pids())

    def stop(self) -> None:
        """Ctrl-C, as a user stops it; killed if it does not stop within 30 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _safe(measure, pid: int) -> float:
    try:
        return measure(pid)
    except OSError:  # the process ended while we looked
        return 0.0


class Queries:
    """The search values the sessions type, each with the paper count the page must show.

    `fresh`: every change in the run types a value no session typed before (terms of the
    corpus's own vocabulary, in a fixed shuffled order), so no cache can answer it: the
    cost measured is the cost of a view never seen. `repeat`: every session cycles over
    the same few values, so after the first round every view is a cache hit.
    """

    REPEAT = 4

    def __init__(self, cache: Path, corpus: str, mode: str) -> None:
        from explorer import artifacts
        from explorer.view import store

        run = artifacts.open_run(cache, corpus, verify=False)
        self.papers = run.table("papers")
        self.haystack = store.search_haystack(self.papers)
        self.search_mask = store.search_mask
        self.terms = run.table("vocab")["term"].tolist()
        random.Random(0).shuffle(self.terms)
        self.mode = mode
        self.used = 0
        self.counts: dict[str, int] = {}

    def _count(self, term: str) -> int:
        if term not in self.counts:
            self.counts[term] = int(self.search_mask(self.papers, term, self.haystack).sum())
        return self.counts[term]

    def _fresh(self) -> str:
        while self.used < len(self.terms):
            term = self.terms[self.used]
            self.used += 1
            if self._count(term):  # a value matching nothing shows no map to time
                return term
        raise RuntimeError(f"all {len(self.terms):,} vocabulary terms used: run shorter")

    def next(self, session: int, step: int) -> tuple[str, int]:
        if self.mode == "fresh":
            term = self._fresh()
        else:
            while len(self.counts) < self.REPEAT:
                self._fresh()
            term = list(self.counts)[(session + step) % self.REPEAT]
        return term, self._count(term)


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

    async def queries(self, index: int, values: Queries, think: tuple[float, float]):
        """Once every session has arrived: (search value, papers it must show) until the
        window ends, pausing a random think time from the `think` range after each."""
        self.arrive(index)
        await self.go.wait()
        pause = random.Random(index)
        step = 0
        while time.monotonic() < self.until:
            yield values.next(index, step)
            step += 1
            if think[1]:
                await asyncio.sleep(pause.uniform(*think))

    async def run(self, seconds: float, proc: Server, samples: list[tuple[float, float]]) -> None:
        for _ in range(self.sessions):  # warm-up: every session loaded (or failed)
            await self.ready.acquire()
        pid = proc.pid
        server, clients = proc.cpu_s(), clients_cpu_s(pid)
        start = time.monotonic()
        self.until = start + seconds
        self.go.set()
        while time.monotonic() < self.until:
            samples.append((time.monotonic() - start, proc.rss_mb()))
            await asyncio.sleep(RSS_EVERY_S)
        self.cpu = {"server": proc.cpu_s() - server, "clients": clients_cpu_s(pid) - clients}


@dataclass
class Outcome:
    """What one session saw: per-change latencies and any errors (never raised)."""

    chart_s: list[float] = field(default_factory=list)
    rerun_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    by_session: dict[int, list[float]] = field(default_factory=dict)  # chart_s per session
    sent_bytes: list[int] = field(default_factory=list)  # per change (websocket client only)


@dataclass(frozen=True)
class Plan:
    """What every session does: which values it types, and how long it thinks after each."""

    values: Queries
    think: tuple[float, float]  # (low, high) seconds; (0, 0) is back to back


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
    sent_bytes: int = 0  # what the server sent for this rerun (every ForwardMsg)

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
            raw = await self.ws.recv()
            run.sent_bytes += len(raw)
            forward.ParseFromString(raw)
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


def _check(run: Rerun, expected: int | None) -> str | None:
    """Why this rerun does not show the map of the `expected` number of papers, or None."""
    if run.exceptions:
        return f"exception on the page: {run.exceptions[0][:200]}"
    if run.status != "FINISHED_SUCCESSFULLY":
        return f"script ended with {run.status}"
    if run.chart_s is None:
        return "no chart in the rerun"
    caption = run.caption()
    if caption is None:
        return "no paper count on the page"
    caption = caption.replace("\\", "")  # as shown: Markdown escapes removed
    if expected is not None and not caption.startswith(f"{expected:,} of "):
        return f"caption {caption[:60]!r} is not the {expected:,} papers the search matches"
    return None


@contextlib.asynccontextmanager
async def visit(base: str, corpus: str, cookies: dict[str, str] | None = None):
    """A browser's visit: GET the page with its cookie jar, keep the cookies it sets
    (`explorer serve`'s haproxy pins a session to a worker with one), then open the
    websocket sending them, as a browser does. Yields (jar, websocket, client)."""
    from websockets.asyncio.client import connect

    jar = dict(cookies or {})

    def header() -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}

    request = urllib.request.Request(base + "/", headers=header())
    response = await asyncio.to_thread(urllib.request.urlopen, request, timeout=TIMEOUT_S)
    with response:
        for line in response.headers.get_all("Set-Cookie") or []:
            jar.update({k: m.value for k, m in SimpleCookie(line).items()})
    stream = base.replace("http://", "ws://") + "/_stcore/stream"
    async with connect(
        stream, subprotocols=["streamlit"], additional_headers=header(), max_size=None
    ) as ws:
        yield jar, ws, StreamlitClient(ws, {"corpus": corpus})


async def ws_session(
    base: str, corpus: str, window: Window, index: int, plan: Plan, out: Outcome
) -> None:
    try:
        async with visit(base, corpus) as (_, _, client):
            first = await asyncio.wait_for(client.rerun({}), 120)
            box = SEARCH_LABEL in first.labels
            problem = _check(first, None) or (None if box else f"no {SEARCH_LABEL!r} box")
            if problem:
                raise RuntimeError(f"first load: {problem}")
            async for query, expected in window.queries(index, plan.values, plan.think):
                run = await asyncio.wait_for(client.rerun({SEARCH_LABEL: query}), TIMEOUT_S)
                problem = _check(run, expected)
                if problem:
                    out.errors.append(f"session {index}, q={query!r}: {problem}")
                else:
                    out.chart_s.append(run.chart_s)
                    out.rerun_s.append(run.finished_s)
                    out.by_session.setdefault(index, []).append(run.chart_s)
                    out.sent_bytes.append(run.sent_bytes)
    except Exception as exc:  # a timeout or a crash in one session is a finding, not a stop
        out.errors.append(f"session {index}: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        window.arrive(index)


# --- browser clients -----------------------------------------------------------------


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


# --- the run -------------------------------------------------------------------------


def _quantiles(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    p95 = statistics.quantiles(values, n=20)[18] if len(values) >= 20 else None
    return round(statistics.median(values), 3), round(p95, 3) if p95 is not None else None


def _think(text: str) -> tuple[float, float]:
    """`--think 3-7` (a random pause in that range) or `--think 2` (always 2 s)."""
    low, _, high = text.partition("-")
    return float(low), float(high or low)


async def run(args: argparse.Namespace, base: str, server: Server) -> dict:
    samples: list[tuple[float, float]] = []
    out = Outcome()
    window = Window(args.sessions)
    plan = Plan(Queries(ROOT / "cache", args.corpus, args.values), _think(args.think))
    if args.client == "ws":
        sessions = [
            ws_session(base, args.corpus, window, i, plan, out) for i in range(args.sessions)
        ]
        await asyncio.gather(window.run(args.seconds, server, samples), *sessions)
    else:
        from playwright.async_api import async_playwright

        url = f"{base}/{PAGE}?corpus={args.corpus}"
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            sessions = [
                browser_session(browser, url, window, i, plan, out) for i in range(args.sessions)
            ]
            await asyncio.gather(window.run(args.seconds, server, samples), *sessions)
            await browser.close()
    return _summary(args, window, out, samples)


def _summary(args, window: Window, out: Outcome, samples: list[tuple[float, float]]) -> dict:
    first = [r for t, r in samples if t <= 15]
    last = [r for t, r in samples if t >= args.seconds - 15]
    growth = (statistics.mean(last) / statistics.mean(first) - 1) if first and last else None
    chart_p50, chart_p95 = _quantiles(out.chart_s)
    rerun_p50, rerun_p95 = _quantiles(out.rerun_s)
    per_session = [_quantiles(v)[1] or max(v) for v in out.by_session.values() if v]
    changes = len(out.rerun_s)
    server_cpu = window.cpu.get("server", 0.0)
    return {
        "client": args.client,
        "server": f"explorer serve --workers {args.workers}" if args.workers else "streamlit run",
        "app": "this checkout" if args.app_dir.resolve() == ROOT else str(args.app_dir),
        "corpus": args.corpus,
        "sessions": args.sessions,
        "seconds": args.seconds,
        "think_s": args.think,
        "values": args.values,  # fresh: no value typed twice in the run (no cache can help)
        "filter_changes": changes,
        "changes_per_s": round(changes / args.seconds, 2),
        "errors": out.errors,
        "latency_p50_s": chart_p50,  # filter change -> updated chart received
        "latency_p95_s": chart_p95,
        "rerun_p50_s": rerun_p50,  # filter change -> the whole rerun finished
        "rerun_p95_s": rerun_p95,
        "slowest_session_p95_s": round(max(per_session), 3) if per_session else None,
        "sessions_served": len(per_session),
        "server_cpu_s": round(server_cpu, 1),  # of seconds x cpus available
        "server_cpu_ms_per_change": round(1000 * server_cpu / changes, 1) if changes else None,
        "clients_cpu_s": round(window.cpu.get("clients", 0.0), 1),  # with Chromium
        "sent_kb_per_change_p50": (
            round(statistics.median(out.sent_bytes) / 1024, 1) if out.sent_bytes else None
        ),
        "rss_first15_mb": round(statistics.mean(first), 1) if first else None,
        "rss_last15_mb": round(statistics.mean(last), 1) if last else None,
        "rss_growth": round(growth, 4) if growth is not None else None,
        "rss_every_s": RSS_EVERY_S,
        "rss_mb": [round(r, 1) for _, r in samples],  # the server's RSS, every rss_every_s
    }


def _verdict(result: dict, args: argparse.Namespace) -> list[str]:
    """The targets this run missed (none: it passed)."""
    missed = [f"{len(result['errors'])} errors"] if result["errors"] else []
    if result["rss_growth"] is None or result["rss_growth"] >= 0.10:
        missed.append(f"server memory grew {result['rss_growth']} (target < 0.10)")
    p95, slowest = result["latency_p95_s"], result["slowest_session_p95_s"]
    if args.p95 and (p95 is None or p95 > args.p95):
        missed.append(f"p95 {p95} s (target <= {args.p95} s)")
    if args.slowest_p95 and (slowest is None or slowest > args.slowest_p95):
        missed.append(f"slowest session's p95 {slowest} s (target <= {args.slowest_p95} s)")
    per_change = result["server_cpu_ms_per_change"]
    if args.cpu_per_change and (per_change is None or per_change > args.cpu_per_change):
        missed.append(f"{per_change} ms server CPU per change (target <= {args.cpu_per_change})")
    if result["sessions_served"] < args.sessions:
        missed.append(f"only {result['sessions_served']} of {args.sessions} sessions served")
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("ws", "browser"), default="ws")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", default="0", help="pause after each change: 2 or 3-7 (s)")
    parser.add_argument("--values", choices=("fresh", "repeat"), default="fresh")
    parser.add_argument("--workers", type=int, default=0, help="0: one plain streamlit run")
    parser.add_argument("--p95", type=float, help="target: latency p95 at most this (s)")
    parser.add_argument("--slowest-p95", type=float, help="target for the slowest session")
    parser.add_argument("--cpu-per-change", type=float, help="target: server CPU ms per change")
    parser.add_argument("--name", help="results file name (default: load or load-browser)")
    parser.add_argument(
        "--app-dir", type=Path, default=ROOT, help="serve this checkout's app (to compare commits)"
    )
    parser.add_argument("--corpus", default="icml-2013-2019")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if args.client == "browser" and not Path(CHROMIUM).exists():
        print(f"skip: {CHROMIUM} is not installed (make test installs it)")
        sys.exit(0)
    ensure_corpus(args.corpus)
    server = Server.start(args.port, args.workers, args.app_dir.resolve())
    try:
        base = f"http://127.0.0.1:{args.port}"
        result = asyncio.run(run(args, base, server))
    finally:
        server.stop()
    name = args.name or ("load" if args.client == "ws" else "load-browser")
    result["missed"] = _verdict(result, args)
    path = write_results(name, result)
    print(path.read_text())
    sys.exit(1 if result["missed"] else 0)


if __name__ == "__main__":
    main()
