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

The parts: bench/load_server.py starts and measures the server, bench/load_sessions.py holds
what every session does (values, the shared clock, what it saw), bench/load_ws.py and
bench/load_browser.py the two clients. This module runs them and judges the result; LOAD_RUNS
are the runs `make bench` makes of it (bench/run.py).

    python -m bench.load [--client ws|browser] [--sessions 20] [--seconds 60] [--think 0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

from bench.common import ROOT, write_results
from bench.load_browser import ARGS, CHROMIUM, browser_session
from bench.load_server import Server, ensure_corpus
from bench.load_sessions import PAGE, RSS_EVERY_S, Outcome, Plan, Queries, Window
from bench.load_ws import ws_session

# The load runs of `make bench`: (results name, row label, has a target, bench.load
# arguments). bench.load checks the targets itself (its "missed" list).
WORKERS = "2"  # this machine's cores: `explorer serve`'s default, spelled out for the record
LOAD_RUNS = (
    ("load", "server CPU per filter change, 20 sessions back to back, fresh values, "
     "one `streamlit run` (≤ 40 ms; no errors; RSS growth < 10%)", True,
     ["--sessions", "20", "--seconds", "60", "--cpu-per-change", "40"]),
    ("load-repeat", "the same with repeated values: cache hits (reference)", False,
     ["--sessions", "20", "--seconds", "30", "--values", "repeat"]),
    ("load-serve-20", "crowd (a): 20 sessions back to back, 60 s, `explorer serve` "
     f"--workers {WORKERS} (p95 ≤ 1.0 s, no errors)", True,
     ["--workers", WORKERS, "--sessions", "20", "--seconds", "60", "--p95", "1.0"]),
    ("load-serve-100", "crowd (b): 100 sessions thinking 3-7 s, 120 s, `explorer serve` "
     f"--workers {WORKERS} (p95 ≤ 1.0 s, slowest session's p95 ≤ 2 s, RSS growth < 10%)",
     True, ["--workers", WORKERS, "--sessions", "100", "--seconds", "120", "--think", "3-7",
      "--p95", "1.0", "--slowest-p95", "2.0"]),
    ("load-plain-100", "crowd (b) against one plain `streamlit run` (comparison)", False,
     ["--sessions", "100", "--seconds", "120", "--think", "3-7"]),
)  # fmt: skip


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
