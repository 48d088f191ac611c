"""The Trends page's figures: lines over the years, bars across classes, rising and falling
terms, nodes' shares stacked over time. Every untrusted string goes through `text.plot`
(`esc`) first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from explorer.view.charts.base import MARGIN, figure
from explorer.view.map_layout import OUTLIER_COLOR
from explorer.view.text import plot as esc

if TYPE_CHECKING:
    import plotly.graph_objects as go


def _counts_hover(part: pd.DataFrame, name: str) -> dict:
    """Hover that says 'k of n papers' for one series of a trend table."""
    return {
        "customdata": part[["papers", "class_papers"]].to_numpy(),
        "hovertemplate": "%{x}: %{customdata[0]} of %{customdata[1]} papers<extra>"
        + esc(name)
        + "</extra>",
    }


def trend_lines(
    trend: pd.DataFrame, *, series: str, value_col: str = "share", title: str = ""
) -> go.Figure:
    """One line per term/topic over the class values (years), every year present marked."""
    data = [
        {
            "type": "scatter",
            "x": part["value"].map(esc).tolist(),
            "y": part[value_col].to_numpy(),
            "mode": "lines+markers",
            "name": esc(name),
            **_counts_hover(part, name),
        }
        for name, part in trend.groupby(series, sort=False)
    ]
    layout = {
        "height": 420,
        "margin": MARGIN,
        "title": {"text": esc(title)},
        "xaxis": {"type": "category", "title": {"text": "year"}},
        "yaxis": {
            "tickformat": ".0%" if value_col == "share" else "d",
            "title": {"text": "share of papers" if value_col == "share" else "papers"},
        },
    }
    return figure(data, layout)


def class_bars(trend: pd.DataFrame, *, series: str, dimension: str) -> go.Figure:
    """Share of each class's papers that use a term / fall in a topic, grouped by class."""
    data = [
        {
            "type": "bar",
            "x": part["value"].map(esc).tolist(),
            "y": part["share"].to_numpy(),
            "name": esc(name),
            **_counts_hover(part, name),
        }
        for name, part in trend.groupby(series, sort=False)
    ]
    layout = {
        "barmode": "group",
        "height": 400,
        "margin": MARGIN,
        "xaxis": {"title": {"text": dimension}},
        "yaxis": {"tickformat": ".0%", "title": {"text": "share of papers"}},
    }
    return figure(data, layout)


def rising_falling(ranked: pd.DataFrame, n: int = 15) -> go.Figure:
    """The n most rising and n most falling terms as a diverging bar chart of z-scores."""
    picked = pd.concat([ranked.head(n), ranked.tail(n)]).drop_duplicates("term").sort_values("z")
    data = [
        {
            "type": "bar",
            "x": picked["z"].to_numpy(),
            "y": picked["term"].map(esc).tolist(),
            "orientation": "h",
            "marker": {"color": ["#2a9d8f" if z > 0 else "#e76f51" for z in picked["z"]]},
            "hovertemplate": "%{y}: z = %{x:.1f}<extra></extra>",
        }
    ]
    layout = {
        "height": max(350, 18 * len(picked)),
        "margin": MARGIN,
        "xaxis": {"title": {"text": "z-score of the log-odds ratio (right: more in the second)"}},
    }
    return figure(data, layout)


def topic_area(trend: pd.DataFrame, colors: dict[str, str]) -> go.Figure:
    """Areas, topics or subtopics over time: each one's share of the year's papers, stacked."""
    data = []
    for node_id, part in trend.groupby("node_id", sort=False):
        label = part["label"].iloc[0]
        data.append(
            {
                "type": "scatter",
                "x": part["value"].map(esc).tolist(),
                "y": part["share"].to_numpy(),
                "name": esc(label[:40]),
                "stackgroup": "topics",
                "mode": "lines",
                "line": {"width": 0.5, "color": colors.get(str(node_id), OUTLIER_COLOR)},
                "hovertemplate": "%{x}: %{y:.1%}<extra>" + esc(label[:60]) + "</extra>",
            }
        )
    layout = {
        "height": 520,
        "margin": MARGIN,
        "xaxis": {"type": "category", "title": {"text": "year"}},
        "yaxis": {"tickformat": ".0%", "title": {"text": "share of the year's papers"}},
    }
    return figure(data, layout)
