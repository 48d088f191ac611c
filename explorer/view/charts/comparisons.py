"""The Compare page's figures: the nodes whose share moved most between two years, and two
corpora's matched topics as a Sankey. Every untrusted string goes through `text.plot`
(`esc`) first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from explorer.view.charts.base import DARK_TEXT, MARGIN
from explorer.view.map_layout import OUTLIER_COLOR
from explorer.view.text import plot as esc
from explorer.view.text import shorten

if TYPE_CHECKING:
    import pandas as pd


def shift_bars(table: pd.DataFrame, name, colors: dict[str, str], limit: int = 15) -> go.Figure:
    """The nodes whose share of the papers moved most between two years (percentage points);
    `table` is `compare.year_shares`, `name` names a node id."""
    top = table.head(limit).iloc[::-1]
    fig = go.Figure(
        go.Bar(
            x=top["shift"] * 100,
            y=[esc(shorten(name(n), 50)) for n in top["node_id"]],
            orientation="h",
            marker_color=[colors.get(n, OUTLIER_COLOR) for n in top["node_id"]],
            customdata=top[["share_a", "share_b"]].to_numpy() * 100,
            hovertemplate="%{y}<br>%{customdata[0]:.1f}% → %{customdata[1]:.1f}%<extra></extra>",
        )
    )
    fig.update_layout(
        height=max(300, 26 * len(top) + 80),
        margin=MARGIN,
        xaxis_title="change in share of the year's papers (percentage points)",
    )
    return fig


# The Sankey's bands pale enough for its labels (DARK_TEXT) to read on them.
SANKEY_BAND = "rgba(140, 140, 140, 0.25)"


def topic_sankey(
    matches: pd.DataFrame,
    corpus_a: str,
    corpus_b: str,
    colors_a: dict[str, str],
    colors_b: dict[str, str],
) -> go.Figure:
    """Matched topics of two corpora as a Sankey: A's topics left, B's right, one band per
    link (its width the smaller topic's size), so splits and merges show as forks. Each
    topic keeps its corpus's colour (`colors_a`, `colors_b`), as on the other pages; plotly's
    own would colour one topic differently on each side."""
    left = list(dict.fromkeys(matches["a"]))
    right = list(dict.fromkeys(matches["b"]))
    label_a = dict(zip(matches["a"], matches["label_a"], strict=True))
    label_b = dict(zip(matches["b"], matches["label_b"], strict=True))
    labels = [esc(f"{t}: {shorten(label_a[t], 34)}") for t in left]
    labels += [esc(f"{t}: {shorten(label_b[t], 34)}") for t in right]
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": labels,
                "pad": 6,
                "thickness": 12,
                "color": [colors_a.get(str(t), OUTLIER_COLOR) for t in left]
                + [colors_b.get(str(t), OUTLIER_COLOR) for t in right],
            },
            link={
                "source": [left.index(a) for a in matches["a"]],
                "target": [len(left) + right.index(b) for b in matches["b"]],
                "value": np.minimum(matches["size_a"], matches["size_b"]).tolist(),
                "customdata": matches["cosine"].round(3).tolist(),
                "hovertemplate": "cosine %{customdata}<extra></extra>",
                "color": SANKEY_BAND,
            },
            # Plotly's default draws the labels light with a halo, unreadable on the bands.
            textfont={"color": DARK_TEXT, "size": 12, "shadow": "none"},
        )
    )
    fig.update_layout(
        height=max(400, 18 * max(len(left), len(right)) + 80),
        margin=MARGIN,
        annotations=[
            {"x": x, "y": 1.0, "yref": "paper", "xref": "paper", "yanchor": "bottom",
             "text": esc(name), "showarrow": False, "xanchor": anchor}
            for x, name, anchor in ((0, corpus_a, "left"), (1, corpus_b, "right"))
        ],
    )  # fmt: skip
    return fig
