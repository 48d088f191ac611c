"""The Overview's and Topics page's figures: node sizes, a topic's keywords, the hierarchy
sunburst, the intertopic distance map and the similarity heatmap. Every untrusted string
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


def hierarchy_sunburst(nodes: pd.DataFrame, colors: dict[str, str]) -> go.Figure:
    """Areas, topics and subtopics as a sunburst: click a ring to zoom into that branch.
    Without an area level (few topics), topics form the inner ring."""
    has_areas = "area" in available_levels(nodes)
    shown = nodes if has_areas else nodes[nodes["level"] != "area"]
    parent = [
        p if isinstance(p, str) and (has_areas or level != "topic") else ""
        for p, level in zip(shown["parent_id"], shown["level"], strict=True)
    ]
    name = node_name(shown)
    fig = go.Figure(
        go.Sunburst(
            ids=shown["node_id"].tolist(),
            parents=parent,
            labels=[esc(shorten(name(n), 40)) for n in shown["node_id"]],
            values=shown["size"].tolist(),
            branchvalues="total",
            marker={"colors": [colors.get(n, OUTLIER_COLOR) for n in shown["node_id"]]},
            hovertext=[esc(t) for t in shown["long_label"]],
            hovertemplate="%{label}<br>%{value} papers<br>%{hovertext}<extra></extra>",
            maxdepth=2,
        )
    )
    fig.update_layout(height=620, margin=MARGIN)
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
