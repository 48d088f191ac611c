"""Papers as the pages hand them on: the CSV export's columns, each paper's neighbours as
row positions, papers per class.

Pure pandas/pyarrow/numpy, no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.compute as pc

from explorer.node_ids import OUTLIER_LABEL
from explorer.view.store.nodes import available_levels

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


EXPORT_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status",
    "topic_id", "topic_label", "probability", "x", "y",
    "area_id", "area_label", "subtopic_id", "subtopic_label", "stability", "topic_coherence",
)  # fmt: skip


def export_frame(papers: pd.DataFrame, nodes: pd.DataFrame) -> pd.DataFrame:
    """One row per paper with the columns `explorer export` promises, in that order: the
    original eleven, then the paper's area and subtopic (ids as text, short labels;
    subtopic empty where its topic has no subtopics), then its topic's stability and
    coherence."""
    label = dict(zip(nodes["node_id"], nodes["label"], strict=True))
    frame = papers.loc[:, list(EXPORT_COLUMNS[:11])].reset_index(drop=True)
    frame["area_id"] = papers["area_id"].astype(str).to_numpy()
    frame["area_label"] = [label.get(a, OUTLIER_LABEL) for a in frame["area_id"]]
    if "area" not in available_levels(nodes):  # each topic its own area: no area level
        frame["area_id"], frame["area_label"] = "", ""
    frame["subtopic_id"] = papers["subtopic_id"].astype(str).to_numpy()
    frame["subtopic_label"] = [label.get(n, "") for n in frame["subtopic_id"]]
    # The topic's stability (its consensus fits), empty where not computed.
    frame["stability"] = papers["stability"].to_numpy() if "stability" in papers else np.nan
    # The topic's coherence (NPMI of its top words), empty for outliers and older builds.
    coherence = (
        dict(zip(nodes["node_id"], nodes["coherence"], strict=True)) if "coherence" in nodes else {}
    )
    frame["topic_coherence"] = [coherence.get(t, np.nan) for t in frame["topic_id"].astype(str)]
    return frame


@dataclass(frozen=True)
class Neighbours:
    """Every paper's most similar papers as row positions into the papers table.

    The neighbours table holds k rows of two id strings per paper: 10 million strings at a
    million papers, about 480 MB as Arrow. As positions it is 12 bytes a row, and a paper's
    list is a slice, not a scan of the table.
    """

    starts: np.ndarray  # int64, one more than papers: paper row r's list is starts[r]:starts[r+1]
    rows: np.ndarray  # int32 neighbour rows, best first within each paper
    similarity: np.ndarray  # float32

    @classmethod
    def of(cls, paper_ids: pa.Array, table: pa.Table) -> Neighbours:
        """From the neighbours table (paper_id, neighbor_id, similarity; each paper's rows
        best first); rows naming a paper not in `paper_ids` are dropped."""
        query = pc.index_in(table["paper_id"], value_set=paper_ids)
        found = pc.index_in(table["neighbor_id"], value_set=paper_ids)
        keep = pc.and_(pc.is_valid(query), pc.is_valid(found))
        query = pc.filter(query, keep).to_numpy().astype(np.int64)
        found = pc.filter(found, keep).to_numpy().astype(np.int32)
        similarity = pc.filter(table["similarity"], keep).to_numpy().astype(np.float32)
        order = np.argsort(query, kind="stable")  # keeps each paper's rows best first
        return cls(
            starts=np.searchsorted(query[order], np.arange(len(paper_ids) + 1)),
            rows=found[order],
            similarity=similarity[order],
        )

    def of_row(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """Paper row `row`'s neighbour rows and similarities, best first."""
        span = slice(self.starts[row], self.starts[row + 1])
        return self.rows[span], self.similarity[span]


def class_counts(papers: pd.DataFrame, column: str) -> pd.DataFrame:
    """Papers per value of a class column, largest first; a missing value reads '(none)'."""
    return (
        papers[column]
        .replace("", "(none)")
        .value_counts()
        .rename_axis(column)
        .reset_index(name="papers")
    )
