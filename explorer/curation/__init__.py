"""Curation: a host's corrections to a corpus's topics, kept beside its runs and applied when
a run loads, never by refitting.

The overlay is an append-only history of changes (rename, merge, hide, unhide, move, and
the undo and revert that take changes back), stored by explorer.curation.log. Its state is
the changes not taken back, replayed in order. Each change names the nodes it touches by id
and the run it was made on, and records their papers (stored once per node and run): that
run resolves it by id, and a rebuild (new ids) finds the nodes again by member overlap
(Jaccard of paper ids >= MATCH_JACCARD, matched once per process and run); a change whose
nodes cannot be found is reported, never silently dropped.

The log's (inode, size, mtime) is the overlay's version: a viewer checks it per rerun with
one `stat`, and keys its caches by (run id, version).

This module is the package's surface (what `explorer curate`, the Curate page and a viewer
call): recording an edit, undo and revert, compact. Beside it: `log` (the file, read and
appended to), `members` (each node's papers, stored once), `limits` (labels and the
history's bounds), `matching` (a change's nodes in a rebuilt run) and `replay` (the edits in
effect applied to a run's tables when it loads).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from explorer.curation import limits, log
from explorer.curation.limits import MAX_LABEL_CHARS  # noqa: F401 - the package's surface
from explorer.curation.log import (  # noqa: F401 - the package's surface
    LOCK,
    legacy_path,
    now,
    path,
    read,
    version,
)
from explorer.curation.matching import LEVEL_COLUMN
from explorer.curation.members import MEMBERS, store_members  # noqa: F401 - the surface
from explorer.curation.replay import EDITS, HIDDEN_LABEL, BuiltTables, active, apply
from explorer.errors import InputError
from explorer.node_ids import OUTLIER_ID, level_of, topic_of

if TYPE_CHECKING:
    from explorer.artifacts import Run
    from explorer.curation.replay import Curated

SOURCES = ("cli", "dashboard")
FILE = log.LOG  # the overlay's file (its version is this file's stat)


def of_run(run: Run, changes: list[dict] | None = None) -> Curated:
    """A run's tables with its corpus's overlay (or `changes`) applied."""
    cache_dir = run.path.parents[1]
    if changes is None:
        changes = read(cache_dir, run.corpus)
    built = BuiltTables(
        run.table("papers"), run.table("topics"), run.table("nodes"), run.table("doc_topics"),
        run.array("topic_similarity"),
    )  # fmt: skip
    return apply(built, changes, run_id=run.run_id, folder=(cache_dir, run.corpus))


# --- recording changes -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class EditTarget:
    """Where an edit is recorded and the run it is made on: the corpus's folder under
    `cache_dir`, and its latest run (`run_id`) with its papers as built, which the change's
    members are recorded from (so a later run can match them)."""

    cache_dir: Path
    corpus: str
    run_id: str
    papers: pd.DataFrame


def record(
    target: EditTarget, shown_nodes: pd.DataFrame, op: str, *, source: str, **args: object
) -> dict:
    """Check one edit, then append it; returns the change written. `shown_nodes` are the
    nodes as curated (what the curator can name: a node merged away cannot be). An
    unknown id, a refused label or a full history raises InputError with a one-line
    message, and nothing is written. Its cost does not grow with the history.
    """
    cache_dir, corpus, papers = target.cache_dir, target.corpus, target.papers
    if source not in SOURCES:
        raise InputError(f"unknown source {source!r} (one of {', '.join(SOURCES)})")
    _check_edit(op, args, shown_nodes)
    named = [args["node"]] if "node" in args else list(args.get("nodes", ()))
    if op == "move" and not (papers["paper_id"] == args["paper"]).any():
        raise InputError(f"unknown paper id {args['paper']!r}")
    members = {node: _papers_of(papers, str(node)) for node in named}
    for node, ids in members.items():
        if not ids:
            raise InputError(f"unknown node id {node!r}")
    base = {"op": op, **args, "run": target.run_id}

    def make(number: int) -> dict:  # under the lock: a compact never sees half a change
        stored = {n: store_members(cache_dir, corpus, i) for n, i in members.items()}
        return {"id": number, **base, "members": stored, "source": source, "time": now()}

    return log.append_new(cache_dir, corpus, make)


def _papers_of(papers: pd.DataFrame, node: str) -> list[str]:
    """A node's papers in the run as built ([] for a node it does not have)."""
    if node == OUTLIER_ID:
        return []
    return papers.loc[papers[LEVEL_COLUMN[level_of(node)]] == node, "paper_id"].tolist()


def _labelled(nodes: pd.DataFrame, node: str) -> tuple[str, str]:
    """A node's short and long label as stored (a rename sets both), without the mark the
    shown labels of a hidden node carry."""
    row = nodes.loc[nodes["node_id"] == node].iloc[0]
    mark = f" ({HIDDEN_LABEL})" if row.get("hidden", False) else ""
    return tuple(str(row[c]).removesuffix(mark) for c in ("label", "long_label"))


def _check_edit(op: str, args: dict, nodes: pd.DataFrame) -> None:
    if op not in EDITS:
        raise InputError(f"unknown curation {op!r} (one of {', '.join(EDITS)})")
    known = set(nodes["node_id"])
    for node in [args.get("node"), *args.get("nodes", ())]:
        if node is not None and node not in known:
            raise InputError(f"unknown node id {node!r}")
    if op == "rename":
        label = args["label"].strip() if isinstance(args["label"], str) else args["label"]
        if problem := limits.label_problem(label):
            raise InputError(problem)
        if _labelled(nodes, str(args["node"])) == (label, label):
            # A change that changes nothing would still fill the history.
            raise InputError(f"node {args['node']} already has that label")
        args["label"] = label
    if op == "merge":
        merged = list(dict.fromkeys(args["nodes"]))
        levels = {level_of(n) for n in merged}
        if len(merged) < 2 or levels - {"topic", "subtopic"} or len(levels) > 1:
            raise InputError("merge two or more topics, or two or more subtopics of one topic")
        if levels == {"subtopic"} and len({topic_of(n) for n in merged}) > 1:
            raise InputError("subtopics merge only within their topic")
        args["nodes"] = merged
    if op == "move" and level_of(str(args["node"])) == "area":
        raise InputError("a paper moves to a topic or a subtopic, not an area")


def take_back(
    cache_dir: Path, corpus: str, *, to: int | None, source: str
) -> tuple[list[dict], list[dict]]:
    """Undo (`to` None: the last edit in effect) or revert to the state right after change
    `to`: every edit in effect now but not then is taken back, and every edit in effect then
    but taken back since is restored. Returns (edits taken back, edits restored); raises
    InputError when there is nothing to do or `to` is not a change. Unlike an edit, it reads
    the whole history (under the lock) to know what is in effect."""
    with log.locked(cache_dir, corpus) as file:
        changes = read(cache_dir, corpus)
        limits.check_room(file, len(changes), corpus)
        entry, back, restores = _taking_back(changes, to)
        log.append(file, entry | {"source": source, "time": now()})
    restored = [c for c in changes if c["id"] in set(restores)]
    return back, restored


def _taking_back(changes: list[dict], to: int | None) -> tuple[dict, list[dict], list[int]]:
    live = active(changes)
    restores: list[int] = []
    if to is None:
        if not live:
            raise InputError("nothing to undo")
        back = [live[-1]]
    else:
        if not 1 <= to <= len(changes):
            raise InputError(f"unknown change id {to} (changes 1 to {len(changes)})")
        then = {c["id"] for c in active(changes[:to])}
        back = [c for c in live if c["id"] not in then]
        restores = sorted(then - {c["id"] for c in live})
        if not back and not restores:
            raise InputError(f"this already is the state right after change {to}")
    entry: dict = {"id": len(changes) + 1, "op": "undo" if to is None else "revert"}
    if to is not None:
        entry |= {"to": to, "restores": restores}
    entry["takes_back"] = [c["id"] for c in back]
    return entry, back, restores


def compact(cache_dir: Path, corpus: str) -> tuple[int, int, Path]:
    """Rewrite the history as its state: the edits in effect, in order, numbered afresh;
    what was taken back, the undos and reverts, edits a later one of the same kind on the
    same node replaced (renames, hides) and changes holding a refused label are dropped.
    The old log is kept beside it (timestamped). Returns (kept, dropped, the old log)."""
    with log.locked(cache_dir, corpus) as file:
        changes = read(cache_dir, corpus)
        live = [c for c in active(changes) if "refused" not in c]
        kept = _latest_per_node(live)
        rows = [{**c, "id": number} for number, c in enumerate(kept, 1)]
        backup = log.replace_log(file, rows)
    return len(rows), len(changes) - len(rows), backup


def _latest_per_node(live: list[dict]) -> list[dict]:
    """The live edits without the renames and hides/unhides a later one on the same node
    of the same run replaced (labels and flags never change what a merge or move does)."""
    last: dict[tuple, int] = {}
    for change in live:
        if change["op"] in ("rename", "hide", "unhide"):
            kind = "rename" if change["op"] == "rename" else "hide"
            last[(kind, change.get("run"), change["node"], str(change["members"]))] = change["id"]
    keep = set(last.values())
    return [c for c in live if c["op"] not in ("rename", "hide", "unhide") or c["id"] in keep]


def describe(change: dict) -> str:
    """One line for a change, as `history` and the Curate page list it (plain text)."""
    op = change["op"]
    if op == "rename":
        what = f"rename {change['node']} to {change['label']!r}"
        if "refused" in change:
            what += f" (not applied: {change['refused']})"
    elif op == "merge":
        what = "merge " + ", ".join(change["nodes"])
    elif op in ("hide", "unhide"):
        what = f"{op} {change['node']}"
    elif op == "move":
        what = f"move paper {change['paper']} to {change['node']}"
    else:
        ids = ", ".join(map(str, change["takes_back"])) or "nothing"
        what = f"{op} (takes back {ids}"
        if change.get("restores"):
            what += f"; restores {', '.join(map(str, change['restores']))}"
        what += ")"
    return f"#{change['id']} {change['time']} {change['source']}: {what}"
