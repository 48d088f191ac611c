"""What one source's flood of semantic questions costs another visitor (bench/README.md row
14g, issue 52).

Against `explorer serve --workers 2`, loopback only (127.0.0.2 is the attacker's address,
127.0.0.3 the visitor's: both are this machine), every wait bounded: the visitor loads the
topic map VISITS times alone, then again while SESSIONS sessions from the attacker's address
each ask a new 500-character question on the map in a loop for FLOOD_S seconds. The figure is
the visitor's median page time under the flood over its median alone (target < 2). With
`--against DIR` the same is measured first on a server running DIR's code (a worktree of an
older commit), side by side in one run.

    python -m bench.query_flood [--corpus NAME] [--cache DIR] [--against DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np

from bench.common import ROOT, write_results
from bench.load_server import Server, ensure_corpus
from bench.withstand import ATTACKER, PAGE, TIMEOUT_S, _get_page, visit
from explorer.view.ui.asgi import run_page
from explorer.view.ui.state import ASK, MAX_TEXT_CHARS

SESSIONS = 30
FLOOD_S = 20.0
VISITS = 20
TARGET_RATIO = 2.0
WORDS = (
    "uncertainty", "robot", "learning", "graph", "neural", "networks", "privacy", "bandit",
    "regret", "kernel", "diffusion", "language", "models", "causal", "inference", "sparse",
    "matrix", "federated", "optimization", "adversarial", "robustness", "reinforcement",
    "policy", "variational", "bayesian", "clustering",
)  # fmt: skip


def question(rng: random.Random) -> str:
    """A new question of MAX_TEXT_CHARS characters (the most the box takes)."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < MAX_TEXT_CHARS:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:MAX_TEXT_CHARS]


async def asker(port: int, corpus: str, until: float, seed: int) -> int:
    """One attacker session asking new questions until `until`, each in a new page visit
    (as a shared link with a question opens): how many pages it ran."""
    from websockets.asyncio.client import connect

    rng, asked = random.Random(seed), 0
    while time.monotonic() < until:
        head = await asyncio.to_thread(_get_page, port, None, ATTACKER)
        jar = head["cookies"]
        cookie = {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}
        async with connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                           additional_headers=cookie, max_size=None,
                           local_addr=(ATTACKER, 0)) as ws:  # fmt: skip
            query = f"corpus={corpus}&{ASK}={quote(question(rng))}"
            await asyncio.wait_for(run_page(ws, PAGE, query), TIMEOUT_S)
        asked += 1
    return asked


async def visits(port: int, corpus: str, count: int | None, until: float | None) -> list[float]:
    """The visitor's page times: `count` visits, or as many as fit before `until`."""
    times: list[float] = []
    while (count is not None and len(times) < count) or (until and time.monotonic() < until):
        times.append((await visit(port, corpus))[0])
    return times


def _summary(times: list[float]) -> dict:
    return {"visits": len(times), "p50_s": round(statistics.median(times), 3),
            "p95_s": round(float(np.percentile(times, 95)), 3)}  # fmt: skip


async def measure(port: int, corpus: str) -> dict:
    await visits(port, corpus, 3, None)  # settle the client and both workers
    calm = await visits(port, corpus, VISITS, None)
    until = time.monotonic() + FLOOD_S
    attack = [asyncio.create_task(asker(port, corpus, until, i)) for i in range(SESSIONS)]
    await asyncio.sleep(2.0)  # the flood is on before the visitor measures
    flooded = await visits(port, corpus, None, until)
    asked = await asyncio.gather(*attack, return_exceptions=True)
    done = [a for a in asked if isinstance(a, int)]
    result = {"calm": _summary(calm), "flood": _summary(flooded),
              "attacker_pages": sum(done), "attacker_sessions_failed": len(asked) - len(done)}  # fmt: skip
    result["ratio_p50"] = round(result["flood"]["p50_s"] / result["calm"]["p50_s"], 2)
    return result


def serve_and_measure(port: int, corpus: str, cache: Path, app_dir: Path) -> dict:
    server = Server.start(port, 2, app_dir=app_dir, cache=cache)
    try:
        return asyncio.run(measure(port, corpus))
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="icml-2013-2019")
    parser.add_argument("--cache", type=Path, default=ROOT / "cache")
    parser.add_argument("--against", type=Path, help="also measure this checkout's code first")
    parser.add_argument("--port", type=int, default=8767)
    args = parser.parse_args()
    if args.cache == ROOT / "cache":
        ensure_corpus(args.corpus)
    result: dict = {"corpus": args.corpus, "workers": 2, "sessions": SESSIONS,
                    "flood_s": FLOOD_S, "target_ratio": TARGET_RATIO}  # fmt: skip
    if args.against:
        print(f"Before: {args.against}…", flush=True)
        result["before"] = serve_and_measure(args.port, args.corpus, args.cache, args.against)
        print(result["before"], flush=True)
    print("This checkout…", flush=True)
    result["ours"] = serve_and_measure(args.port, args.corpus, args.cache, ROOT)
    result["met"] = result["ours"]["ratio_p50"] < TARGET_RATIO
    path = write_results("query_flood", result)
    print(Path(path).read_text())
    sys.exit(0 if result["met"] else 1)


if __name__ == "__main__":
    main()
