"""Run the benchmarks and regenerate bench/README.md's table from bench/results/*.json.

python -m bench.run quick   # targets 2, 3, 6, 8, 13 (embedding, each encoder, warm re-fit,
                            # viewer, query encoder, curation at 10,000 changes): ~22 min
python -m bench.run full    # + cold builds vs stock (ICML, ~14.5k, ~23k papers), incremental,
                            # both build engines on ~23k abstracts (bench/engines.py),
                            # and topic quality per level (bench/quality.py)
python -m bench.run cold --corpora icml,scale,real --repeats 3
                            # only the cold builds vs stock (rows 1-1c, 5-5c), alternating
python -m bench.run load    # the dashboard under load (bench/load.py): per-change CPU,
                            # cache hits, and crowds through `explorer serve` and plain
python -m bench.run report  # only rewrite the table from the stored results

The benchmarks run here in a fresh process each (bench/common.py's run_child); the table is
bench/table.py's, its rows those of bench/table_*.py; the load runs are bench/load.py's
LOAD_RUNS.
"""

from __future__ import annotations

import argparse
import json
import sys

from bench import builds
from bench.common import ICML, PAPERLISTS, median, require_shared, run_child, write_results
from bench.load import LOAD_RUNS
from bench.table import report
from bench.table_builds import RSS_REPEATS


def run_embedding() -> None:
    result = run_child([sys.executable, "-m", "bench.embedding"])
    if result.returncode != 0:
        sys.exit(f"embedding benchmark failed:\n{result.stderr[-2000:]}")
    raw = json.loads(result.stdout.strip().splitlines()[-1])
    texts = raw["texts"]
    raw_rate = texts / median(raw["raw_s"])
    ours_rate = texts / median(raw["ours_s"])
    float32_rate = texts / median(raw["ours_float32_s"])
    write_results(
        "embedding",
        {
            **raw,
            "raw_per_s": round(raw_rate, 2),
            "ours_per_s": round(ours_rate, 2),
            "ratio": round(ours_rate / raw_rate, 3),
            "ours_float32_per_s": round(float32_rate, 2),
            "float32_ratio": round(float32_rate / raw_rate, 3),
            # Bucketed padding's throughput over batch padding's, per precision (row 2b).
            "padding_ratio": {
                precision: round(median(runs["batch_padded_s"]) / median(runs["bucketed_s"]), 3)
                for precision, runs in raw["padding"].items()
            },
        },
    )


def run_module(module: str, what: str) -> None:
    """`python -m <module>` in a fresh process (it writes its own results)."""
    result = run_child([sys.executable, "-m", module])
    if result.returncode != 0:
        sys.exit(f"{what} failed:\n{result.stderr[-3000:]}")


def run_viewer() -> None:
    result = run_child([sys.executable, "-m", "bench.viewer", "--corpus", builds.WARM_CORPUS])
    if result.returncode != 0:
        sys.exit(f"viewer benchmark failed:\n{result.stderr[-3000:]}")


def quick() -> None:
    require_shared(ICML)
    print("Embedding throughput (ours vs raw encode)…", flush=True)
    run_embedding()
    print("Each encoder side by side (torch float32, bfloat16, onnxruntime)…", flush=True)
    run_module("bench.encoders", "encoder benchmark")
    print("Warm re-fits of ICML 2013-2019…", flush=True)
    write_results("warm", builds.warm(repeats=3))
    print("Viewer…", flush=True)
    run_viewer()
    print("Semantic search without torch (ONNX export vs sentence-transformers)…", flush=True)
    run_onnx_encoder()
    print("Curation with 10,000 changes recorded…", flush=True)
    run_curation()


def run_curation() -> None:
    """bench/curation.py alone: `python -m bench.curation`, then `python -m bench.run report`."""
    result = run_child([sys.executable, "-m", "bench.curation"])
    if result.returncode != 0:
        sys.exit(f"curation benchmark failed:\n{result.stderr[-3000:]}")


def run_onnx_encoder() -> None:
    result = run_child([sys.executable, "-m", "bench.onnx_encoder"])
    if result.returncode != 0:
        sys.exit(f"query encoder benchmark failed:\n{result.stderr[-3000:]}")


def load() -> bool:
    """Every load run in turn (one at a time: they share 2 cores); True when all met theirs."""
    ok = True
    for name, label, _, args in LOAD_RUNS:
        print(f"Load: {label}…", flush=True)
        done = run_child([sys.executable, "-m", "bench.load", "--name", name, *args])
        ok &= done.returncode == 0
    print("Load: one badly behaved client (bench/withstand.py)…", flush=True)
    ok &= run_child([sys.executable, "-m", "bench.withstand"]).returncode == 0
    print("Load: one source's flood of questions (bench/query_flood.py)…", flush=True)
    ok &= run_child([sys.executable, "-m", "bench.query_flood"]).returncode == 0
    return ok


def full(repeats: int, scale: bool, skip_quick: bool = False) -> None:
    if not skip_quick:
        quick()
    cold(("icml",), repeats)
    print("Incremental: ICML 2013-2018, then add 2019…", flush=True)
    write_results("incremental", builds.incremental())
    if scale:
        cold(("scale", "real"), repeats)
    for module, what in FULL_MODULES:
        print(f"{what}…", flush=True)
        result = run_child([sys.executable, "-m", *module.split()], timeout=5 * 3600)
        if result.returncode != 0:
            sys.exit(f"{module} failed:\n{result.stderr[-3000:]}")


# The cold comparisons (ours vs stock, alternating): results name, what, inputs.
COLD = {
    "icml": ("cold-icml", "ICML 2013-2019", lambda: [str(ICML)]),
    "scale": ("cold-scale", "NeurIPS + ICML + AISTATS", builds.scale_inputs),
    "real": ("cold-real", "every real abstract (~23k)", builds.real_inputs),
}


def cold(corpora: tuple[str, ...], repeats: int) -> None:
    for corpus in corpora:
        name, what, inputs = COLD[corpus]
        if corpus != "icml":
            require_shared(PAPERLISTS / "nips", PAPERLISTS / "aistats")
        print(f"Cold builds, {what}: ours vs stock, alternating…", flush=True)
        write_results(name, builds.cold(inputs(), corpus, repeats))


# The parts of `full` that run as a module of their own, in order: the sample fit reuses
# the vectors the engines part cached, and the 100k build those of the sample fit.
FULL_MODULES = (
    ("bench.engines", "Embedding every real abstract with each engine (local, Ray)"),
    ("bench.sample_fit", "Fitting on a sample vs fitting every paper (~23k abstracts)"),
    ("bench.sample_quality", "The sample fit's topics judged as users see them (~23k)"),
    ("bench.scale --papers 100000", "100,000 papers (synthetic corpus), built and served"),
    ("bench.scale --papers 100000 --full-fit", "100,000 papers, every paper fitted (no sample)"),
    ("bench.neighbours", "Exact vs approximate neighbours (23k real, 100k and 1M synthetic)"),
    ("bench.quality", "Topic quality at every level vs stock (three mixes and WWW 2025)"),
    ("bench.label_limits", "Why issue 29's diversity and keyword-hit targets are unmet"),
    ("bench.reproducibility --before d06f0fe --cold", "Topics that hold still: seeds, precisions"),
    ("bench.short_lists", "Short lists grouped as a reader would (CVPR + ICML + ACL samples)"),
    ("bench.subtopic_npmi", "ICML's subtopic NPMI: each side's topics split either way"),
    ("bench.subtopic_rules", "ICML's leaf agreement with each topic split other ways"),
    ("bench.area_rules", "Area rules on row 12's stored topics: count, agreement, NPMI"),
    # Last: ~50 min on a 2-core machine (row 11b, docs/scale.md).
    ("bench.scale --papers 1000000", "1,000,000 papers (synthetic corpus), built and served"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("quick", "full", "cold", "load", "report"))
    parser.add_argument(
        "--repeats", type=int, default=RSS_REPEATS, help="cold builds per side, every corpus"
    )
    parser.add_argument(
        "--corpora", default="icml", help=f"cold: which, comma-separated ({', '.join(COLD)})"
    )
    parser.add_argument(
        "--no-scale", action="store_true", help="full: skip the ~14.5k and ~23k corpora"
    )
    parser.add_argument(
        "--skip-quick", action="store_true", help="full: everything but the quick part"
    )
    args = parser.parse_args()
    if args.mode == "quick":
        quick()
    elif args.mode == "full":
        full(args.repeats, not args.no_scale, args.skip_quick)
    elif args.mode == "cold":
        cold(tuple(args.corpora.split(",")), args.repeats)
    elif args.mode == "load":
        ok = load()
        report()
        sys.exit(0 if ok else 1)
    report()


if __name__ == "__main__":
    main()
