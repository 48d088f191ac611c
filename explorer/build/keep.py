"""`explorer build --keep-topics`: a new run that keeps the latest run's topics.

Papers already in the latest run keep their topic, subtopic, area and map place; papers
new to the corpus join them by the rules of `assign`; papers gone from the inputs leave.
No UMAP or HDBSCAN runs, so nothing regroups: curations carry over (their members'
overlap stays near 1) and shared links keep pointing at the same subjects. Labels,
keywords, neighbours and statistics are computed again from the new membership.

Topic ids are ordered by size, as in a fit, so a topic that outgrows another swaps ids
with it; areas and subtopics follow their topics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from explorer import artifacts, node_ids
from explorer.build import assign
from explorer.build.levels import Levels, renamed
from explorer.errors import ArtifactError, InputError
from explorer.vectors import normalise_rows


@dataclass(frozen=True)
class Base:
    """A fit new papers are assigned to: the corpus's latest run (`--keep-topics`), or the
    fit on a sample (explorer/build/sample.py)."""

    run_id: str
    papers: pd.DataFrame  # paper_id, topic_id (int), subtopic_id, x, y
    params: dict
    embedding_model: str
    threshold: float  # the fit's outlier threshold (cosine to a topic centroid)
    area_of_topic: dict[int, str]
    unsplit: dict[int, str]


@dataclass(frozen=True)
class Kept:
    """The new run's partition, levels and map, before BERTopic renumbers by size."""

    labels: np.ndarray
    levels: Levels
    coords: np.ndarray
    kept: int  # papers that were in the base run
    added: int  # papers placed by `assign`


def load_base(cache_dir: Path, corpus: str) -> Base:
    """The corpus's latest run as a base, or one line saying why there is none."""
    try:
        run = artifacts.open_run(cache_dir, corpus)
    except ArtifactError as exc:
        raise InputError(f"--keep-topics: {exc}") from None
    papers = run.table("papers")[["paper_id", "topic_id", "subtopic_id", "x", "y"]].copy()
    papers["topic_id"] = papers["topic_id"].astype(int)
    nodes = run.table("nodes")
    topics = nodes[nodes["level"] == "topic"]
    config = run.manifest.config
    return Base(
        run_id=run.run_id,
        papers=papers,
        params=dict(config.params),
        embedding_model=config.embedding_model,
        threshold=float(run.manifest.counts.outlier_threshold),
        area_of_topic={
            int(n): str(p) for n, p in zip(topics["node_id"], topics["parent_id"], strict=True)
        },
        unsplit={
            int(n): str(w) for n, w in zip(topics["node_id"], topics["note"], strict=True) if w
        },
    )


def keep_topics(
    base: Base, paper_ids: list[str], vectors: np.ndarray, *, engine: str = "local"
) -> Kept:
    """The base run's partition for `paper_ids` (row i = vectors[i]), new papers assigned
    (in parallel when there are many: `assign.assign_all`)."""
    unit = normalise_rows(vectors.astype(np.float32))
    old = base.papers.set_index("paper_id")
    known = np.array([pid in old.index for pid in paper_ids], dtype=bool)
    if not known.any():
        raise InputError(
            f"--keep-topics: no paper of run {base.run_id} is among these inputs; "
            "build without --keep-topics"
        )
    rows = old.loc[np.asarray(paper_ids, dtype=object)[known]]
    labels = np.full(len(paper_ids), node_ids.OUTLIER, dtype=np.int64)
    subtopic = np.full(len(paper_ids), "", dtype=object)
    coords = np.zeros((len(paper_ids), 2), dtype=np.float32)
    labels[known] = rows["topic_id"].to_numpy()
    subtopic[known] = rows["subtopic_id"].to_numpy(dtype=object)
    coords[known] = rows[["x", "y"]].to_numpy(dtype=np.float32)
    new = ~known
    ref = assign.Reference(unit[known], labels[known], subtopic[known], coords[known])
    labels[new], subtopic[new], coords[new] = assign.assign_all(ref, unit[new], engine=engine)
    present = set(labels.tolist())
    levels = Levels(
        area_of_topic={t: a for t, a in base.area_of_topic.items() if t in present},
        subtopic=subtopic,
        unsplit={t: why for t, why in base.unsplit.items() if t in present},
    )
    return Kept(labels, levels, coords, kept=int(known.sum()), added=int(new.sum()))


def renumbered(kept: Kept, fitted: np.ndarray) -> Kept:
    """`kept` under the topic ids BERTopic gave (by size): subtopic ids and the area and
    unsplit maps follow their topics."""
    levels = renamed(kept.levels, kept.labels, fitted)
    return Kept(fitted, levels, kept.coords, kept.kept, kept.added)
