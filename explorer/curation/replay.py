"""Applying curation to a run's tables when it loads: which edits are in effect, where
their nodes are in this run, and the tables as the curator left them.

A change made on the run being loaded names its nodes by id; one made on another run is
matched by its recorded papers (explorer.curation.matching), once per process and run. The
edits in effect are sorted into what commutes (the last label and hidden flag per node) and
what does not (moves and merges, replayed in order on plain arrays), and every table is
written once. Both steps are kept per run in the process, so a page load after one more
edit does the work of that edit, not of the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from explorer.curation.matching import LEVEL_COLUMN, Resolver
from explorer.node_ids import OUTLIER_ID, id_order, level_of, topic_of

EDITS = ("rename", "merge", "hide", "unhide", "move")
HIDDEN_LABEL = "hidden"


# --- the state ---------------------------------------------------------------------------


def active(changes: list[dict]) -> list[dict]:
    """The edits in effect, in order: replaying the history, an edit comes into effect, an
    undo or revert takes edits back, and a revert also restores the edits that were in
    effect right after its target (ones a later undo had taken back)."""
    live: set[int] = set()
    for change in changes:
        if change["op"] in EDITS:
            live.add(change["id"])
        else:
            live.difference_update(change["takes_back"])
            live.update(change.get("restores", ()))
    return [c for c in changes if c["id"] in live]


# --- applying --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BuiltTables:
    """A run's tables as the build wrote them, which the overlay is applied to. Never
    modified; the memos below recognise them by identity (eq=False: compared as objects)."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    nodes: pd.DataFrame
    doc_topics: pd.DataFrame
    topic_similarity: np.ndarray

    def bases(self) -> tuple:
        """The tables as a tuple, in field order, for the memos' identity checks."""
        return (self.papers, self.topics, self.nodes, self.doc_topics, self.topic_similarity)


@dataclass
class Curated:
    """A run's tables with the overlay applied, and what could not be applied."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    nodes: pd.DataFrame
    doc_topics: pd.DataFrame
    topic_similarity: np.ndarray
    unmatched: list[dict] = field(default_factory=list)  # changes whose nodes are gone
    refused: list[dict] = field(default_factory=list)  # changes holding a refused label
    applied: int = 0


class _Replay:
    """The moves and merges in effect, replayed in history order on plain arrays (a merge
    keeps its largest member as curated so far) and written to the tables once."""

    def __init__(self, papers: pd.DataFrame, nodes: pd.DataFrame) -> None:
        self.papers = papers
        self.column = {
            c: papers[c].to_numpy(dtype=object, copy=True) for c in LEVEL_COLUMN.values()
        }
        self.parent = dict(zip(nodes["node_id"], nodes["parent_id"], strict=True))
        self.children: dict[str, list[str]] = {}
        for node, parent in self.parent.items():
            self.children.setdefault(parent, []).append(node)
        self.alive = set(self.parent)
        self.absorbed: dict[str, str] = {}  # merged-away topic -> its keeper
        self.dropped: set[str] = set()
        self._row: dict[str, int] | None = None

    def edit(self, change: dict, ids: dict[str, str]) -> None:
        if change["op"] == "move":
            self.move(change["paper"], ids[change["node"]])
        else:
            self.merge([ids[n] for n in change["nodes"]])

    def move(self, paper: str, node: str) -> None:
        """The paper to `node`'s topic (and subtopic), in that topic's area."""
        if self._row is None:
            self._row = {p: i for i, p in enumerate(self.papers["paper_id"])}
        row, topic = self._row[paper], topic_of(node)
        area = self.parent.get(topic) if topic in self.alive else None
        self.column["topic_id"][row] = topic
        self.column["area_id"][row] = area if isinstance(area, str) else ""
        self.column["subtopic_id"][row] = node if level_of(node) == "subtopic" else ""

    def merge(self, merged: list[str]) -> None:
        """Topics (or subtopics of one topic) into the largest, as curated so far: it keeps
        its id and area; a merged topic loses its subtopics."""
        present = [n for n in merged if n in self.alive]
        if len(present) < 2:
            return  # already one node (e.g. an earlier merge of the same topics)
        topic_level = level_of(present[0]) == "topic"
        values = self.column["topic_id" if topic_level else "subtopic_id"]
        size = {n: int((values == n).sum()) for n in present}
        keeper = min(present, key=lambda n: (-size[n], n))
        gone = [n for n in present if n != keeper]
        if topic_level:
            rows = np.isin(values, present)
            area = self.parent.get(keeper)
            self.column["topic_id"][rows] = keeper
            self.column["area_id"][rows] = area if isinstance(area, str) else OUTLIER_ID
            self.column["subtopic_id"][rows] = ""
            dropped = set(gone).union(*(self.children.get(n, ()) for n in merged))
            self.absorbed.update(dict.fromkeys(gone, keeper))
        else:
            values[np.isin(values, gone)] = keeper
            dropped = set(gone)
        self.dropped |= dropped
        self.alive -= dropped

    def write(self, out: Curated) -> None:
        """The replayed assignment into `out`'s tables, each changed once."""
        out.papers = out.papers.assign(**{
            c: pd.Series(v, index=out.papers.index, dtype=out.papers[c].dtype)
            for c, v in self.column.items()
        })  # fmt: skip
        if self.dropped:
            out.nodes = out.nodes[~out.nodes["node_id"].isin(self.dropped)].reset_index(drop=True)
            _drop_topics(out, list(self.absorbed))
            _absorb_doc_topics(out, self.absorbed)


@dataclass
class _Progress:
    """apply()'s pass over one history on one run's tables: the last label and hidden flag
    per node (order among them does not matter: merges never read them), the moves and
    merges in effect (order matters), and what was not applied. Extended rather than
    redone when only edits were appended since: a page load after a change replays it."""

    bases: tuple  # the tables it was made on, compared by identity
    count: int = 0  # changes passed over
    last: dict | None = None  # the last of them, by identity: the same parsed history
    labels: dict[str, str] = field(default_factory=dict)
    hidden: dict[str, bool] = field(default_factory=dict)
    shaping: list[tuple[dict, dict[str, str]]] = field(default_factory=list)
    unmatched: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    applied: int = 0

    def extends(self, bases: tuple, changes: list[dict]) -> bool:
        """Whether `changes` are this pass's history plus edits only (nothing taken back)."""
        same = all(a is b for a, b in zip(self.bases, bases, strict=True))
        if not same or len(changes) < self.count:
            return False
        if self.count and changes[self.count - 1] is not self.last:
            return False
        return all(c["op"] in EDITS for c in changes[self.count :])

    def take(self, change: dict, ids: dict[str, str]) -> None:
        op = change["op"]
        if op == "rename":
            self.labels[ids[change["node"]]] = change["label"]
        elif op in ("hide", "unhide"):
            self.hidden[ids[change["node"]]] = op == "hide"
        else:
            self.shaping.append((change, ids))
        self.applied += 1


@dataclass
class _Shaped:
    """A run's tables after the moves and merges in effect, with sizes (no labels yet)."""

    bases: tuple
    key: tuple  # the moves and merges it replayed
    tables: Curated


# Per (run, store): the last pass and the last shaped tables. Both are pure functions of
# their inputs (compared on use), kept so a page load after a change does not redo them.
_PROGRESS: dict[tuple, _Progress] = {}
_SHAPED: dict[tuple, _Shaped] = {}
_MAX_MEMO = 8


def _remember(memo: dict, key: tuple, value: object) -> None:
    if key not in memo and len(memo) >= _MAX_MEMO:
        memo.pop(next(iter(memo)))
    memo[key] = value


def apply(
    built: BuiltTables,
    changes: list[dict],
    *,
    run_id: str | None = None,
    folder: tuple[Path, str] | None = None,
) -> Curated:
    """The tables as the curator left them. Adds a `hidden` column to papers, topics and
    nodes (False everywhere without curation) so every view can grey or filter them.
    `run_id` is the run these tables are (its own changes resolve by id), `folder` the
    (cache_dir, corpus) whose stored members match changes made on other runs."""
    bases = built.bases()
    key = (run_id, str(folder))
    resolver = Resolver(built.papers, built.nodes, run_id, folder)
    progress = _pass(bases, changes, resolver, key)
    shaped = _shape(bases, progress.shaping, key).tables
    # A shallow copy: pandas copies on write, so edits below never reach the shaped (or
    # built) frames, and the columns they leave alone are shared, not duplicated.
    out = Curated(
        shaped.papers.copy(deep=False), shaped.topics.copy(), shaped.nodes.copy(),
        shaped.doc_topics, shaped.topic_similarity.copy(), list(progress.unmatched),
        list(progress.refused), progress.applied,
    )  # fmt: skip
    _set_labels(out, progress.labels)
    _set_hidden(out, progress.hidden)
    _show_labels(out)
    return out


def _pass(bases: tuple, changes: list[dict], resolver: Resolver, key: tuple) -> _Progress:
    """Every edit in effect sorted into a _Progress (the memo's, extended when it can)."""
    memo = _PROGRESS.get(key)
    if memo is not None and memo.extends(bases, changes):
        progress = _Progress(
            bases, memo.count, memo.last, dict(memo.labels), dict(memo.hidden),
            list(memo.shaping), list(memo.unmatched), list(memo.refused), memo.applied,
        )  # fmt: skip
        todo = changes[memo.count :]
    else:
        progress, todo = _Progress(bases), active(changes)
    for change in todo:
        if "refused" in change:
            progress.refused.append(change)
        elif (ids := resolver.resolve(change)) is None:
            progress.unmatched.append(change)
        else:
            progress.take(change, ids)
    progress.count, progress.last = len(changes), changes[-1] if changes else None
    _remember(_PROGRESS, key, progress)
    return progress


def _shape(bases: tuple, shaping: list[tuple[dict, dict[str, str]]], key: tuple) -> _Shaped:
    """The tables after `shaping` (the memo's when it replayed the same)."""
    replayed = tuple((c["id"], c["time"], tuple(ids.items())) for c, ids in shaping)
    memo = _SHAPED.get(key)
    if (
        memo
        and memo.key == replayed
        and all(a is b for a, b in zip(memo.bases, bases, strict=True))
    ):
        return memo
    papers, topics, nodes, doc_topics, similarity = bases
    tables = Curated(papers.copy(deep=False), topics.copy(), nodes.copy(), doc_topics, similarity)
    if shaping:
        replay = _Replay(papers, nodes)
        for change, ids in shaping:
            replay.edit(change, ids)
        replay.write(tables)
    _count(tables)
    shaped = _Shaped(bases, replayed, tables)
    _remember(_SHAPED, key, shaped)
    return shaped


def _set_labels(out: Curated, labels: dict[str, str]) -> None:
    for frame, column in ((out.nodes, "node_id"), (out.topics, "topic_id")):
        named = frame[column].map(labels)
        if named.notna().any():
            for name in ("label", "long_label"):
                frame[name] = named.fillna(frame[name]).astype(frame[name].dtype)


def _set_hidden(out: Curated, hidden: dict[str, bool]) -> None:
    flags = out.nodes["node_id"].map(hidden)
    out.nodes["hidden"] = flags.fillna(False).astype(bool) if flags.notna().any() else False


def _drop_topics(out: Curated, gone: list[str]) -> None:
    """Merged-away topics leave the topic table and the similarity matrix (rows follow the
    real topics in numeric order)."""
    real = sorted((t for t in out.topics["topic_id"] if t != OUTLIER_ID), key=id_order)
    keep = [i for i, t in enumerate(real) if t not in set(gone)]
    if out.topic_similarity.shape[0] == len(real):
        out.topic_similarity = out.topic_similarity[np.ix_(keep, keep)]
    out.topics = out.topics[~out.topics["topic_id"].isin(gone)].reset_index(drop=True)


def _absorb_doc_topics(out: Curated, absorbed: dict[str, str]) -> None:
    """The papers' topic distributions with every merged-away topic's share summed into
    the topic it ended in (through later merges of its keeper), once for all merges."""
    if not absorbed:
        return
    final = {}
    for gone, keeper in absorbed.items():
        while keeper in absorbed:
            keeper = absorbed[keeper]
        final[gone] = keeper
    docs = out.doc_topics.assign(topic_id=out.doc_topics["topic_id"].replace(final))
    docs = docs.groupby(["paper_id", "topic_id"], as_index=False, sort=False)["score"].sum()
    docs = docs.sort_values(["paper_id", "score"], ascending=[True, False], kind="stable")
    docs["rank"] = docs.groupby("paper_id").cumcount() + 1  # the merged topic's share summed
    out.doc_topics = docs[out.doc_topics.columns].reset_index(drop=True)


def _count(out: Curated) -> None:
    """Sizes and shares from the curated assignment."""
    papers, nodes = out.papers, out.nodes
    counts: dict[str, int] = {}
    for column in ("area_id", "topic_id", "subtopic_id"):
        counts.update(papers[column].astype(str).value_counts().to_dict())
    nodes["size"] = nodes["node_id"].map(counts).fillna(0).astype(int)
    nodes["share"] = nodes["size"] / max(len(papers), 1)
    topic_size = papers["topic_id"].value_counts()
    out.topics["size"] = out.topics["topic_id"].map(topic_size).fillna(0).astype(int)
    out.topics["share"] = out.topics["size"] / max(len(papers), 1)


def _show_labels(out: Curated) -> None:
    """What follows from the labels and hidden flags: hidden nodes' labels marked, and
    the topic's label, stability and hidden flag on each paper (every view reads them)."""
    papers, nodes = out.papers, out.nodes
    hidden = set(nodes.loc[nodes["hidden"], "node_id"])
    for frame, column in ((nodes, "node_id"), (out.topics, "topic_id")):
        rows = frame[column].isin(hidden)  # greyed as hidden everywhere the label shows
        if rows.any():
            for name in ("label", "long_label"):
                frame[name] = frame[name].where(~rows, frame[name] + f" ({HIDDEN_LABEL})")
    out.topics["hidden"] = out.topics["topic_id"].isin(hidden)
    label = dict(zip(out.topics["topic_id"], out.topics["label"], strict=True))
    papers["topic_label"] = papers["topic_id"].map(label).fillna(papers["topic_label"])
    # Each topic's stability (its consensus fits) on its papers; nodes keep their own
    # (subtopics too) where the build wrote them, else the topic's. NaN where not computed.
    stability = out.topics.get("stability", pd.Series(np.nan, index=out.topics.index))
    score = dict(zip(out.topics["topic_id"], stability.astype(float), strict=True))
    papers["stability"] = papers["topic_id"].map(score).astype(float)
    own = nodes["stability"] if "stability" in nodes else pd.Series(np.nan, index=nodes.index)
    nodes["stability"] = own.astype(float).fillna(nodes["node_id"].map(score).astype(float))
    papers["hidden"] = (
        papers["area_id"].isin(hidden)
        | papers["topic_id"].isin(hidden)
        | papers["subtopic_id"].isin(hidden)
    )
