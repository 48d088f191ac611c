"""The Topics page's tables: nodes at a level with their stability and coherence, the topic
CSV, and a topic's name in the picker.

Pure pandas/numpy, no Streamlit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from explorer.node_ids import OUTLIER_ID, has_area_level
from explorer.view.store.nodes import nodes_at

if TYPE_CHECKING:
    import pandas as pd


# A node whose top words co-occur less often than chance would have them (NPMI below this)
# is marked "low coherence" (the build's explorer.build.coherence.LOW_COHERENCE).
LOW_COHERENCE = 0.0


def topic_name(topics: pd.DataFrame):
    """`id: label` of a topic, for the Topics page's topic picker (`node_name` names nodes of
    every level elsewhere)."""
    labels = dict(zip(topics["topic_id"], topics["label"], strict=True))
    return lambda t: f"{t}: {labels.get(t, '?')}"


def node_table(nodes: pd.DataFrame, level: str) -> pd.DataFrame:
    """The Topics page's table at one level: id, parent, long label, size, share, the
    stability of topics and subtopics where the build scored it (its consensus fits), and
    each node's coherence (NPMI of its top words) with `low coherence` noted below
    LOW_COHERENCE."""
    columns = ["node_id", "parent_id", "long_label", "size", "share"]
    if "stability" in nodes and nodes_at(nodes, level)["stability"].notna().any():
        columns.append("stability")
    if "coherence" in nodes:
        columns.append("coherence")
    table = nodes_at(nodes, level).loc[:, columns]
    table = table.rename(columns={"node_id": "id", "parent_id": "parent", "long_label": "label"})
    if not has_area_level(nodes):  # each topic its own area: an id no page offers
        areas = nodes.loc[nodes["level"] == "area", "node_id"]
        table["parent"] = table["parent"].where(~table["parent"].isin(areas), "")
    if "coherence" in table:
        table["note"] = np.where(table["coherence"] < LOW_COHERENCE, "low coherence", "")
    return table.sort_values("size", ascending=False, kind="stable").reset_index(drop=True)


def topic_table(topics: pd.DataFrame, nodes: pd.DataFrame) -> pd.DataFrame:
    """The Topics page's CSV download: one row per topic, long label, keywords joined, and
    its coherence and stability where the build computed them. Without an area level the
    area column is empty, as in `export_frame`."""
    columns = ["topic_id", "area_id", "long_label", "size", "share", "keywords"]
    columns += [c for c in ("coherence", "stability") if c in topics]
    table = topics.loc[topics["topic_id"] != OUTLIER_ID, columns].rename(
        columns={"long_label": "label"}
    )
    table["keywords"] = [", ".join(k) for k in table["keywords"]]
    if not has_area_level(nodes):  # each topic its own area
        table["area_id"] = ""
    return table.reset_index(drop=True)
