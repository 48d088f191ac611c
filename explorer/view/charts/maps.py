"""The Topic map's figures: papers as WebGL points coloured by node, their density above
MAX_MAP_POINTS, node labels placed without overlaps, and a paper's small map of its topic.
Every untrusted string goes through `text.plot` (`esc`) first."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.node_ids import OUTLIER_ID, level_of
from explorer.view.charts.base import MARGIN, figure
from explorer.view.map_layout import (
    FONT,
    OUTLIER_COLOR,
    Label,
    candidate_boxes,
    moved,
    place_boxes,
)
from explorer.view.store.nodes import available_levels, node_name, nodes_at
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
    alone reports none); `store.selection.in_region` then finds the papers inside it."""
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
