"""Read-only queries the pages need: filter, search, select, aggregate, export.

Pure pandas/numpy, no Streamlit, so every rule here is unit-tested directly.
"""

from __future__ import annotations

import pandas as pd

EXPORT_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status",
    "topic_id", "topic_label", "probability", "x", "y",
)  # fmt: skip


def export_frame(papers: pd.DataFrame) -> pd.DataFrame:
    """One row per paper with the columns `explorer export` promises, in that order."""
    return papers.loc[:, list(EXPORT_COLUMNS)].reset_index(drop=True)
