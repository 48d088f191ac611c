"""The commands on built corpora: `info`, `export`, `list` read runs, `curate` records the
host's changes. None loads a model, so each answers at once.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from explorer import artifacts
from explorer.atomic_files import atomic_write_text
from explorer.cli import report
from explorer.errors import ExplorerError
from explorer.names import list_corpora


def info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run_info(args: argparse.Namespace, cache_dir: Path) -> None:
    run = artifacts.open_run(cache_dir, args.name)
    summary = report.info_summary(run)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    report.print_info(run, summary)


def export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name")
    parser.add_argument("--out", required=True, type=Path, help="CSV file to write")


def run_export(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer import curation
    from explorer.view.store.papers import export_frame
    from explorer.view.text import csv_text

    run = artifacts.open_run(cache_dir, args.name)
    curated = curation.of_run(run)  # the curator's names and assignments, as the dashboard
    frame = export_frame(curated.papers, curated.nodes)
    out: Path = args.out
    if out.parent and not out.parent.exists():
        raise ExplorerError(f"{out.parent}: no such directory")
    atomic_write_text(out, csv_text(frame))
    print(f"Wrote {len(frame)} papers to {out}")


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """`list` takes none."""


def run_list(args: argparse.Namespace, cache_dir: Path) -> None:
    names = list_corpora(cache_dir)
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


def curate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="corpus")
    ops = parser.add_subparsers(dest="op", required=True)
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


def run_curate(args: argparse.Namespace, cache_dir: Path) -> None:
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
