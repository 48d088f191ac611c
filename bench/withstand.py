"""What one badly behaved client costs the others (issue 28's targets, bench/README.md row 14).

Against `explorer serve --workers 2` on ICML 2013-2019, loopback only (127.0.0.2 is the
attacker's address, 127.0.0.3 the visitor's: both are this machine), every wait bounded:

a. one source holds CLIENT_CONNS websockets (the most it may) while a visitor loads the
   topic map 20 times: the visitor's p95 (target <= 2 s);
b. a SIGSTOPped worker's visitor: from the signal until the visitor's page (reconnecting as
   the browser does when its websocket closes) has run again on the other worker (<= 15 s);
c. a `clear_cache` message, then a visit to the same worker: over a warm visit (<= 1.5x);
d. 40 search values of 20 MB each (and 40 of 1 MB, which Streamlit accepts): the worker's
   RSS growth (<= 50 MB);
e. a 50,000-vertex lasso over 1,000,000 points: the selection function's CPU, in this
   process (<= 1 s; the rerun around it is the map page's, row 6e);
f. the first visit to a worker restarted after SIGKILL, over a warm visit (<= 1.5x).

A visit is what a browser does: GET / (keeping the worker's cookie), open the websocket,
run the topic map page to its end. `python -m bench.withstand [--corpus NAME]`
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path

import numpy as np

from bench.common import ROOT, write_results
from bench.load_server import Server, ensure_corpus, rss_mb
from bench.load_sessions import SEARCH_LABEL
from explorer.hosting import settings
from explorer.view.store.selection import in_region
from explorer.view.ui.asgi import run_page

ATTACKER, VISITOR = "127.0.0.2", "127.0.0.3"
PAGE = "topic_map"
TARGETS = {"conns_p95_s": 2.0, "failover_s": 15.0, "clear_cache_ratio": 1.5,
           "big_values_rss_mb": 50.0, "lasso_cpu_s": 1.0, "restart_ratio": 1.5}  # fmt: skip
VISITS = 20
WARM_VISITS = 7
TIMEOUT_S = 60.0


async def visit(port: int, corpus: str, worker: str | None = None,
                source: str = VISITOR) -> tuple[float, str]:  # fmt: skip
    """One browser visit from `source` (pinned to `worker` when given): seconds, and the
    worker that answered."""
    start = time.perf_counter()
    head = await asyncio.to_thread(_get_page, port, worker, source)
    jar = {"SERVERID": worker} if worker else head["cookies"]
    from websockets.asyncio.client import connect

    cookie = {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    async with connect(url, subprotocols=["streamlit"], additional_headers=cookie,
                       max_size=None, local_addr=(source, 0)) as ws:  # fmt: skip
        await asyncio.wait_for(run_page(ws, PAGE, f"corpus={corpus}"), TIMEOUT_S)
    return time.perf_counter() - start, head["worker"]


def _get_page(port: int, worker: str | None, source: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S,
                                      source_address=(source, 0))  # fmt: skip
    try:
        conn.request("GET", "/", headers={"Cookie": f"SERVERID={worker}"} if worker else {})
        response = conn.getresponse()
        response.read()
        cookies = {}
        for line in response.headers.get_all("Set-Cookie") or []:
            cookies.update({k: m.value for k, m in SimpleCookie(line).items()})
        return {"worker": response.getheader("X-Explorer-Worker", ""), "cookies": cookies}
    finally:
        conn.close()


async def warm_median(port: int, corpus: str, worker: str) -> float:
    times = [(await visit(port, corpus, worker))[0] for _ in range(WARM_VISITS)]
    return statistics.median(times[2:])  # the first two settle the client and the worker


# --- a. one source at its connection cap ------------------------------------------------


def _hold_websocket(port: int) -> socket.socket | None:
    """An idle websocket from the attacker's address, or None when the proxy refused it."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                        source_address=(ATTACKER, 0))  # fmt: skip
    except OSError:  # over the cap: the proxy resets the connection
        return None
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    sock.sendall(request.encode())
    with contextlib.suppress(OSError):
        if sock.recv(4096).startswith(b"HTTP/1.1 101"):
            return sock
    sock.close()
    return None


async def conns(port: int, corpus: str) -> dict:
    held = [s for s in (_hold_websocket(port) for _ in range(settings.CLIENT_CONNS + 10)) if s]
    try:
        times = [(await visit(port, corpus))[0] for _ in range(VISITS)]
    finally:
        for sock in held:
            sock.close()
    return {"held": len(held), "visits": len(times), "p50_s": round(statistics.median(times), 3),
            "p95_s": round(float(np.percentile(times, 95)), 3)}  # fmt: skip


# --- c. clear_cache ---------------------------------------------------------------------


async def clear_cache(port: int, corpus: str, worker: str, warm_s: float) -> dict:
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    async with connect(url, subprotocols=["streamlit"], max_size=None,
                       additional_headers={"Cookie": f"SERVERID={worker}"}) as ws:  # fmt: skip
        message = BackMsg()
        message.clear_cache = True
        await ws.send(message.SerializeToString())
    after, _ = await visit(port, corpus, worker)
    return {"warm_s": round(warm_s, 3), "after_s": round(after, 3),
            "ratio": round(after / warm_s, 2)}  # fmt: skip


# --- d. huge search values --------------------------------------------------------------


async def big_values(port: int, corpus: str, worker: str, pid: int) -> dict:
    from bench.load_ws import visit as load_visit

    before = rss_mb(pid)
    refused = {}
    for size_mb in (20, 1):
        value = "diffusion " * (size_mb * 1024 * 1024 // 10)
        refused[size_mb] = 0
        for _ in range(40):
            async with load_visit(f"http://127.0.0.1:{port}", corpus,
                                  {"SERVERID": worker}) as (_, _, client):  # fmt: skip
                await asyncio.wait_for(client.rerun({}), TIMEOUT_S)
                try:
                    await asyncio.wait_for(client.rerun({SEARCH_LABEL: value}), TIMEOUT_S)
                except Exception:  # noqa: BLE001 - Streamlit closes on an oversized message
                    refused[size_mb] += 1
    await asyncio.sleep(3)  # sessions closed, their memory returned
    return {"rss_before_mb": round(before), "rss_after_mb": round(rss_mb(pid)),
            "growth_mb": round(rss_mb(pid) - before, 1),
            "refused_of_40": {f"{k}_mb": v for k, v in refused.items()}}  # fmt: skip


# --- e. a lasso at a million points -----------------------------------------------------


def lasso() -> dict:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=1_000_000), rng.normal(size=1_000_000)
    t = np.linspace(0, 2 * np.pi, 50_000, endpoint=False)
    star = {"x": list(3 * np.cos(t) * (1 + 0.3 * np.sin(40 * t))), "y": list(3 * np.sin(t))}
    cpu = []
    for _ in range(3):
        start = time.process_time()
        picked = in_region(x, y, [], [star])
        cpu.append(time.process_time() - start)
    return {"points": len(x), "vertices": len(star["x"]), "selected": int(picked.sum()),
            "cpu_s": round(statistics.median(cpu), 3)}  # fmt: skip


# --- b and f. a stopped worker, then a killed one ---------------------------------------


def worker_pid(serve_pid: int, worker_port: str) -> int | None:
    found = subprocess.run(["pgrep", "-P", str(serve_pid), "-f", f"server.port {worker_port} "],
                           capture_output=True, text=True)  # fmt: skip
    return int(found.stdout.split()[0]) if found.stdout.split() else None


async def failover(port: int, corpus: str, worker: str, pid: int) -> dict:
    """A visitor on `worker`; SIGSTOP it; the visitor waits for its websocket to close, then
    reconnects (cookie still naming the stopped worker) until a page has run."""
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    async with connect(url, subprotocols=["streamlit"], max_size=None,
                       additional_headers={"Cookie": f"SERVERID={worker}"}) as ws:  # fmt: skip
        await run_page(ws, PAGE, f"corpus={corpus}")
        os.kill(pid, signal.SIGSTOP)
        stopped = time.perf_counter()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.wait_closed(), 30)
    closed = time.perf_counter() - stopped
    while time.perf_counter() - stopped < 60:
        with contextlib.suppress(Exception):
            _, answered = await asyncio.wait_for(visit(port, corpus, worker), 10)
            return {"closed_after_s": round(closed, 2), "answered_by": answered,
                    "served_again_s": round(time.perf_counter() - stopped, 2)}  # fmt: skip
        await asyncio.sleep(0.2)
    return {"closed_after_s": round(closed, 2), "served_again_s": None}


async def restarted(port: int, corpus: str, worker: str, serve_pid: int, worker_port: str,
                    warm_s: float) -> dict:  # fmt: skip
    """SIGKILL `worker`; once the supervisor has restarted it and the proxy sends its
    cookie there again, one visit: over a warm one."""
    pid = worker_pid(serve_pid, worker_port)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)
    killed = time.perf_counter()
    while time.perf_counter() - killed < 180:
        head = await asyncio.to_thread(_get_page, port, worker, VISITOR)
        if head["worker"] == worker:
            break
        await asyncio.sleep(0.2)
    else:
        return {"back_after_s": None}
    back = time.perf_counter() - killed
    first, answered = await visit(port, corpus, worker)
    return {"back_after_s": round(back, 1), "first_s": round(first, 3), "answered_by": answered,
            "warm_s": round(warm_s, 3), "ratio": round(first / warm_s, 2)}  # fmt: skip


async def run(port: int, corpus: str, server: Server) -> dict:
    cfg = (ROOT / "cache" / ".serve" / str(port) / "haproxy.cfg").read_text()
    ports = dict(re.findall(r"server (w\d) 127\.0\.0\.1:(\d+)", cfg))
    worker = "w1"
    pid = worker_pid(server.pid, ports[worker])
    warm_s = await warm_median(port, corpus, worker)
    result = {"warm_visit_s": round(warm_s, 3)}
    print("a. connection cap…", flush=True)
    result["conns"] = await conns(port, corpus)
    print("c. clear_cache…", flush=True)
    result["clear_cache"] = await clear_cache(port, corpus, worker, warm_s)
    print("d. huge search values…", flush=True)
    result["big_values"] = await big_values(port, corpus, worker, pid)
    print("b. SIGSTOP…", flush=True)
    result["failover"] = await failover(port, corpus, worker, pid)
    print("f. restart…", flush=True)
    result["restart"] = await restarted(port, corpus, "w2", server.pid, ports["w2"],
                                        await warm_median(port, corpus, "w2"))  # fmt: skip
    return result


def verdict(result: dict) -> list[str]:
    figures = {
        "conns_p95_s": result["conns"]["p95_s"],
        "failover_s": result["failover"]["served_again_s"],
        "clear_cache_ratio": result["clear_cache"]["ratio"],
        "big_values_rss_mb": result["big_values"]["growth_mb"],
        "lasso_cpu_s": result["lasso"]["cpu_s"],
        "restart_ratio": result["restart"].get("ratio"),
    }
    return [f"{k}: {v} > {TARGETS[k]}" for k, v in figures.items() if v is None or v > TARGETS[k]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="icml-2013-2019")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    ensure_corpus(args.corpus)
    result: dict = {"corpus": args.corpus, "workers": 2}
    print("e. lasso…", flush=True)
    result["lasso"] = lasso()
    server = Server.start(args.port, 2)
    try:
        result.update(asyncio.run(run(args.port, args.corpus, server)))
    finally:
        server.stop()
    result["targets"] = TARGETS
    result["missed"] = verdict(result)
    path = write_results("withstand", result)
    print(Path(path).read_text())
    sys.exit(1 if result["missed"] else 0)


if __name__ == "__main__":
    main()
