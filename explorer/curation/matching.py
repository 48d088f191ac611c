"""Where a change's nodes are in the run being loaded: by id in the run it was made on, by
the papers it recorded in any other (a rebuild gives nodes new ids).

A node of another run is matched when its papers overlap the recorded ones at Jaccard >=
MATCH_JACCARD, within the same level; each match is kept per process and run (runs and
stored members never change), so a page load redoes none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from explorer.curation.members import load_members
from explorer.errors import NodeIdError
from explorer.node_ids import OUTLIER_ID, level_of

# A node of a new run carries a curation when it shares at least half of the union of its
# papers with the curated node (Jaccard >= 0.5): then no other node can share as much, so
# the match is unique, and a topic that split or merged in the rebuild is reported instead.
MATCH_JACCARD = 0.5
# The papers table's column holding each level's node.
LEVEL_COLUMN = {"area": "area_id", "topic": "topic_id", "subtopic": "subtopic_id"}


@dataclass(frozen=True)
class Members:
    """Every node's papers in one (uncurated) run: what changes are matched by."""

    of: dict[str, frozenset[str]]
    papers: frozenset[str] = frozenset()  # every paper of the run

    @classmethod
    def of_run(cls, papers: pd.DataFrame) -> Members:
        of: dict[str, set[str]] = {}
        for column in LEVEL_COLUMN.values():
            for node, ids in papers.groupby(papers[column].astype(str))["paper_id"]:
                if node and node != OUTLIER_ID:
                    of.setdefault(node, set()).update(ids)
        return cls({k: frozenset(v) for k, v in of.items()}, frozenset(papers["paper_id"]))

    def find(self, node: str, recorded: list[str]) -> str | None:
        """This run's node for a curated one: the node of the same level whose papers
        overlap the recorded ones at Jaccard >= MATCH_JACCARD. Only a node split in two
        exact halves has two such nodes (both at 0.5): that is reported, not guessed."""
        want = set(recorded)
        try:
            level = level_of(node)
        except NodeIdError:  # a hand-edited history: an id no run can have matches nothing
            return None
        found = [
            c for c in self.of
            if level_of(c) == level and _jaccard(self.of[c], want) >= MATCH_JACCARD
        ]  # fmt: skip
        return found[0] if len(found) == 1 else None


def _jaccard(a: frozenset[str] | set[str], b: set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# Matches of recorded nodes in a run, per process: (folder, run id, node, digest) -> node.
# Runs and stored members never change, so a match holds for good; bounded by clearing.
_MATCHES: dict[tuple[str, str, str, str], str | None] = {}
_MAX_MATCHES = 100_000


class Resolver:
    """Finds the nodes a change names in the run being curated: by id for a change made on
    this run, by member overlap (matched once per process) for one made on another run."""

    def __init__(self, papers: pd.DataFrame, nodes: pd.DataFrame, run_id: str | None,
                 folder: tuple[Path, str] | None) -> None:  # fmt: skip
        self.papers, self.run_id, self.folder = papers, run_id, folder
        self.ids = set(nodes["node_id"])
        self._members: Members | None = None

    @property
    def members(self) -> Members:
        if self._members is None:  # ~250 MB at a million papers: only when a rebuild needs it
            self._members = Members.of_run(self.papers)
        return self._members

    def resolve(self, change: dict) -> dict[str, str] | None:
        """Recorded node id -> this run's node id for every node the change names; None
        when one cannot be found (or a moved paper is not in this run)."""
        if self.run_id is not None and change.get("run") == self.run_id:
            named = change["members"]
            return {n: n for n in named} if all(n in self.ids for n in named) else None
        if change["op"] == "move" and change["paper"] not in self.members.papers:
            return None
        found = {}
        for node, recorded in change["members"].items():
            now = self._find(node, recorded)
            if now is None:
                return None
            found[node] = now
        return found

    def _find(self, node: str, recorded: str | list[str]) -> str | None:
        if isinstance(recorded, list) or self.folder is None or self.run_id is None:
            return self.members.find(node, self._recorded(recorded))
        key = (str(self.folder), self.run_id, node, recorded)
        if key not in _MATCHES:
            if len(_MATCHES) >= _MAX_MATCHES:
                _MATCHES.clear()
            _MATCHES[key] = self.members.find(node, self._recorded(recorded))
        return _MATCHES[key]

    def _recorded(self, recorded: str | list[str]) -> list[str]:
        if isinstance(recorded, list):
            return recorded
        if self.folder is None:
            return []  # no store to read the members from: reported as unmatched
        return load_members(*self.folder, recorded)
