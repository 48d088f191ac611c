"""DataFrame in, plotly figure out. Every untrusted string goes through `text.plot` first:
plotly renders a subset of HTML in hover text, labels and ticks, and expands ``%{..}``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.artifacts import OUTLIER_ID, level_of
from explorer.view.map_layout import (
    FONT,
    OUTLIER_COLOR,
    Label,
    candidate_boxes,
    moved,
    place_boxes,
)
from explorer.view.store import available_levels, node_name, nodes_at
from explorer.view.text import plot as esc
from explorer.view.text import shorten

# WebGL keeps tens of thousands of points interactive; above this many papers the map is a
# density raster (`density_map`), and a selection's papers are drawn as points, up to this.
MAX_MAP_POINTS = 50_000
# Points on a paper's small topic map: its topic's papers, a sample above this.
MINI_MAP_POINTS = 5_000
# Bins per axis of the density raster: 200 x 200 counts are ~0.3 MB in the page, whatever
# the number of papers.
DENSITY_BINS = 200
# Characters of a title shown in a hover.
HOVER_CHARS = 90
MARGIN = {"l": 0, "r": 0, "t": 10, "b": 0}
# Text drawn over coloured marks (topic bubbles, pale Sankey bands): dark, with a white
# halo where the mark under it may be dark too, so it reads on any palette colour.
DARK_TEXT = "#262730"
HALO = "0 0 2px #ffffff, 0 0 3px #ffffff"


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
    if "stability" in papers and papers["stability"].notna().any():  # runs that scored it
        text = [
            f"{h}<br>topic stability {st:.2f}" if st == st else h
            for h, st in zip(text, papers["stability"], strict=True)
        ]
    return pd.Series(text, index=papers.index, dtype=object)


@dataclass(frozen=True)
class MapOptions:
    """How the map is drawn, whatever papers it shows: `extent` the axis ranges (the whole
    run's, so filtering does not move the map), `colors` each node id's colour, `labels`
    the `map_labels` to draw, `height` in pixels. Shared by the point and density maps."""

    extent: tuple[tuple[float, float], tuple[float, float]]
    colors: dict[str, str] = field(default_factory=dict)
    labels: Sequence[dict] = ()
    height: int = 640


def _map_layout(options: MapOptions) -> dict:
    """The map's layout, the same for points and density: no axes, no legend, lasso."""
    (x0, x1), (y0, y1) = options.extent
    return {
        "height": options.height,
        "margin": MARGIN,
        "showlegend": False,
        "xaxis": {"visible": False, "range": [x0, x1]},
        "yaxis": {"visible": False, "range": [y0, y1]},
        "dragmode": "lasso",
        "plot_bgcolor": "white",
        "annotations": list(options.labels),
    }


def topic_map(
    papers: pd.DataFrame,
    groups: pd.Series,
    nodes: pd.DataFrame,
    options: MapOptions,
    *,
    hover: pd.Series | None = None,
    highlight: pd.DataFrame | None = None,
) -> go.Figure:
    """The 2-D map at one level: WebGL points coloured by node (areas as hues, their topics
    as shades), paper_id in customdata, node labels placed without overlaps, no legend.

    `groups` is each paper's node id at the map's level (same index as `papers`); `hover`
    is `map_hover` of a frame containing these papers, if at hand; `highlight` papers
    (search matches) are ringed.
    """
    hover = (map_hover(papers) if hover is None else hover.loc[papers.index]).to_numpy()
    name = node_name(nodes)
    group = groups.loc[papers.index].astype(str).to_numpy()
    names = {g: esc(name(g)) for g in set(group.tolist())}
    color = np.array([options.colors.get(g, OUTLIER_COLOR) for g in group], dtype=object)
    text = np.array([f"{h}<br>{names[g]}" for h, g in zip(hover, group, strict=True)], dtype=object)
    outlier = group == OUTLIER_ID
    size = 5 if len(papers) < 5000 else 3
    data = [
        _points(papers, rows, color, text, size=size)
        for rows in (np.flatnonzero(outlier), np.flatnonzero(~outlier))
        if len(rows)
    ]
    if highlight is not None and len(highlight):
        data.append(_search_rings(highlight))
    return figure(data, _map_layout(options))


def density_map(papers: pd.DataFrame, options: MapOptions) -> go.Figure:
    """The map of more papers than points can show: paper counts in DENSITY_BINS x
    DENSITY_BINS bins (log colour), the node labels over them, and a selectable layer of
    the non-empty bins' centres, invisible, so box and lasso report a selection (a heatmap
    alone reports none); `store.in_region` then finds the papers inside it."""
    (x0, x1), (y0, y1) = options.extent
    counts, xs, ys = np.histogram2d(
        papers["x"].to_numpy(),
        papers["y"].to_numpy(),
        bins=DENSITY_BINS,
        range=[[x0, x1], [y0, y1]],
    )
    cx, cy = (xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2
    filled = np.argwhere(counts > 0)
    z = np.where(counts > 0, np.log10(np.maximum(counts, 1)) + 1, np.nan).T
    data = [
        {
            "type": "heatmap", "x": cx, "y": cy, "z": z, "customdata": counts.T,
            "colorscale": "Blues", "showscale": False, "zmin": 0,
            "hovertemplate": "%{customdata:,} papers<extra></extra>",
        },
        {
            "type": "scattergl", "x": cx[filled[:, 0]], "y": cy[filled[:, 1]], "mode": "markers",
            "marker": {"size": 4, "opacity": 0}, "hoverinfo": "skip", "name": "bins",
        },
    ]  # fmt: skip
    return figure(data, _map_layout(options))


def _points(
    papers: pd.DataFrame, rows: np.ndarray, color: np.ndarray, text: np.ndarray, *, size: int
) -> dict:
    """One scattergl trace for the given rows, with each point's colour and hover text."""
    ids = papers["paper_id"].to_numpy(dtype=object)[rows]
    return {
        "type": "scattergl",
        "x": papers["x"].to_numpy()[rows],
        "y": papers["y"].to_numpy()[rows],
        "mode": "markers",
        "marker": {"size": size, "color": color[rows].tolist(), "opacity": 0.8},
        "customdata": ids.reshape(-1, 1),
        "hovertext": text[rows].tolist(),
        "hovertemplate": "%{hovertext}<extra></extra>",
    }


def _search_rings(highlight: pd.DataFrame) -> dict:
    return {
        "type": "scattergl",
        "x": highlight["x"].to_numpy(),
        "y": highlight["y"].to_numpy(),
        "mode": "markers",
        "name": "Search matches",
        "marker": {"size": 11, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "#111"}},
        "customdata": highlight[["paper_id"]].to_numpy(dtype=object),
        "hovertext": [f"<b>{esc(shorten(t, HOVER_CHARS))}</b>" for t in highlight["title"]],
        "hovertemplate": "%{hovertext}<extra>match</extra>",
    }


def map_extent(papers: pd.DataFrame) -> tuple[tuple[float, float], tuple[float, float]]:
    """Axis ranges that hold every paper of the run, with a small margin."""
    out = []
    for axis in ("x", "y"):
        low, high = float(papers[axis].min()), float(papers[axis].max())
        # Relative to the values too, so a single paper far from 0 still gets a width.
        pad = max(high - low, abs(high) * 1e-6, 1e-6) * 0.03
        out.append((low - pad, high + pad))
    return out[0], out[1]


@dataclass(frozen=True)
class LabelLayout:
    """Every label the map at one level may show, in priority order (areas first, then
    larger nodes), each with the node ids whose presence on the map calls for it and its
    boxes at every try: computed once per run and level, placed per view."""

    labels: list[Label]
    needs: list[frozenset[str]]
    boxes: np.ndarray  # map_layout.candidate_boxes
    extent: tuple[tuple[float, float], tuple[float, float]]


def label_layout(nodes: pd.DataFrame, level: str, extent) -> LabelLayout:
    """The `LabelLayout` of the map at `level` over the axis ranges `extent`."""
    visible = nodes_at(nodes, level)
    labels: list[Label] = []
    needs: list[frozenset[str]] = []
    if level != "area" and "area" in available_levels(nodes):
        area = _area_of(nodes)
        members: dict[str | None, set[str]] = {}
        for node in visible["node_id"]:
            members.setdefault(area(node), set()).add(node)
        for label, node in _label_candidates(nodes[nodes["level"] == "area"], "area"):
            labels.append(label)
            needs.append(frozenset(members.get(node, ())))
    for label, node in _label_candidates(visible, level):
        labels.append(label)
        needs.append(frozenset({node}))
    boxes = candidate_boxes(labels, extent[0], extent[1])
    return LabelLayout(labels, needs, boxes, extent)


def map_labels(layout: LabelLayout, shown: Iterable[str]) -> list[dict]:
    """Annotations for the labels that fit among those the `shown` nodes (ids at the
    layout's level, with papers on the map) call for: areas first (large), then finer."""
    shown = set(shown)
    keep = [i for i, need in enumerate(layout.needs) if not need.isdisjoint(shown)]
    (x0, x1), (y0, y1) = layout.extent
    if not keep or x1 <= x0 or y1 <= y0:
        return []  # nothing to label, or no plot to place labels in
    placed = [
        moved(layout.labels[keep[i]], box, layout.extent[0], layout.extent[1])
        for i, box in place_boxes(layout.boxes[keep])
    ]
    return [
        {
            "x": label.x, "y": label.y, "text": esc(label.text), "showarrow": False,
            "font": {"size": FONT[label.level], "color": "#111" if label.level == "area" else "#333"},
            "bgcolor": "rgba(255,255,255,0.75)", "borderpad": 2,
        }
        for label in placed
    ]  # fmt: skip


def _area_of(nodes: pd.DataFrame):
    """node id -> its area id (a topic's parent, a subtopic's topic's parent)."""
    parent = dict(zip(nodes["node_id"], nodes["parent_id"], strict=True))

    def area(node: str) -> str | None:
        up = parent.get(node)
        if not isinstance(up, str):  # an area (no parent)
            return None
        return up if level_of(up) == "area" else parent.get(up)

    return area


def _label_candidates(frame: pd.DataFrame, level: str) -> list[tuple[Label, str]]:
    limit = 28 if level == "area" else 36
    ordered = frame.sort_values(["size", "node_id"], ascending=[False, True])
    return [
        (Label(float(x), float(y), shorten(text, limit), level), str(node))
        for x, y, text, node in zip(
            ordered["map_x"], ordered["map_y"], ordered["label"], ordered["node_id"], strict=True
        )
    ]


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


def paper_in_topic(papers: pd.DataFrame, paper_id: str, colors: dict[str, str]) -> go.Figure:
    """A small map of one topic's papers (a fixed sample of MINI_MAP_POINTS above that) with
    the given paper highlighted."""
    this = papers[papers["paper_id"] == paper_id]
    others = papers[papers["paper_id"] != paper_id]
    if len(others) > MINI_MAP_POINTS:
        others = others.sample(MINI_MAP_POINTS, random_state=0)
    topic = str(this["topic_id"].iloc[0]) if len(this) else OUTLIER_ID
    fig = go.Figure(
        [
            go.Scattergl(
                x=others["x"], y=others["y"], mode="markers", name="same topic",
                marker={"size": 5, "color": colors.get(str(topic), OUTLIER_COLOR), "opacity": 0.5},
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


def topic_sankey(matches: pd.DataFrame, corpus_a: str, corpus_b: str) -> go.Figure:
    """Matched topics of two corpora as a Sankey: A's topics left, B's right, one band per
    link (its width the smaller topic's size), so splits and merges show as forks."""
    left = list(dict.fromkeys(matches["a"]))
    right = list(dict.fromkeys(matches["b"]))
    label_a = dict(zip(matches["a"], matches["label_a"], strict=True))
    label_b = dict(zip(matches["b"], matches["label_b"], strict=True))
    labels = [esc(f"{t}: {shorten(label_a[t], 34)}") for t in left]
    labels += [esc(f"{t}: {shorten(label_b[t], 34)}") for t in right]
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={"label": labels, "pad": 6, "thickness": 12},
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
        margin={**MARGIN, "t": 30},
        annotations=[
            {"x": x, "y": 1.0, "yref": "paper", "xref": "paper", "yanchor": "bottom",
             "text": esc(name), "showarrow": False, "xanchor": anchor}
            for x, name, anchor in ((0, corpus_a, "left"), (1, corpus_b, "right"))
        ],
    )  # fmt: skip
    return fig
