"""DataFrame in, plotly figure out. Every untrusted string goes through `text.plot` first:
plotly renders a subset of HTML in hover text, labels and ticks, and expands ``%{..}``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from explorer.artifacts import OUTLIER
from explorer.view.text import plot as esc
from explorer.view.text import shorten

OUTLIER_COLOR = "#b8b8b8"
_PALETTE = qualitative.Dark24 + qualitative.Light24 + qualitative.Alphabet
# WebGL keeps tens of thousands of points interactive; above this, the page samples.
MAX_MAP_POINTS = 50_000
# More centroid labels than this overlap into an unreadable blot at conference scale;
# the legend and hover name every topic anyway.
MAX_MAP_LABELS = 20
# Characters of a title shown in a hover.
HOVER_CHARS = 90
MARGIN = {"l": 0, "r": 0, "t": 10, "b": 0}


def topic_color(topic_id: int) -> str:
    """A colour per topic id that never changes with filtering."""
    return OUTLIER_COLOR if topic_id == OUTLIER else _PALETTE[int(topic_id) % len(_PALETTE)]


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace/layout dicts, skipping plotly's per-property validation.

    Validation re-checks every value of every trace and dominated the map page's run
    (0.54 s of it for 3,000 papers in 55 traces; 0.07 s without). The dicts are built
    in this module from fixed keys, and the chart tests render every one of them.
    """
    return go.Figure(data=data, layout=layout, _validate=False)


def map_hover(papers: pd.DataFrame) -> pd.Series:
    """Each paper's hover text on the map (title; venue, year, status), HTML-escaped.

    Independent of the filters, so the viewer computes it once per run and slices it:
    building 50,000 of these on every rerun cost 0.7 s. The topic's label is added
    per trace by the trace's hovertemplate, not repeated in every point's text.
    """
    years = papers["year"].astype("string").fillna("")
    text = [
        f"<b>{esc(shorten(t, HOVER_CHARS))}</b><br>{esc(v)} {esc(y)} {esc(s)}"
        for t, v, y, s in zip(
            papers["title"], papers["venue"], years, papers["status"], strict=True
        )
    ]
    return pd.Series(text, index=papers.index, dtype=object)


def topic_map(
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    *,
    show_labels: bool = True,
    height: int = 640,
    hover: pd.Series | None = None,
    highlight: pd.DataFrame | None = None,
) -> go.Figure:
    """The 2-D map: one WebGL trace per topic (legend toggles it), paper_id in customdata.

    `hover` is `map_hover` of a frame containing these papers (same index), if at hand;
    `highlight` papers (search matches) are ringed on top of their topic's colour.
    """
    labels = dict(zip(topics["topic_id"], topics["label"], strict=True))
    hover = (map_hover(papers) if hover is None else hover.loc[papers.index]).to_numpy()
    # Column arrays once, then numpy indexing per topic: slicing the whole frame per
    # topic copied every (Arrow-backed) column and cost more than the figure itself.
    x, y = papers["x"].to_numpy(), papers["y"].to_numpy()
    ids = papers["paper_id"].to_numpy(dtype=object)
    size = 5 if len(papers) < 5000 else 3
    data = []
    groups = papers.groupby("topic_id", sort=False).indices
    for topic in sorted(groups, key=lambda t: (t == OUTLIER, t)):
        rows = groups[topic]
        label = labels.get(topic, "") if topic != OUTLIER else "Outlier"
        data.append(
            {
                "type": "scattergl",
                "x": x[rows],
                "y": y[rows],
                "mode": "markers",
                "name": esc(f"{topic}: {label}" if topic != OUTLIER else "Outliers"),
                "marker": {"size": size, "color": topic_color(topic), "opacity": 0.8},
                "customdata": ids[rows].reshape(-1, 1),
                "hovertext": hover[rows].tolist(),
                "hovertemplate": "%{hovertext}<br>" + esc(label) + "<extra></extra>",
            }
        )
    if highlight is not None and len(highlight):
        data.append(
            {
                "type": "scattergl",
                "x": highlight["x"].to_numpy(),
                "y": highlight["y"].to_numpy(),
                "mode": "markers",
                "name": "Search matches",
                "marker": {
                    "size": 11,
                    "color": "rgba(0,0,0,0)",
                    "line": {"width": 2, "color": "#111"},
                },
                "customdata": highlight[["paper_id"]].to_numpy(dtype=object),
                "hovertext": [f"<b>{esc(shorten(t, HOVER_CHARS))}</b>" for t in highlight["title"]],
                "hovertemplate": "%{hovertext}<extra>match</extra>",
            }
        )
    annotations = []
    if show_labels:
        shown = topics[(topics["topic_id"] != OUTLIER) & topics["topic_id"].isin(groups)]
        for row in shown.nlargest(MAX_MAP_LABELS, "size").itertuples():
            annotations.append(
                {
                    "x": row.map_x, "y": row.map_y, "text": esc(shorten(row.label, 40)),
                    "showarrow": False, "font": {"size": 11, "color": "#222"},
                    "bgcolor": "rgba(255,255,255,0.7)",
                }
            )  # fmt: skip
    layout = {
        "height": height,
        "margin": MARGIN,
        "xaxis": {"visible": False},
        "yaxis": {"visible": False},
        "dragmode": "lasso",
        "legend": {"itemsizing": "constant", "font": {"size": 10}},
        "plot_bgcolor": "white",
        "annotations": annotations,
    }
    return figure(data, layout)


def topic_sizes(topics: pd.DataFrame, limit: int = 30) -> go.Figure:
    """Largest topics as horizontal bars; customdata carries the topic id for click-through."""
    real = topics[topics["topic_id"] != OUTLIER].nlargest(limit, "size").iloc[::-1]
    fig = go.Figure(
        go.Bar(
            x=real["size"],
            y=[
                esc(f"{t}: {shorten(lbl, 50)}")
                for t, lbl in zip(real["topic_id"], real["label"], strict=True)
            ],
            orientation="h",
            marker_color=[topic_color(t) for t in real["topic_id"]],
            customdata=real[["topic_id"]].to_numpy(),
            hovertemplate="%{y}<br>%{x} papers<extra></extra>",
        )
    )
    fig.update_layout(
        height=max(300, 22 * len(real)),
        margin=MARGIN,
        xaxis_title="papers",
    )
    return fig


def keyword_weights(keywords: list[str], weights: list[float]) -> go.Figure:
    fig = go.Figure(
        go.Bar(x=list(weights)[::-1], y=[esc(k) for k in keywords][::-1], orientation="h")
    )
    fig.update_layout(height=320, margin=MARGIN, xaxis_title="weight")
    return fig


def hierarchy_sunburst(hierarchy: pd.DataFrame, topics: pd.DataFrame) -> go.Figure:
    """The merge tree as a sunburst: click a ring to zoom into that branch."""
    real = topics[topics["topic_id"] != OUTLIER]
    sizes = dict(zip(real["topic_id"], real["size"], strict=True))
    ids, parents, names, values = [], [], [], []
    parent_of = {}
    for row in hierarchy.itertuples():
        parent_of[int(row.child_left_id)] = int(row.parent_id)
        parent_of[int(row.child_right_id)] = int(row.parent_id)
    for row in hierarchy.itertuples():
        node = int(row.parent_id)
        ids.append(f"n{node}")
        parents.append(f"n{parent_of[node]}" if node in parent_of else "")
        names.append(esc(shorten(row.parent_label, 30)))
        values.append(int(sum(sizes.get(t, 0) for t in row.topics)))
    for row in real.itertuples():
        ids.append(f"n{row.topic_id}")
        parents.append(f"n{parent_of[row.topic_id]}" if row.topic_id in parent_of else "")
        names.append(esc(shorten(f"{row.topic_id}: {row.label}", 30)))
        values.append(int(row.size))
    fig = go.Figure(
        go.Sunburst(ids=ids, parents=parents, labels=names, values=values, branchvalues="total")
    )
    fig.update_layout(height=600, margin=MARGIN)
    return fig


def intertopic_map(topics: pd.DataFrame) -> go.Figure:
    """Topics as circles sized by papers, placed so distance follows embedding dissimilarity."""
    real = topics[topics["topic_id"] != OUTLIER]
    fig = go.Figure(
        go.Scatter(
            x=real["dist_x"],
            y=real["dist_y"],
            mode="markers+text",
            text=[str(t) for t in real["topic_id"]],
            marker={
                "size": 8 + 40 * np.sqrt(real["size"] / max(real["size"].max(), 1)),
                "color": [topic_color(t) for t in real["topic_id"]],
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
    real = topics[topics["topic_id"] != OUTLIER].sort_values("topic_id")
    names = [
        esc(f"{t}: {shorten(lbl, 25)}")
        for t, lbl in zip(real["topic_id"], real["label"], strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(z=similarity, x=names, y=names, colorscale="Viridis", zmin=0, zmax=1)
    )
    fig.update_layout(height=600, margin=MARGIN)
    return fig


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
        "margin": {"l": 0, "r": 0, "t": 30, "b": 0},
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


def topic_area(trend: pd.DataFrame) -> go.Figure:
    """Topics over time: each topic's share of the year's papers, stacked."""
    data = []
    for topic_id, part in trend.groupby("topic_id", sort=True):
        label = part["label"].iloc[0]
        data.append(
            {
                "type": "scatter",
                "x": part["value"].map(esc).tolist(),
                "y": part["share"].to_numpy(),
                "name": esc(label[:40]),
                "stackgroup": "topics",
                "mode": "lines",
                "line": {"width": 0.5, "color": topic_color(int(topic_id))},
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


def paper_in_topic(papers: pd.DataFrame, paper_id: str) -> go.Figure:
    """A small map of one topic's papers with the given paper highlighted."""
    this = papers[papers["paper_id"] == paper_id]
    others = papers[papers["paper_id"] != paper_id]
    topic = int(this["topic_id"].iloc[0]) if len(this) else OUTLIER
    fig = go.Figure(
        [
            go.Scattergl(
                x=others["x"], y=others["y"], mode="markers", name="same topic",
                marker={"size": 5, "color": topic_color(topic), "opacity": 0.5},
                hovertext=[esc(shorten(t, HOVER_CHARS)) for t in others["title"]], hoverinfo="text",
            ),
            go.Scatter(
                x=this["x"], y=this["y"], mode="markers", name="this paper",
                marker={"size": 14, "color": "black", "symbol": "star"},
                hovertext=[esc(shorten(t, HOVER_CHARS)) for t in this["title"]], hoverinfo="text",
            ),
        ]
    )  # fmt: skip
    fig.update_layout(
        height=300,
        margin=MARGIN,
        xaxis={"visible": False},
        yaxis={"visible": False},
        showlegend=False,
    )
    return fig
