"""Semantic search without torch: the query encoder's ONNX export against sentence-transformers.

    python -m bench.onnx_encoder [--repeats 3]

On ICML 2013-2019 (3,013 papers; the seed corpus data/icml2025 where ../shared is absent),
built into bench/work/onnx-encoder/cache with the project cache's embeddings, reductions and
numba kernels (so it takes seconds after `make bench`'s warm re-fits):
- first query, side by side: a fresh process loads the encoder (ONNX, then sentence-
  transformers, alternating) and embeds one query; seconds from the first viewer import to
  the vector, the process's peak RSS, and whether torch was imported;
- later queries: median milliseconds per query, ONNX with 1 and 2 threads and the model;
- the published folder: `explorer publish` into bench/work/onnx-encoder/site, its size and
  the ONNX export's, served by `streamlit run` from a venv holding only its requirements.txt;
  the server's RSS after Chromium has opened every page (as bench/viewer.py's 6d) and after it
  then asks one semantic query, which must be answered semantically (target: ≤ 400 MB).
Writes bench/results/onnx_encoder.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request
import venv
from pathlib import Path

from bench.common import ICML, ROOT, WORK, explorer_cmd, median, run_child, write_results

CORPUS = "icml" if ICML.is_dir() else "seed"
INPUTS = str(ICML) if ICML.is_dir() else "data/icml2025"
HOME = WORK / "onnx-encoder"
PAGES = ("", "topic_map", "topics", "trends", "papers")
QUERY = "papers about uncertainty in robot learning"
LATER = [
    "spiking neural networks",
    "risk-averse training of neural processes",
    "cheaper image generation with smaller models at some decoding steps",
    "graph neural networks for molecules",
    "théorie des jeux et apprentissage multi-agent",
    "large language model alignment with human feedback",
    "diffusion models for protein structure",
    "bandit regret bounds",
] * 3
CHROMIUM = "/usr/bin/chromium"
SEMANTIC = "(score: cosine similarity)"


def child(kind: str, cache: Path, threads: int) -> dict:
    """One fresh viewer process: load the encoder, embed the first query, then the others."""
    start = time.perf_counter()
    from explorer import artifacts, onnx_encoder
    from explorer.view import query_encoder

    onnx_encoder.THREADS = threads
    manifest = artifacts.open_run(cache, CORPUS, verify=False).manifest
    ref = artifacts.encoder_ref(cache, manifest) if kind == "onnx" else None
    model = query_encoder.load_encoder(manifest.config.embedding_model, ref)
    query_encoder.encode_query(model, QUERY)
    first = time.perf_counter() - start
    later = []
    for query in LATER:
        tick = time.perf_counter()
        query_encoder.encode_query(model, query)
        later.append((time.perf_counter() - tick) * 1000)
    return {
        "kind": model.kind,
        "threads": threads if kind == "onnx" else None,
        "first_query_s": round(first, 3),
        "later_query_ms": round(median(later), 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "torch_imported": "torch" in sys.modules,
    }


def _run(kind: str, cache: Path, threads: int = 1) -> dict:
    args = [sys.executable, "-m", "bench.onnx_encoder", "--child", kind, str(cache), str(threads)]
    result = run_child(args)
    if result.returncode != 0:
        sys.exit(f"{kind} encoder failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def side_by_side(cache: Path, repeats: int) -> dict:
    """Fresh processes, alternating, so both see the same machine load."""
    runs: dict[str, list[dict]] = {"onnx": [], "onnx-2-threads": [], "sentence-transformers": []}
    for _ in range(repeats):
        runs["onnx"].append(_run("onnx", cache))
        runs["sentence-transformers"].append(_run("sentence-transformers", cache))
        runs["onnx-2-threads"].append(_run("onnx", cache, threads=2))
    return {
        name: {
            "first_query_s": median([r["first_query_s"] for r in rs]),
            "later_query_ms": median([r["later_query_ms"] for r in rs]),
            "peak_rss_mb": median([r["peak_rss_mb"] for r in rs]),
            "torch_imported": any(r["torch_imported"] for r in rs),
            "runs": rs,
        }
        for name, rs in runs.items()
    }


def build(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for shared in ("embeddings", "reductions", "numba"):  # content-addressed: safe to share
        if not (cache / shared).exists():
            (ROOT / "cache" / shared).mkdir(parents=True, exist_ok=True)
            target = (ROOT / "cache" / shared).resolve()
            (cache / shared).symlink_to(target, target_is_directory=True)
    args = ["--cache-dir", str(cache), "build", INPUTS, "--name", CORPUS, "--no-progress"]
    result = run_child(explorer_cmd(*args))
    if result.returncode != 0:
        sys.exit(f"build failed:\n{result.stderr[-2000:]}")


def publish(cache: Path) -> Path:
    site = HOME / "site"
    args = ["--cache-dir", str(cache), "publish", CORPUS, str(site), "--force"]
    result = run_child(explorer_cmd(*args))
    if result.returncode != 0:
        sys.exit(f"publish failed:\n{result.stderr[-2000:]}")
    return site


def viewer_python(site: Path) -> str:
    """A venv with only the folder's requirements (kept between runs while they match)."""
    env_dir = HOME / "viewer-venv"
    python = env_dir / "bin" / "python"
    wanted = (site / "requirements.txt").read_text()
    stamp = env_dir / "requirements.txt"
    if not (python.exists() and stamp.is_file() and stamp.read_text() == wanted):
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
        install = [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "-r",
            str(site / "requirements.txt"),
        ]
        subprocess.run(install, check=True, timeout=1800)
        stamp.write_text(wanted)
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        sys.exit("torch is importable in the viewer-only venv")
    return str(python)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def served(site: Path, python: str) -> dict:
    """The published folder served viewer-only: RSS after every page, then after a query."""
    from playwright.sync_api import sync_playwright

    port = 8765
    env = {**os.environ, "EXPLORER_CACHE_DIR": str((site / "cache").resolve())}
    command = [python, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.headless", "true", "--server.address", "127.0.0.1"]  # fmt: skip
    server = subprocess.Popen(command, cwd=site, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for name in PAGES:
                page.goto(f"{url}/{name}?corpus={CORPUS}")
                _settle(page)
            before = _rss_mb(server.pid)
            tick = time.perf_counter()
            page.goto(f"{url}/papers?corpus={CORPUS}&ask={QUERY.replace(' ', '+')}")
            _settle(page)
            answered = time.perf_counter() - tick
            semantic = page.get_by_text(SEMANTIC).count() == 1
            browser.close()
        return {
            "corpus": CORPUS,
            "rss_after_every_page_mb": before,
            "rss_after_query_mb": _rss_mb(server.pid),
            "query_page_s": round(answered, 2),
            "semantic": semantic,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    sys.exit("the published folder's server did not become healthy")


def _settle(page) -> None:
    page.wait_for_selector("h1", timeout=120_000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000
    )
    page.wait_for_timeout(1000)


def sizes(site: Path) -> dict:
    du = subprocess.run(["du", "-sh", str(site)], capture_output=True, text=True).stdout
    (graph,) = (site / "cache" / "models" / "onnx").glob("*/model.onnx")
    weights = graph.with_name(graph.name + ".data")
    return {
        "published_du": du.split()[0],
        "published_bytes": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()),
        "onnx_bytes": graph.stat().st_size + weights.stat().st_size,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("KIND", "CACHE", "THREADS"))
    args = parser.parse_args()
    if args.child:
        kind, cache, threads = args.child
        print(json.dumps(child(kind, Path(cache), int(threads))))
        return
    cache = HOME / "cache"
    build(cache)
    encoders = side_by_side(cache, args.repeats)
    site = publish(cache)
    published = {**sizes(site), **served(site, viewer_python(site))}
    path = write_results("onnx_encoder", {"encoders": encoders, "published": published})
    print(f"wrote {path}")
    if not published["semantic"] or published["rss_after_query_mb"] > 400:
        sys.exit("the published viewer did not rank semantically, or exceeded 400 MB")


if __name__ == "__main__":
    main()
