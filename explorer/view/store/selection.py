"""A box or lasso selection on the map: the papers it holds, by paper id from the points or
by region over the density map (its cost bounded whatever the browser sent), and their
topic mix.

Pure numpy, no Streamlit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


def selection_to_ids(points: list[dict], visible_ids: set[str] | None = None) -> list[str]:
    """Paper ids from a plotly selection event's points (paper_id travels in customdata).

    Points without a paper id (labels, annotations) are ignored; with `visible_ids`,
    ids no longer shown (the filters changed since the selection) are dropped.
    """
    ids: list[str] = []
    for point in points or []:
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)):
            custom = custom[0] if custom else None
        if isinstance(custom, str) and (visible_ids is None or custom in visible_ids):
            ids.append(custom)
    return list(dict.fromkeys(ids))


# A selection is visitor input: its size must not set its cost. At most MAX_SHAPES boxes and
# lassos count; a lasso is decimated to MAX_LASSO_VERTICES (a drawn lasso has one vertex per
# mouse move, far more than its shape needs), and further while the edge-point tests it
# would need exceed MAX_LASSO_WORK (only a polygon that zigzags across every point does).
MAX_SHAPES = 8
MAX_LASSO_VERTICES = 512
MAX_LASSO_WORK = 20_000_000


def in_region(x: np.ndarray, y: np.ndarray, boxes: list[dict], lassos: list[dict]) -> np.ndarray:
    """Which points (x, y) lie in any of a plotly selection's boxes ({"x": [x0, x1], "y":
    [y0, y1]}) or lasso polygons ({"x": [...], "y": [...]}; even-odd rule). Malformed shapes
    are ignored; the cost is bounded whatever the browser sent (MAX_* above)."""
    inside = np.zeros(len(x), dtype=bool)
    for box in _shapes(boxes):
        if len(box["x"]) < 2 or len(box["y"]) < 2:
            continue  # the browser sends a box without corners for some drags
        (bx0, bx1), (by0, by1) = np.sort(box["x"][:2]), np.sort(box["y"][:2])
        inside |= (x >= bx0) & (x <= bx1) & (y >= by0) & (y <= by1)
    for lasso in _shapes(lassos):
        px, py = lasso["x"], lasso["y"]
        if len(px) < 3 or len(px) != len(py):
            continue
        near = (x >= px.min()) & (x <= px.max()) & (y >= py.min()) & (y <= py.max())
        cand = np.flatnonzero(near & ~inside)
        inside[cand[in_polygon(x[cand], y[cand], px, py)]] = True
    return inside


def _shapes(shapes: object) -> list[dict[str, np.ndarray]]:
    """The first MAX_SHAPES well-formed shapes, as finite float arrays."""
    out = []
    for shape in (shapes if isinstance(shapes, list) else [])[:MAX_SHAPES]:
        try:
            xs = np.asarray(shape["x"], dtype=float)
            ys = np.asarray(shape["y"], dtype=float)
        except (TypeError, ValueError, KeyError, IndexError):
            continue
        if xs.ndim == 1 and ys.ndim == 1 and np.isfinite(xs).all() and np.isfinite(ys).all():
            out.append({"x": xs, "y": ys})
    return out


def in_polygon(xs: np.ndarray, ys: np.ndarray, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon, vectorised: points sorted by y once, so each edge tests
    only the points whose y it spans (a slice), not every point."""
    order = np.argsort(ys, kind="stable")
    sy, sx = ys[order], xs[order]
    px, py = bounded_polygon(px, py, sy)
    starts, ends, (xa, ya, xb, yb) = _edge_spans(px, py, sy)
    odd = np.zeros(len(xs), dtype=bool)
    for i in np.flatnonzero(ends > starts):
        seg = slice(starts[i], ends[i])
        at = xa[i] + (sy[seg] - ya[i]) * (xb[i] - xa[i]) / (yb[i] - ya[i])
        odd[seg] ^= sx[seg] < at
    out = np.zeros(len(xs), dtype=bool)
    out[order] = odd
    return out


def _edge_spans(px: np.ndarray, py: np.ndarray, sorted_y: np.ndarray):
    """Per edge (i-1, i): the slice of sorted_y it crosses (min <= y < max, the even-odd
    rule's half-open test), and its end points."""
    xa, ya = np.roll(px, 1), np.roll(py, 1)
    lo, hi = np.minimum(ya, py), np.maximum(ya, py)
    starts = np.searchsorted(sorted_y, lo, side="left")
    ends = np.searchsorted(sorted_y, hi, side="left")
    return starts, ends, (xa, ya, px, py)


def bounded_polygon(
    px: np.ndarray, py: np.ndarray, sorted_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The polygon decimated (every k-th vertex) to at most MAX_LASSO_VERTICES, and further
    until its edges span at most MAX_LASSO_WORK point tests over the points' sorted ys."""
    step = max(1, -(-len(px) // MAX_LASSO_VERTICES))
    while True:
        qx, qy = px[::step], py[::step]
        starts, ends, _ = _edge_spans(qx, qy, sorted_y)
        if int((ends - starts).sum()) <= MAX_LASSO_WORK or len(qx) <= 3:
            return qx, qy
        step *= 2


def topic_mix(papers: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """How many of `papers` fall in each topic, largest first."""
    counts = papers["topic_id"].value_counts().rename_axis("topic_id").reset_index(name="papers")
    mix = counts.merge(topics[["topic_id", "label"]], on="topic_id", how="left")
    mix["share"] = mix["papers"] / max(len(papers), 1)
    return mix.sort_values(["papers", "topic_id"], ascending=[False, True], ignore_index=True)
