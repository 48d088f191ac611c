"""Curation: a host's corrections to a corpus's topics, kept beside its runs and applied when
a run loads, never by refitting.

The overlay is `cache/<corpus>/curation.json`: an append-only history of changes (rename,
merge, hide, unhide, move, and the undo and revert that take changes back). Its state is the
changes not taken back, replayed in order. Each change names the nodes it touches by id *and*
records their papers in the run it was made on, so a rebuild (new ids) finds them again by
member overlap (Jaccard of paper ids >= MATCH_JACCARD); a change whose nodes cannot be found
is reported, never silently dropped.

Writes happen under an exclusive lock on `curation.lock`, re-reading the file under it, then
temp-then-rename: two editors at once lose no change, and a reader never sees half a file.
The file's (inode, size, mtime) is the overlay's version: a viewer checks it per rerun with
one `stat`, and keys its caches by (run id, version).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.artifacts import OUTLIER_ID, Run, atomic_write_text, id_order
from explorer.errors import ArtifactError, InputError

SCHEMA = 1
FILE = "curation.json"
LOCK = "curation.lock"
# A node of a new run carries a curation when it shares at least half of the union of its
# papers with the curated node (Jaccard >= 0.5): then no other node can share as much, so
# the match is unique, and a topic that split or merged in the rebuild is reported instead.
MATCH_JACCARD = 0.5
SOURCES = ("cli", "dashboard")
EDITS = ("rename", "merge", "hide", "unhide", "move")
HIDDEN_LABEL = "hidden"
MAX_LABEL_CHARS = 200


def level_of(node_id: str) -> str:
    """A node id's level, from its form: A3 area, 3 topic, 3.1 subtopic."""
    if node_id.startswith("A"):
        return "area"
    return "subtopic" if "." in node_id else "topic"


# --- the file --------------------------------------------------------------------------


def path(cache_dir: Path, corpus: str) -> Path:
    return Path(cache_dir) / corpus / FILE


def version(cache_dir: Path, corpus: str) -> tuple[int, ...]:
    """The overlay's version: one stat. () when there is none."""
    try:
        st = path(cache_dir, corpus).stat()
    except FileNotFoundError:
        return ()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read(cache_dir: Path, corpus: str) -> list[dict]:
    """The history of changes, checked against the schema; [] when there is none."""
    file = path(cache_dir, corpus)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{file}: unreadable curation ({exc})") from None
    problem = _schema_problem(raw)
    if problem:
        raise ArtifactError(f"{file}: {problem}")
    return raw["changes"]


def _schema_problem(raw: object) -> str | None:
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        return f"not a curation file of schema {SCHEMA}"
    changes = raw.get("changes")
    if not isinstance(changes, list):
        return "'changes' is not a list"
    for number, change in enumerate(changes, 1):
        if not isinstance(change, dict) or change.get("id") != number:
            return f"change {number}: missing or out of order"
        fields = FIELDS.get(change.get("op"))
        if fields is None:
            return f"change {number}: unknown op {change.get('op')!r}"
        for name, kind in {**fields, "source": str, "time": str}.items():
            if not isinstance(change.get(name), kind):
                return f"change {number}: field {name!r} missing or not {kind.__name__}"
    return None


# What each kind of change must hold (beyond id, source and time).
FIELDS: dict[str, dict[str, type]] = {
    "rename": {"node": str, "label": str, "members": dict},
    "merge": {"nodes": list, "members": dict},
    "hide": {"node": str, "members": dict},
    "unhide": {"node": str, "members": dict},
    "move": {"paper": str, "node": str, "members": dict},
    "undo": {"takes_back": list},
    "revert": {"to": int, "takes_back": list, "restores": list},
}


@contextlib.contextmanager
def _locked(cache_dir: Path, corpus: str) -> Iterator[list[dict]]:
    """The history under an exclusive lock, re-read under it; written back if changed."""
    folder = Path(cache_dir) / corpus
    with open(folder / LOCK, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            changes = read(cache_dir, corpus)
            before = len(changes)
            yield changes
            if len(changes) != before:
                text = json.dumps({"schema": SCHEMA, "changes": changes}, indent=1)
                atomic_write_text(folder / FILE, text + "\n")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# --- the state ---------------------------------------------------------------------------


def active(changes: list[dict]) -> list[dict]:
    """The edits in effect, in order: replaying the history, an edit comes into effect, an
    undo or revert takes edits back, and a revert also restores the edits that were in
    effect right after its target (ones a later undo had taken back)."""
    live: set[int] = set()
    for change in changes:
        if change["op"] in EDITS:
            live.add(change["id"])
        live -= set(change.get("takes_back", ()))
        live |= set(change.get("restores", ()))
    return [c for c in changes if c["id"] in live]


# --- resolving nodes in a run ------------------------------------------------------------


@dataclass(frozen=True)
class Members:
    """Every node's papers in one (uncurated) run: what changes are matched by."""

    of: dict[str, frozenset[str]]
    papers: frozenset[str] = frozenset()  # every paper of the run

    @classmethod
    def of_run(cls, papers: pd.DataFrame) -> Members:
        of: dict[str, set[str]] = {}
        for column in ("area_id", "topic_id", "subtopic_id"):
            for node, ids in papers.groupby(papers[column].astype(str))["paper_id"]:
                if node and node != OUTLIER_ID:
                    of.setdefault(node, set()).update(ids)
        return cls({k: frozenset(v) for k, v in of.items()}, frozenset(papers["paper_id"]))

    def find(self, node: str, recorded: list[str]) -> str | None:
        """This run's node for a curated one: the node of the same level whose papers
        overlap the recorded ones at Jaccard >= MATCH_JACCARD. Only a node split in two
        exact halves has two such nodes (both at 0.5): that is reported, not guessed."""
        want = set(recorded)
        level = level_of(node)
        found = [
            c for c in self.of
            if level_of(c) == level and _jaccard(self.of[c], want) >= MATCH_JACCARD
        ]  # fmt: skip
        return found[0] if len(found) == 1 else None


def _jaccard(a: frozenset[str] | set[str], b: set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# --- applying --------------------------------------------------------------------------


@dataclass
class Curated:
    """A run's tables with the overlay applied, and what could not be applied."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    nodes: pd.DataFrame
    doc_topics: pd.DataFrame
    topic_similarity: np.ndarray
    unmatched: list[dict] = field(default_factory=list)  # changes whose nodes are gone
    applied: int = 0


def apply(
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    nodes: pd.DataFrame,
    doc_topics: pd.DataFrame,
    topic_similarity: np.ndarray,
    changes: list[dict],
) -> Curated:
    """The tables as the curator left them. Adds a `hidden` column to papers, topics and
    nodes (False everywhere without curation) so every view can grey or filter them."""
    live = active(changes)
    # Every node's member set costs ~250 MB at a million papers: only when there are edits.
    members = Members.of_run(papers) if live else Members({})
    # A shallow copy: pandas copies on write, so edits below never reach the built frame,
    # and the columns they leave alone are shared, not duplicated.
    out = Curated(
        papers.copy(deep=False), topics.copy(), nodes.copy(), doc_topics, topic_similarity.copy()
    )
    out.nodes["hidden"] = False
    for change in live:
        ids = _resolve(change, members)
        if ids is None:
            out.unmatched.append(change)
            continue
        EDIT[change["op"]](out, change, ids)
        out.applied += 1
    _recount(out)
    return out


def of_run(run: Run, changes: list[dict] | None = None) -> Curated:
    """A run's tables with its corpus's overlay (or `changes`) applied."""
    if changes is None:
        changes = read(run.path.parents[1], run.corpus)
    return apply(
        run.table("papers"), run.table("topics"), run.table("nodes"), run.table("doc_topics"),
        run.array("topic_similarity"), changes,
    )  # fmt: skip


def _resolve(change: dict, members: Members) -> dict[str, str] | None:
    """Recorded node id -> this run's node id for every node the change names; None when
    one cannot be found (or a moved paper is not in this run)."""
    if change["op"] == "move" and change["paper"] not in members.papers:
        return None
    found = {}
    for node, recorded in change["members"].items():
        now = members.find(node, recorded)
        if now is None:
            return None
        found[node] = now
    return found


def _rename(out: Curated, change: dict, ids: dict[str, str]) -> None:
    node, label = ids[change["node"]], change["label"]
    rows = out.nodes["node_id"] == node
    out.nodes.loc[rows, ["label", "long_label"]] = label
    if level_of(node) == "topic":
        out.topics.loc[out.topics["topic_id"] == node, ["label", "long_label"]] = label


def _hide(out: Curated, change: dict, ids: dict[str, str]) -> None:
    out.nodes.loc[out.nodes["node_id"] == ids[change["node"]], "hidden"] = change["op"] == "hide"


def _merge(out: Curated, change: dict, ids: dict[str, str]) -> None:
    merged = [ids[n] for n in change["nodes"]]
    present = out.nodes.loc[out.nodes["node_id"].isin(merged), ["node_id", "parent_id"]]
    if len(present) < 2:
        return  # already one node (e.g. an earlier merge of the same topics)
    column = "topic_id" if level_of(present["node_id"].iloc[0]) == "topic" else "subtopic_id"
    size = out.papers[column].value_counts()  # as curated so far (earlier merges and moves)
    present = present.assign(size=present["node_id"].map(size).fillna(0))
    keeper = present.sort_values(["size", "node_id"], ascending=[False, True])["node_id"].iloc[0]
    gone = [n for n in present["node_id"] if n != keeper]
    rows = out.papers[column].isin(gone)
    if column == "topic_id":
        area = present.set_index("node_id").loc[keeper, "parent_id"]
        area = area if isinstance(area, str) else OUTLIER_ID  # no area level: none to keep
        rows |= out.papers["topic_id"] == keeper
        out.papers.loc[rows, ["topic_id", "area_id", "subtopic_id"]] = [keeper, area, ""]
        dropped = set(gone) | set(out.nodes.loc[out.nodes["parent_id"].isin(merged), "node_id"])
        _drop_topics(out, gone, keeper)
    else:
        out.papers.loc[rows, "subtopic_id"] = keeper
        dropped = set(gone)
    out.nodes = out.nodes[~out.nodes["node_id"].isin(dropped)].reset_index(drop=True)


def _drop_topics(out: Curated, gone: list[str], keeper: str) -> None:
    """Merged-away topics leave the topic table, the similarity matrix (rows follow the
    real topics in numeric order) and the papers' topic distributions (as the keeper)."""
    real = sorted((t for t in out.topics["topic_id"] if t != OUTLIER_ID), key=id_order)
    keep = [i for i, t in enumerate(real) if t not in set(gone)]
    if out.topic_similarity.shape[0] == len(real):
        out.topic_similarity = out.topic_similarity[np.ix_(keep, keep)]
    out.topics = out.topics[~out.topics["topic_id"].isin(gone)].reset_index(drop=True)
    docs = out.doc_topics.assign(topic_id=out.doc_topics["topic_id"].replace(gone, keeper))
    docs = docs.groupby(["paper_id", "topic_id"], as_index=False, sort=False)["score"].sum()
    docs = docs.sort_values(["paper_id", "score"], ascending=[True, False], kind="stable")
    docs["rank"] = docs.groupby("paper_id").cumcount() + 1  # the merged topic's share summed
    out.doc_topics = docs[out.doc_topics.columns].reset_index(drop=True)


def _move(out: Curated, change: dict, ids: dict[str, str]) -> None:
    node = ids[change["node"]]
    rows = out.papers["paper_id"] == change["paper"]
    topic = node.split(".")[0]
    area = out.nodes.loc[out.nodes["node_id"] == topic, "parent_id"]
    area = area.iloc[0] if len(area) and isinstance(area.iloc[0], str) else ""
    sub = node if level_of(node) == "subtopic" else ""
    out.papers.loc[rows, ["topic_id", "area_id", "subtopic_id"]] = [topic, area, sub]


EDIT = {"rename": _rename, "hide": _hide, "unhide": _hide, "merge": _merge, "move": _move}


def _recount(out: Curated) -> None:
    """What follows from the curated assignment: sizes, shares, hidden flags, and the
    topic's label and stability on each paper (every view reads them from there)."""
    papers, nodes = out.papers, out.nodes
    counts: dict[str, int] = {}
    for column in ("area_id", "topic_id", "subtopic_id"):
        counts.update(papers[column].astype(str).value_counts().to_dict())
    nodes["size"] = nodes["node_id"].map(counts).fillna(0).astype(int)
    nodes["share"] = nodes["size"] / max(len(papers), 1)
    topic_size = papers["topic_id"].value_counts()
    out.topics["size"] = out.topics["topic_id"].map(topic_size).fillna(0).astype(int)
    out.topics["share"] = out.topics["size"] / max(len(papers), 1)
    hidden = set(nodes.loc[nodes["hidden"], "node_id"])
    for frame, column in ((nodes, "node_id"), (out.topics, "topic_id")):
        rows = frame[column].isin(hidden)  # greyed as hidden everywhere the label shows
        for name in ("label", "long_label"):
            frame.loc[rows, name] = frame.loc[rows, name] + f" ({HIDDEN_LABEL})"
    out.topics["hidden"] = out.topics["topic_id"].isin(hidden)
    label = dict(zip(out.topics["topic_id"], out.topics["label"], strict=True))
    papers["topic_label"] = papers["topic_id"].map(label).fillna(papers["topic_label"])
    # Each topic's stability (--stability) on its papers and node: NaN where not computed.
    stability = out.topics.get("stability", pd.Series(np.nan, index=out.topics.index))
    score = dict(zip(out.topics["topic_id"], stability.astype(float), strict=True))
    papers["stability"] = papers["topic_id"].map(score).astype(float)
    nodes["stability"] = nodes["node_id"].map(score).astype(float)
    papers["hidden"] = (
        papers["area_id"].isin(hidden)
        | papers["topic_id"].isin(hidden)
        | papers["subtopic_id"].isin(hidden)
    )


# --- recording changes -------------------------------------------------------------------


def record(
    cache_dir: Path,
    corpus: str,
    papers: pd.DataFrame,
    shown_nodes: pd.DataFrame,
    op: str,
    *,
    source: str,
    **args: object,
) -> dict:
    """Check one edit, then append it; returns the change written. `papers` is the
    corpus's latest run as built (what the change's members are recorded from),
    `shown_nodes` the nodes as curated (what the curator can name: a node merged away
    cannot be). An unknown id raises InputError naming it, and nothing is written.
    """
    if source not in SOURCES:
        raise InputError(f"unknown source {source!r} (one of {', '.join(SOURCES)})")
    _check_edit(op, args, shown_nodes)
    members = Members.of_run(papers)
    named = [args["node"]] if "node" in args else list(args.get("nodes", ()))
    if op == "move" and args["paper"] not in set(papers["paper_id"]):
        raise InputError(f"unknown paper id {args['paper']!r}")
    for node in named:
        if node not in members.of:
            raise InputError(f"unknown node id {node!r}")
    change = {
        "op": op,
        **args,
        "members": {n: sorted(members.of[n]) for n in named},
        "source": source,
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    with _locked(cache_dir, corpus) as changes:
        change["id"] = len(changes) + 1
        changes.append(change)
    return change


def _check_edit(op: str, args: dict, nodes: pd.DataFrame) -> None:
    if op not in EDITS:
        raise InputError(f"unknown curation {op!r} (one of {', '.join(EDITS)})")
    known = set(nodes["node_id"])
    for node in [args.get("node"), *args.get("nodes", ())]:
        if node is not None and node not in known:
            raise InputError(f"unknown node id {node!r}")
    if op == "rename":
        label = str(args["label"]).strip()
        if not label or len(label) > MAX_LABEL_CHARS:
            raise InputError(f"a label needs 1 to {MAX_LABEL_CHARS} characters")
        args["label"] = label
    if op == "merge":
        merged = list(dict.fromkeys(args["nodes"]))
        levels = {level_of(n) for n in merged}
        if len(merged) < 2 or levels - {"topic", "subtopic"} or len(levels) > 1:
            raise InputError("merge two or more topics, or two or more subtopics of one topic")
        if levels == {"subtopic"} and len({n.split(".")[0] for n in merged}) > 1:
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
    InputError when there is nothing to do or `to` is not a change."""
    with _locked(cache_dir, corpus) as changes:
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
        entry = {"id": len(changes) + 1, "op": "undo" if to is None else "revert"}
        if to is not None:
            entry |= {"to": to, "restores": restores}
        entry |= {
            "takes_back": [c["id"] for c in back],
            "source": source,
            "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        changes.append(entry)
        restored = [c for c in changes if c["id"] in set(restores)]
    return back, restored


def describe(change: dict) -> str:
    """One line for a change, as `history` and the Curate page list it (plain text)."""
    op = change["op"]
    if op == "rename":
        what = f"rename {change['node']} to {change['label']!r}"
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
