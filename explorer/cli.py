"""The `explorer` command line, the project's contract with its users (docs/architecture.md).
Each command is one row of COMMANDS (name, help, arguments, handler): the parser, the
dispatch in `main` and docs/cli.md (generated from `_parser`) all read that table.

Expected failures print one line on stderr and exit 2; heavy modules load only
inside `build`, so `info`, `list` and `export` answer instantly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from explorer import __version__, artifacts
from explorer.build.embed import DEFAULT_MODEL, PRECISIONS
from explorer.build.sample import SAMPLE_ABOVE, SAMPLE_SIZE
from explorer.build.sources.formats import SUFFIXES, describe_formats
from explorer.build.topics import DEFAULT_SEED
from explorer.errors import ArtifactError, ExplorerError, describe_os_error
from explorer.serve import DEFAULT_ADDRESS, DEFAULT_PORT, add_host_argument
from explorer.serve import add_arguments as add_serve_arguments

EXIT_ERROR = 2


# --- each command's arguments (the table of commands, COMMANDS, is at the end) ------------


def _fetch_arguments(f: argparse.ArgumentParser) -> None:
    f.add_argument("source", nargs="+", metavar="SOURCE", help="'paperlists VENUE YEAR' or a URL")
    f.add_argument(
        "--out-dir", type=Path, default=Path("data"), help="where to save (default data/)"
    )
    f.add_argument("--name", help="file name to save as (default: from the URL)")
    f.add_argument("--force", action="store_true", help="replace an existing file")
    f.add_argument("--timeout", type=float, default=30.0, help="seconds per connect/read (30)")
    f.add_argument("--retries", type=int, default=3, help="retries on 5xx/resets/timeouts (3)")
    f.add_argument(
        "--max-bytes", type=int, default=300 * 1024 * 1024, help="refuse larger bodies (300 MB)"
    )
    f.add_argument(
        "--base-url",
        default=None,
        help="paperlists repository raw URL (default: Paper Copilot's on GitHub)",
    )


def _publish_arguments(pub: argparse.ArgumentParser) -> None:
    pub.add_argument("name", help="corpus to publish (its latest run)")
    pub.add_argument("dest", type=Path, metavar="DIR", help="folder to write")
    pub.add_argument(
        "--force",
        action="store_true",
        help="also replace files an earlier publish wrote that were edited since "
        "(never touches files it did not write)",
    )
    pub.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name visitors will use (repeatable; localhost names are always "
        "allowed): written into the folder's Streamlit config, other names are refused",
    )


def _serve_arguments(srv: argparse.ArgumentParser) -> None:
    add_serve_arguments(srv)
    srv.add_argument(
        "--edit",
        action="store_true",
        help="let the host edit curation: with EXPLORER_EDIT_KEY or the edit_key in "
        ".streamlit/secrets.toml, else a fresh key printed in a one-click link",
    )


def _dashboard_arguments(dash: argparse.ArgumentParser) -> None:
    dash.add_argument("--port", type=int, default=DEFAULT_PORT, help="default %(default)s")
    dash.add_argument(
        "--address", default=DEFAULT_ADDRESS, help="address to listen on (default %(default)s)"
    )
    add_host_argument(dash)
    dash.add_argument(
        "--read-only", action="store_true", help="nobody edits curation from the dashboard"
    )


def _build_arguments(b: argparse.ArgumentParser) -> None:
    """`build`'s options, in four groups of the help: what, how big, where, with what."""
    _build_input_arguments(b)
    _build_engine_arguments(b)
    _build_model_arguments(b)
    _build_column_arguments(b)


def _build_input_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help=f"files or folders ({' '.join(SUFFIXES)})",
    )
    b.add_argument("--name", required=True, help="corpus name (letters, digits, . _ -)")
    b.add_argument(
        "--add",
        action="store_true",
        help="keep the inputs of the corpus's latest run and add these",
    )
    b.add_argument(
        "--keep-topics",
        action="store_true",
        help="keep the latest run's topics, levels and map: papers new to the corpus join "
        "their nearest topic, nothing is refitted, curations carry over (refit without it "
        "once many papers are new)",
    )
    b.add_argument(
        "--sample-above",
        type=int,
        default=SAMPLE_ABOVE,
        metavar="N",
        help=f"above N papers fit topics and map on a stratified sample and assign the rest "
        f"(default {SAMPLE_ABOVE:,}; 0: always fit every paper)",
    )
    b.add_argument(
        "--sample-size",
        type=int,
        default=SAMPLE_SIZE,
        metavar="N",
        help=f"papers in that sample (default {SAMPLE_SIZE:,})",
    )


def _build_engine_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="where reading and embedding run: this process (default) or a Ray cluster "
        "(needs the [ray] extra); the results are the same",
    )
    b.add_argument(
        "--ray-address",
        help="Ray cluster to join, e.g. 10.0.0.5:6379 (default: $RAY_ADDRESS, else a local "
        "Ray started for the build)",
    )
    b.add_argument(
        "--ray-batch-size",
        type=int,
        default=None,
        metavar="N",
        help="abstracts per actor call and cache shard (default: 256, the local engine's "
        "chunk, which keeps vectors bit-identical)",
    )
    b.add_argument(
        "--ray-actors-per-node",
        type=int,
        default=None,
        metavar="N",
        help="embedding actors per node, one model each, sharing the node's CPUs as torch "
        "threads (default: one per CPU)",
    )


def _build_model_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"random seed for UMAP (default {DEFAULT_SEED})",
    )
    b.add_argument(
        "--min-topic-size",
        type=int,
        default=None,
        help="smallest topic (default: scales with corpus size)",
    )
    b.add_argument(
        "--stability",
        type=int,
        default=0,
        metavar="K",
        help="retired: every build scores each topic's stability from its consensus fits",
    )
    b.add_argument(
        "--embedding-model",
        default=DEFAULT_MODEL,
        help=f"sentence-transformers model: the packaged {DEFAULT_MODEL} (default) or a "
        "local model folder",
    )
    b.add_argument(
        "--embedding-precision",
        choices=("auto", *PRECISIONS),
        default="auto",
        help="bfloat16 is ~2.5x faster on CPUs with native bfloat16 (AVX512-BF16, AMX) and "
        "within 1e-4 cosine of float32; auto picks it where the CPU has it (default: auto)",
    )


def _build_column_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument(
        "--text-column", help="CSV/JSONL/Parquet: column with the abstract (default: abstract)"
    )
    b.add_argument(
        "--title-column", help="CSV/JSONL/Parquet: column with the title (default: title)"
    )
    b.add_argument("--year-column", help="CSV/JSONL/Parquet: column with the year (default: year)")
    b.add_argument(
        "--class-column",
        help="CSV/JSONL/Parquet: column with oral/spotlight/poster (default: status)",
    )
    b.add_argument("--venue", help="venue for every paper (overrides what the files say)")
    b.add_argument("--year", type=int, help="year for every paper (overrides what the files say)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")


def _info_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("name")
    i.add_argument("--json", action="store_true", help="machine-readable output")


def _export_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("name")
    e.add_argument("--out", required=True, type=Path, help="CSV file to write")


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """`list` takes none."""


def _curate_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("name", metavar="NAME", help="corpus")
    ops = c.add_subparsers(dest="op", required=True)
    rename = ops.add_parser("rename", help="give a node (area, topic, subtopic) a label")
    rename.add_argument("node")
    rename.add_argument("label")
    merge = ops.add_parser("merge", help="merge topics, or subtopics of one topic")
    merge.add_argument("nodes", nargs="+", metavar="NODE")
    for op in ("hide", "unhide"):
        ops.add_parser(op, help=f"{op} a node (hidden nodes are greyed, not deleted)").add_argument(
            "node"
        )
    move = ops.add_parser("move", help="move a paper to another topic or subtopic")
    move.add_argument("paper")
    move.add_argument("node")
    ops.add_parser("undo", help="take back the last change in effect")
    revert = ops.add_parser("revert", help="return to the state right after change ID")
    revert.add_argument("id", type=int)
    ops.add_parser("history", help="every change, and which are in effect")
    ops.add_parser(
        "compact",
        help="rewrite the history as its state, dropping what was taken back "
        "(the old history is kept beside it)",
    )


def info_summary(run: artifacts.Run) -> dict:
    """The subset of the manifest that `info` reports."""
    m = run.manifest
    counts = m.counts
    return {
        "corpus": run.corpus,
        "run_id": run.run_id,
        "created_at": m.created_at,
        "documents": counts.papers,
        "topics": counts.topics,
        "levels": counts.levels.to_json(),
        "outliers": counts.outliers,
        "outlier_share": counts.outlier_share,
        "years": list(counts.years),
        "venues": list(counts.venues),
        "embedding_model": m.config.embedding_model_id,
        "embedding_precision": m.config.embedding_precision,
        "params": m.config.params,
        "timings": m.timings,
        "counts": counts.to_json(),
        "path": str(run.path),
    }


def _levels_line(levels: artifacts.LevelCounts) -> str:
    return (
        f"{levels.areas} areas, {levels.topics} topics, {levels.subtopics} subtopics; "
        f"largest leaf {levels.largest_leaf_share:.1%} of the papers"
    )


def _quality_line(levels: artifacts.LevelCounts) -> str:
    """Mean NPMI coherence, topic diversity and low-coherence nodes (NPMI < 0) per level."""
    parts = []
    for level, q in levels.quality.items():
        npmi = "-" if q.coherence is None else f"{q.coherence:.3f}"
        parts.append(
            f"{level}s NPMI {npmi}, diversity {q.diversity:.2f}, {q.low_coherence} below 0"
        )
    return "; ".join(parts)


def _stability_line(counts: artifacts.Counts) -> list[str]:
    st = counts.stability
    if not st:
        return []
    return [
        f"  stability: {st.refits} consensus fits agreeing at mean ARI {st.mean_ari:.2f}; "
        f"median topic {st.median:.2f}, {st.below_half} topics below 0.5"
    ]


def _assigned_line(counts: artifacts.Counts) -> list[str]:
    """How a run without a fit over every paper got its topics (kept, or a sample's)."""
    if kept := counts.kept_topics:
        return [
            f"  topics kept from run {kept.run_id}: {kept.kept} papers kept their place, "
            f"{kept.added} new assigned"
        ]
    if sample := counts.sample:
        return [
            f"  fitted on a sample of {sample.fitted} papers, {sample.assigned} assigned "
            "to its topics"
        ]
    return []


def _print_build_summary(run: artifacts.Run, reused: bool) -> None:
    m = run.manifest
    c = m.counts
    lines = [
        f"Corpus {run.corpus!r}, run {run.run_id}{' (reused)' if reused else ''}: {run.path}",
        f"  papers: {c.papers} kept, {c.skipped} skipped, {c.merged} duplicates merged",
        f"  embedded: {c.embedded_new} new, {c.embedded_cached} from cache"
        f" ({m.config.embedding_precision})",
        f"  topics: {c.topics}, outliers: {c.outliers} ({c.outlier_share:.1%})",
        "  levels: " + _levels_line(c.levels),
        *[f"  coherence: {q}" for q in [_quality_line(c.levels)] if q],
        *_stability_line(c),
        *_assigned_line(c),
        "  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in m.timings.items()),
    ]
    lines += [f"  note: {msg}" for msg in m.messages]
    print("\n".join(lines))


def _cmd_build(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.build.pipeline import build, prepare_environment

    prepare_environment(cache_dir)
    config = _build_config(args)
    config.validate()  # BuildConfig checks every option; before --add reads the latest run
    if args.add:
        previous = artifacts.open_run(cache_dir, args.name, verify=False)
        known = [i.path for i in previous.manifest.inputs]
        inputs = known + [p for p in config.inputs if p not in known]
        config = replace(config, inputs=tuple(inputs))
    result = build(config, cache_dir=cache_dir, progress=not args.no_progress)
    _print_build_summary(result.run, result.reused)
    _print_curation_carried(result.run)


def _build_config(args: argparse.Namespace):  # -> BuildConfig
    """The build's options as given; BuildConfig.validate, not the CLI, checks them."""
    from explorer.build.config import BuildConfig
    from explorer.build.sources import ReadOptions

    return BuildConfig(
        name=args.name,
        inputs=tuple(str(p) for p in args.inputs),
        embedding_model=args.embedding_model,
        embedding_precision=args.embedding_precision,
        seed=args.seed,
        min_topic_size=args.min_topic_size,
        stability=args.stability,
        keep_topics=args.keep_topics,
        engine=args.engine,
        ray=_ray_options(args),
        sample_above=args.sample_above,
        sample_size=args.sample_size,
        read_options=ReadOptions(
            text_column=args.text_column,
            title_column=args.title_column,
            year_column=args.year_column,
            class_column=args.class_column,
            venue=args.venue,
            year=args.year,
        ),
    )


def _ray_options(args: argparse.Namespace):  # -> RayOptions | None
    """The Ray options as given, when the Ray engine or any --ray-* flag is; ray itself is
    imported only when the build starts."""
    flags = (args.ray_address, args.ray_batch_size, args.ray_actors_per_node)
    if args.engine != "ray" and all(v is None for v in flags):
        return None
    from explorer.build.embed import CHUNK_SIZE
    from explorer.build.ray_engine import RayOptions

    return RayOptions(
        address=args.ray_address,
        batch_size=CHUNK_SIZE if args.ray_batch_size is None else args.ray_batch_size,
        actors_per_node=args.ray_actors_per_node,
    )


def _print_curation_carried(run: artifacts.Run) -> None:
    """Which of the corpus's curation changes this run carries, and which it cannot."""
    from explorer import curation

    try:
        changes = curation.read(run.path.parents[1], run.corpus)
    except ArtifactError as exc:  # the run is built and published: say so, do not fail it
        print(f"  curation: not applied: {exc}")
        return
    if not curation.active(changes):
        return
    curated = curation.of_run(run, changes)
    print(f"  curation: {curated.applied} changes carried over", end="")
    if not curated.unmatched:
        print()
        return
    print(f", {len(curated.unmatched)} not matched in this run (shown on the Curate page):")
    for change in curated.unmatched:
        print("    " + curation.describe(change))
    if not run.manifest.counts.kept_topics:
        print("    (the refit regrouped these topics; --keep-topics adds papers without refitting)")


def _cmd_fetch(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.build import fetch as F

    out_dir, name = args.out_dir, args.name
    if args.source[0] == "paperlists":
        if len(args.source) != 3 or not args.source[2].isdigit():
            raise ExplorerError("usage: explorer fetch paperlists VENUE YEAR (e.g. icml 2025)")
        venue, year = args.source[1].lower(), int(args.source[2])
        url = F.paperlists_url(venue, year, args.base_url or F.PAPERLISTS_BASE)
        out_dir, name = out_dir / venue, name or f"{venue}{year}.json"
        corpus = f"{venue}{year}"
    elif len(args.source) == 1:
        url = args.source[0]
        corpus = None
    else:
        raise ExplorerError("usage: explorer fetch paperlists VENUE YEAR  |  explorer fetch URL")
    print(f"Fetching {url}", file=sys.stderr)
    got = F.fetch(
        url,
        out_dir,
        name=name,
        limits=F.FetchLimits(timeout=args.timeout, retries=args.retries, max_bytes=args.max_bytes),
        force=args.force,
        log=lambda message: print(message, file=sys.stderr),
    )
    corpus = corpus or artifacts.suggest_corpus_name(got.path.stem)
    print(f"Saved {got.path} ({got.papers:,} papers, {got.bytes:,} bytes, {got.format})")
    print(f"sha256 {got.sha256} (recorded in {got.path.name}.sha256)")
    print(f"Next: explorer build {got.path} --name {corpus}")


def _cmd_publish(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.publish import publish

    hosts = tuple(args.allowed_host)
    dest = publish(cache_dir, args.name, args.dest, force=args.force, allowed_hosts=hosts)
    print(f"Published {args.name!r} to {dest}")
    print(f"Try it: cd {dest} && pip install -r requirements.txt && streamlit run app.py")
    print(f"Deploying (Streamlit Community Cloud, Docker): {dest / 'README.md'}")


def _cmd_serve(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.app_home import app_dir
    from explorer.serve import ServeConfig, serve

    config = ServeConfig(
        app_dir=app_dir(),
        cache_dir=cache_dir,
        workers=args.workers,
        port=args.port,
        address=args.address,
        allowed_hosts=tuple(args.allowed_host),
        edit=args.edit,
        client_conns=args.client_conns,
        client_address_header=args.client_address_header,
    )
    serve(config)


def _cmd_dashboard(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.app_home import app_dir
    from explorer.serve import ServeConfig, dashboard

    config = ServeConfig(
        app_dir=app_dir(),
        cache_dir=cache_dir,
        workers=1,
        port=args.port,
        address=args.address,
        allowed_hosts=tuple(args.allowed_host),
        edit=not args.read_only,
    )
    dashboard(config)


def _cmd_info(args: argparse.Namespace, cache_dir: Path) -> None:
    run = artifacts.open_run(cache_dir, args.name)
    summary = info_summary(run)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{summary['corpus']} (run {summary['run_id']}, built {summary['created_at']})")
    print(
        f"  documents: {summary['documents']}  topics: {summary['topics']}  "
        f"outliers: {summary['outliers']} ({summary['outlier_share']:.1%})"
    )
    print(
        f"  years: {', '.join(map(str, summary['years'])) or '-'}  venues: {', '.join(summary['venues']) or '-'}"
    )
    print("  levels: " + _levels_line(run.manifest.counts.levels))
    quality = _quality_line(run.manifest.counts.levels)
    if quality:
        print("  coherence: " + quality)
    print(f"  model: {summary['embedding_model']} ({summary['embedding_precision']})")
    print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in summary["timings"].items()))


def _cmd_export(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer import curation
    from explorer.view.store import export_frame
    from explorer.view.text import csv_text

    run = artifacts.open_run(cache_dir, args.name)
    curated = curation.of_run(run)  # the curator's names and assignments, as the dashboard
    frame = export_frame(curated.papers, curated.nodes)
    out: Path = args.out
    if out.parent and not out.parent.exists():
        raise ExplorerError(f"{out.parent}: no such directory")
    artifacts.atomic_write_text(out, csv_text(frame))
    print(f"Wrote {len(frame)} papers to {out}")


def _cmd_curate(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer import curation

    run = artifacts.open_run(cache_dir, args.name)
    if args.op == "compact":
        kept, dropped, backup = curation.compact(cache_dir, args.name)
        print(f"kept {kept} changes in effect, dropped {dropped}; the old history is {backup}")
        return
    if args.op == "history":
        changes = curation.read(cache_dir, args.name)
        live = {c["id"] for c in curation.active(changes)}
        for change in changes:
            mark = "  " if change["id"] in live or change["op"] not in curation.EDITS else "x "
            print(mark + curation.describe(change))
        print(f"{len(changes)} changes, {len(live)} in effect (x: taken back)")
        return
    if args.op in ("undo", "revert"):
        to = None if args.op == "undo" else args.id
        back, restored = curation.take_back(cache_dir, args.name, to=to, source="cli")
        for change in back:
            print("took back " + curation.describe(change))
        for change in restored:
            print("restored " + curation.describe(change))
        return
    fields = {k: getattr(args, k) for k in ("node", "nodes", "label", "paper") if hasattr(args, k)}
    shown = curation.of_run(run).nodes
    target = curation.EditTarget(cache_dir, args.name, run.run_id, run.table("papers"))
    change = curation.record(target, shown, args.op, source="cli", **fields)
    print(curation.describe(change))


def _cmd_list(args: argparse.Namespace, cache_dir: Path) -> None:
    names = artifacts.list_corpora(cache_dir)
    if not names:
        print(
            f"No corpora built under {cache_dir}. Build one with: explorer build INPUT --name NAME"
        )
        return
    for name in names:
        run = artifacts.open_run(cache_dir, name, verify=False)
        c = run.manifest.counts
        print(
            f"{name}\t{run.run_id}\t{c.papers} papers\t{c.topics} topics\t{run.manifest.created_at}"
        )


# --- the commands, each defined once ------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One `explorer` command: the parser, `docs/cli.md` and the dispatch all read this row."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Path], None]
    description: str | None = None
    epilog: str | None = None


COMMANDS: tuple[Command, ...] = (
    Command(
        "fetch",
        "download a paper list (Paper Copilot paperlists or any URL) into data/",
        _fetch_arguments,
        _cmd_fetch,
        description="explorer fetch paperlists VENUE YEAR  |  explorer fetch URL",
    ),
    Command(
        "publish",
        "write a self-contained, viewer-only folder serving one corpus (for hosting)",
        _publish_arguments,
        _cmd_publish,
    ),
    Command(
        "serve",
        "serve the dashboard with N Streamlit workers behind haproxy (every core); "
        "Ctrl-C stops all",
        _serve_arguments,
        _cmd_serve,
    ),
    Command(
        "dashboard",
        "serve the dashboard on this machine (one process, loopback; `make run`); "
        "the host edits through the link it prints",
        _dashboard_arguments,
        _cmd_dashboard,
    ),
    Command(
        "build",
        "build or update a corpus from abstracts",
        _build_arguments,
        _cmd_build,
        epilog="input formats, by suffix (any other file by its content): " + describe_formats(),
    ),
    Command("info", "summary of a corpus's latest run", _info_arguments, _cmd_info),
    Command(
        "export",
        "one CSV row per paper with its topic and map position",
        _export_arguments,
        _cmd_export,
    ),
    Command("list", "corpora built under the cache", _no_arguments, _cmd_list),
    Command(
        "curate",
        "rename, merge, hide or move topics, kept as an overlay over every run",
        _curate_arguments,
        _cmd_curate,
        description="explorer curate NAME rename NODE LABEL | merge NODE NODE... | hide NODE "
        "| unhide NODE | move PAPER_ID NODE | undo | revert ID | history | compact",
    ),
)


def _parser() -> argparse.ArgumentParser:
    """The whole command line, from COMMANDS (docs/cli.md is generated from this parser)."""
    parser = argparse.ArgumentParser(
        prog="explorer", description="Build and inspect topic-explorer corpora."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where corpora and embeddings are cached (default: $EXPLORER_CACHE_DIR or ./cache)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_arguments(
            sub.add_parser(
                command.name,
                help=command.help,
                description=command.description,
                epilog=command.epilog,
            )
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cache_dir = args.cache_dir or artifacts.default_cache_dir()
    run = next(c.run for c in COMMANDS if c.name == args.command)
    try:
        run(args, cache_dir)
    except ExplorerError as exc:
        print(f"explorer: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # disk full, a path under a file, an unwritable folder...
        print(f"explorer: error: {describe_os_error(exc, cache_dir)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("explorer: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
