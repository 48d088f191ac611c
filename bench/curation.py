"""Curation at scale: ICML 2013-2019 with 10,000 changes already recorded (renames, hides and
unhides, moves, some merges, undos and a few reverts), against the same run uncurated.

- one more change (`curation.record`, as `explorer curate` and the Curate page call it):
  median of several, with the long history and with an empty one;
- the page load after a change in a warm process (AppTest, Streamlit's caches warm: the
  run's tables are loaded, the overlay is re-read and re-applied because its version
  moved), against the same after a change to a history that started empty; and a fresh
  worker process's first load (a new Python process's first AppTest run of the page),
  against the same with an empty history; alternating sides;
- the history's size on disk (the log and the stored member lists).

    python -m bench.curation [--changes 10000] [--runs 9] [--fresh 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

from bench.common import ICML, ROOT, WORK, explorer_cmd, require_shared, run_child, write_results

CORPUS = "bench-icml"  # bench.builds.WARM_CORPUS: the viewer benchmark's corpus
PAGES = ("overview", "topic_map")
CHANGE_MS_TARGET = 50
LOAD_RATIO_TARGET = 1.2


def _corpus_caches() -> dict[str, Path]:
    """Two private copies of the corpus's latest run (the project's own curation is never
    touched): `empty` stays uncurated, `full` gets the long history."""
    source = ROOT / "cache"
    if not (source / CORPUS / "latest").is_file():
        print(f"Building {CORPUS} (ICML 2013-2019) once…", flush=True)
        built = run_child(explorer_cmd("build", str(ICML), "--name", CORPUS, "--no-progress"))
        if built.returncode != 0:
            sys.exit(f"build failed:\n{built.stderr[-2000:]}")
    run_id = (source / CORPUS / "latest").read_text().strip()
    caches = {}
    for side in ("empty", "full"):
        cache = WORK / "curation" / side
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(source / CORPUS / run_id, cache / CORPUS / run_id)
        (cache / CORPUS / "latest").write_text(run_id)
        caches[side] = cache
    return caches


class History:
    """Records a realistic history through the public API, tracking what can be named."""

    def __init__(self, cache: Path, seed: int = 0) -> None:
        from explorer import artifacts

        self.cache, self.rng = cache, random.Random(seed)
        self.run = artifacts.open_run(cache, CORPUS)
        self.papers, self.nodes = self.run.table("papers"), self.run.table("nodes")
        self.gone: set[str] = set()  # merged away (approximately: undos are not tracked)
        self.topics = list(self.nodes.loc[self.nodes["level"] == "topic", "node_id"])
        self.size = dict(zip(self.nodes["node_id"], self.nodes["size"], strict=True))
        self.words = sorted({w for t in self.nodes["label"] for w in str(t).split() if w.isalpha()})

    def shown(self):
        return self.nodes[~self.nodes["node_id"].isin(self.gone)]

    def record(self, op: str, **args) -> None:
        from explorer import curation

        target = curation.EditTarget(self.cache, CORPUS, self.run.run_id, self.papers)
        curation.record(target, self.shown(), op, source="cli", **args)

    def one(self, kind: float) -> None:
        """One change of the mix, picked by `kind` in [0, 1)."""
        from explorer import curation
        from explorer.node_ids import level_of

        rng, shown = self.rng, list(self.shown()["node_id"])
        if kind < 0.42:
            words = rng.sample(self.words, 3)
            self.record("rename", node=rng.choice(shown), label=" ".join(words).title())
        elif kind < 0.62:
            self.record(rng.choice(("hide", "unhide")), node=rng.choice(shown))
        elif kind < 0.82:
            paper = self.papers["paper_id"].iloc[rng.randrange(len(self.papers))]
            target = rng.choice([n for n in shown if level_of(n) != "area"])
            self.record("move", paper=paper, node=target)
        elif kind < 0.825:
            alive = [t for t in self.topics if t not in self.gone]
            pair = rng.sample(alive, 2)
            self.record("merge", nodes=pair)
            if rng.random() < 0.4:  # kept: the smaller is merged away (the larger keeps)
                self.gone.add(min(pair, key=lambda n: self.size[n]))
            else:
                curation.take_back(self.cache, CORPUS, to=None, source="cli")
        elif kind < 0.997:
            curation.take_back(self.cache, CORPUS, to=None, source="cli")
        else:
            last = len(curation.read(self.cache, CORPUS))
            curation.take_back(self.cache, CORPUS, to=max(1, last - 20), source="cli")

    def fill(self, changes: int) -> None:
        from explorer import curation
        from explorer.errors import InputError

        while (done := len(curation.read(self.cache, CORPUS))) < changes:
            for _ in range(min(500, changes - done)):
                # Refused ones (nothing to undo, a node merged away) are not counted.
                with contextlib.suppress(InputError):
                    self.one(self.rng.random())
            print(f"  {len(curation.read(self.cache, CORPUS)):,} changes", flush=True)


def change_ms(cache: Path, runs: int) -> float:
    """Median milliseconds of one more change (renames and hides, alternating)."""
    history = History(cache, seed=1)
    node = history.topics[0]
    times = []
    for i in range(runs):
        op = {"op": "rename", "label": f"Bench label {i}"} if i % 2 == 0 else {"op": "hide"}
        start = time.perf_counter()
        history.record(op.pop("op"), node=node, **op)
        times.append((time.perf_counter() - start) * 1000)
    return round(sorted(times)[len(times) // 2], 1)


def _apptest(cache: Path, page: str):
    from streamlit.testing.v1 import AppTest

    os.environ["EXPLORER_CACHE_DIR"] = str(cache)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["corpus"] = CORPUS
    at.run()
    if page != "overview":
        at.switch_page(f"pages/{page}.py")
        at.run()
    return at


def _timed(at) -> float:
    start = time.perf_counter()
    at.run()
    if at.exception:
        sys.exit(f"page raised: {[e.value for e in at.exception]}")
    return time.perf_counter() - start


def warm_loads(caches: dict[str, Path], runs: int) -> dict[str, dict[str, float]]:
    """Per page: seconds of the rerun after one more change (the overlay's version moved, so
    the run's cached tables are re-curated and the page's caches keyed by the version are
    recomputed), with the long history (`full`) and with a history that starts empty (its
    first changes, `empty`), alternating sides. The only difference is the history's length."""
    out = {}
    histories = {side: History(cache, seed=2) for side, cache in caches.items()}
    for page in PAGES:
        apps = {side: _apptest(cache, page) for side, cache in caches.items()}
        times: dict[str, list[float]] = {"empty": [], "full": []}
        for i in range(runs):
            for side in ("empty", "full") if i % 2 == 0 else ("full", "empty"):
                os.environ["EXPLORER_CACHE_DIR"] = str(caches[side])
                history = histories[side]
                history.record("rename", node=history.topics[1], label=f"Warm {page} {i}")
                times[side].append(_timed(apps[side]))
        out[page] = {side: round(_median(t), 3) for side, t in times.items()}
        out[page]["ratio"] = round(out[page]["full"] / out[page]["empty"], 3)
    return out


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def fresh_loads(caches: dict[str, Path], runs: int) -> dict[str, object]:
    """A fresh worker's first load of the overview after a change: a new process per
    sample, its first AppTest run timed inside it (imports of the page's modules, the
    run's tables read, the overlay read and applied), alternating sides."""
    times: dict[str, list[float]] = {"empty": [], "full": []}
    history = History(caches["full"], seed=3)
    for i in range(runs):
        for side in ("empty", "full") if i % 2 == 0 else ("full", "empty"):
            if side == "full":
                history.record("rename", node=history.topics[2], label=f"Fresh {i}")
            child = run_child(
                [sys.executable, "-m", "bench.curation", "--fresh-load", str(caches[side])]
            )
            if child.returncode != 0:
                sys.exit(f"fresh load failed:\n{child.stderr[-2000:]}")
            times[side].append(json.loads(child.stdout.strip().splitlines()[-1])["seconds"])
    empty, full = _median(times["empty"]), _median(times["full"])
    return {
        "empty_s": round(empty, 2),
        "full_s": round(full, 2),
        "ratio": round(full / empty, 3),
        "runs_s": {k: [round(v, 2) for v in t] for k, t in times.items()},
    }


def _fresh_load(cache: Path) -> None:
    """In the child: one fresh worker's first run of the overview page."""
    os.environ["EXPLORER_CACHE_DIR"] = str(cache)
    from streamlit.testing.v1 import AppTest

    start = time.perf_counter()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["corpus"] = CORPUS
    at.run()
    seconds = time.perf_counter() - start
    if at.exception:
        sys.exit(f"page raised: {[e.value for e in at.exception]}")
    print(json.dumps({"seconds": seconds}))


def disk(cache: Path) -> dict[str, float]:
    from explorer import curation

    log = curation.path(cache, CORPUS).stat().st_size
    stored = list((cache / CORPUS / curation.MEMBERS).iterdir())
    return {
        "log_mb": round(log / 1e6, 2),
        "members_mb": round(sum(p.stat().st_size for p in stored) / 1e6, 2),
        "member_files": len(stored),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--fresh", type=int, default=3)
    parser.add_argument("--fresh-load", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.chdir(ROOT)
    if args.fresh_load:
        _fresh_load(args.fresh_load)
        return
    require_shared(ICML)
    from explorer import curation

    caches = _corpus_caches()
    empty_change_ms = change_ms(caches["empty"], args.runs)
    shutil.rmtree(caches["empty"] / CORPUS / curation.MEMBERS)  # uncurated again
    for name in (curation.FILE, curation.LOCK):
        (caches["empty"] / CORPUS / name).unlink(missing_ok=True)
    print(f"Recording {args.changes:,} changes…", flush=True)
    start = time.perf_counter()
    History(caches["full"]).fill(args.changes)
    fill_s = time.perf_counter() - start
    history = curation.read(caches["full"], CORPUS)
    result: dict[str, object] = {
        "corpus": CORPUS,
        "changes": len(history),
        "in_effect": len(curation.active(history)),
        "ops": {
            op: sum(c["op"] == op for c in history) for op in (*curation.EDITS, "undo", "revert")
        },
        "fill_s": round(fill_s, 1),
        "disk": disk(caches["full"]),
        "change_ms": change_ms(caches["full"], args.runs),
        "empty_change_ms": empty_change_ms,
    }
    print(f"One change: {result['change_ms']} ms; fresh worker loads…", flush=True)
    result["fresh"] = fresh_loads(caches, args.fresh)  # first: the empty side is still empty
    print("Warm page loads…", flush=True)
    result["warm"] = warm_loads(caches, args.runs)
    worst = max(v["ratio"] for v in result["warm"].values())
    result["warm_ratio_max"] = worst
    result["ok"] = (
        result["change_ms"] <= CHANGE_MS_TARGET
        and worst <= LOAD_RATIO_TARGET
        and result["fresh"]["ratio"] <= LOAD_RATIO_TARGET
    )
    path = write_results("curation", result)
    print(path.read_text())


if __name__ == "__main__":
    main()
