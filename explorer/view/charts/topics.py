"""The Overview's and Topics page's figures: node sizes, a topic's keywords, the hierarchy
as indented bars, the intertopic distance map and the similarity heatmap. Every untrusted string
goes through `text.plot` (`esc`) first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from explorer.node_ids import OUTLIER_ID
from explorer.view.charts.base import DARK_TEXT, HALO, MARGIN
from explorer.view.map_layout import OUTLIER_COLOR
from explorer.view.store.nodes import available_levels, node_name
from explorer.view.text import plot as esc
from explorer.view.text import shorten

if TYPE_CHECKING:
    import pandas as pd


def node_sizes(nodes: pd.DataFrame, colors: dict[str, str], limit: int = 30) -> go.Figure:
    """Largest nodes (of one level) as horizontal bars; customdata carries the node id."""
    top = nodes.nlargest(limit, "size").iloc[::-1]
    fig = go.Figure(
        go.Bar(
            x=top["size"],
            y=[
                esc(f"{n}: {shorten(lbl, 50)}")
                for n, lbl in zip(top["node_id"], top["label"], strict=True)
            ],
            orientation="h",
            marker_color=[colors.get(n, OUTLIER_COLOR) for n in top["node_id"]],
            customdata=top[["node_id"]].to_numpy(),
            hovertemplate="%{y}<br>%{x} papers<extra></extra>",
        )
    )
    fig.update_layout(height=max(300, 22 * len(top)), margin=MARGIN, xaxis_title="papers")
    return fig


def keyword_weights(keywords: list[str], weights: list[float]) -> go.Figure:
    fig = go.Figure(
        go.Bar(x=list(weights)[::-1], y=[esc(k) for k in keywords][::-1], orientation="h")
    )
    fig.update_layout(height=320, margin=MARGIN, xaxis_title="weight")
    return fig


# The hierarchy as a list of bars in tree order, one row per node: every label is horizontal
# text at one size, however small its node (a sunburst's wedges for ICML 2013-2019's 51
# topics were too thin to hold theirs). ROW_PX per row keeps 12-px labels apart. Tick labels
# are right-aligned, so the level shows by style, not indentation: the first level in bold,
# subtopics in italics.
ROW_PX = 22
_STYLE = {0: "<b>{}</b>", 1: "{}", 2: "<i>{}</i>"}


def hierarchy_rows(nodes: pd.DataFrame, *, subtopics: bool = False) -> pd.DataFrame:
    """The nodes in tree order (each area, largest first, then its topics, largest first,
    then their subtopics when asked), with their `depth` below the first level shown."""
    levels = [lv for lv in available_levels(nodes) if subtopics or lv != "subtopic"]
    shown = nodes[nodes["level"].isin(levels)]
    children: dict[str, list] = {}
    for row in shown.sort_values(["size", "node_id"], ascending=[False, True]).itertuples():
        parent = row.parent_id if isinstance(row.parent_id, str) and row.level != levels[0] else ""
        children.setdefault(parent, []).append(row.node_id)
    order: list[tuple[str, int]] = []
    todo = [(n, 0) for n in reversed(children.get("", []))]
    while todo:
        node, depth = todo.pop()
        order.append((node, depth))
        todo.extend((c, depth + 1) for c in reversed(children.get(node, [])))
    rows = shown.set_index("node_id").loc[[n for n, _ in order]].reset_index()
    return rows.assign(depth=[d for _, d in order])


def hierarchy_tree(
    nodes: pd.DataFrame, colors: dict[str, str], *, subtopics: bool = False
) -> go.Figure:
    """The hierarchy as bars sized by papers, in tree order from the top (`hierarchy_rows`);
    a bar's customdata is its node id (a click opens it)."""
    rows = hierarchy_rows(nodes, subtopics=subtopics)
    name = node_name(rows)
    nested = rows["depth"].max() > 0 if len(rows) else False
    labels = [
        (_STYLE[depth] if nested else "{}").format(esc(shorten(name(n), 60)))
        for n, depth in zip(rows["node_id"], rows["depth"], strict=True)
    ]
    fig = go.Figure(
        go.Bar(
            x=rows["size"],
            y=labels,
            orientation="h",
            marker_color=[colors.get(n, OUTLIER_COLOR) for n in rows["node_id"]],
            text=rows["size"],
            textposition="outside",
            cliponaxis=False,
            customdata=rows[["node_id"]].to_numpy(),
            hovertext=[esc(t) for t in rows["long_label"]],
            hovertemplate="%{y}<br>%{x} papers<br>%{hovertext}<extra></extra>",
        )
    )
    fig.update_layout(
        height=60 + ROW_PX * len(rows),
        margin={**MARGIN, "t": 40},
        xaxis={"title": "papers", "side": "top"},
        yaxis={"autorange": "reversed", "automargin": True, "tickfont": {"size": 12}},
        bargap=0.25,
    )
    return fig


def intertopic_map(topics: pd.DataFrame, colors: dict[str, str]) -> go.Figure:
    """Topics as circles sized by papers, placed so distance follows embedding dissimilarity."""
    real = topics[topics["topic_id"] != OUTLIER_ID]
    fig = go.Figure(
        go.Scatter(
            x=real["dist_x"],
            y=real["dist_y"],
            mode="markers+text",
            text=[str(t) for t in real["topic_id"]],
            textfont={"color": DARK_TEXT, "size": 11, "shadow": HALO},
            marker={
                "size": 8 + 40 * np.sqrt(real["size"] / max(real["size"].max(), 1)),
                "color": [colors.get(str(t), OUTLIER_COLOR) for t in real["topic_id"]],
                "opacity": 0.6,
            },
            hovertext=[
                esc(f"{t}: {lbl} ({s} papers)")
                for t, lbl, s in zip(real["topic_id"], real["label"], real["size"], strict=True)
            ],
            hoverinfo="text",
        )
    )
    fig.update_layout(
        height=500,
        margin=MARGIN,
        xaxis={"visible": False},
        yaxis={"visible": False},
    )
    return fig


def similarity_heatmap(similarity: np.ndarray, topics: pd.DataFrame) -> go.Figure:
    # Rows of `similarity` follow the topics in numeric order.
    real = topics[topics["topic_id"] != OUTLIER_ID].sort_values(
        "topic_id", key=lambda ids: ids.astype(int)
    )
    names = [
        esc(f"{t}: {shorten(lbl, 25)}")
        for t, lbl in zip(real["topic_id"], real["label"], strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(z=similarity, x=names, y=names, colorscale="Viridis", zmin=0, zmax=1)
    )
    fig.update_layout(height=600, margin=MARGIN)
    return fig
