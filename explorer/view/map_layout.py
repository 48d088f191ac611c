"""What the map needs besides points: colours by area and label boxes that never overlap.

Colours: each area gets a hue; its topics are shades of it (lightness spread within the
area), and subtopics vary their topic's shade slightly, so related regions look related.

Labels: placed greedily in screen space at the default zoom, largest nodes first, area
labels (large) before finer ones (small), each at its centre or nudged by up to its own
size (an area label by up to twice that, so close areas are all named). A label whose box
would overlap a placed one at every try is left out; as many labels are shown as fit. The
axis ranges are fixed by the caller, so data and pixel coordinates map exactly (for the
assumed plot size).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.node_ids import OUTLIER_ID, id_order, subtopic_index

OUTLIER_COLOR = "#b8b8b8"
HIDDEN_COLOR = "#dedede"  # nodes a curator hid: lighter than outliers, still on the map
# The plot size the labels are fitted to: a 1400-px-wide window with the sidebar open
# leaves about 1,000 px for the map; fitting to 900 keeps a margin for narrower ones.
ASSUMED_WIDTH, ASSUMED_HEIGHT = 900, 640
FONT = {"area": 15, "topic": 11, "subtopic": 10}
CHAR_WIDTH = 0.58  # average glyph width of the default sans-serif font, in font sizes
LINE_HEIGHT = 1.35
PAD = 3  # px around each label's text (the annotation's box padding)


def _hex(hue: float, lightness: float, saturation: float) -> str:
    r, g, b = colorsys.hls_to_rgb(hue % 1.0, min(max(lightness, 0.2), 0.8), saturation)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def node_colors(nodes: pd.DataFrame) -> dict[str, str]:
    """A colour per node id (and OUTLIER_ID), stable for a run whatever is filtered."""
    areas = nodes[nodes["level"] == "area"].sort_values("node_id", key=_numeric)
    hue = {a: i / max(len(areas), 1) for i, a in enumerate(areas["node_id"])}
    colors = {a: _hex(hue[a], 0.45, 0.7) for a in hue}
    topics = nodes[nodes["level"] == "topic"].sort_values("node_id", key=_numeric)
    for area, group in topics.groupby("parent_id", sort=True):
        n = len(group)
        for i, topic in enumerate(group["node_id"]):
            shift = (i % 2) * 0.02  # neighbours in a large area also differ a little in hue
            colors[topic] = _hex(hue.get(area, 0.0) + shift, 0.32 + 0.36 * i / max(n - 1, 1), 0.65)
    subtopics = nodes[nodes["level"] == "subtopic"]
    for sub, parent in zip(subtopics["node_id"], subtopics["parent_id"], strict=True):
        index = subtopic_index(sub)
        base = colors.get(parent, OUTLIER_COLOR)
        colors[sub] = _shade(base, 0.06 * ((index % 3) - 1))
    colors[OUTLIER_ID] = OUTLIER_COLOR
    return colors


def _shade(color: str, delta: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    return _hex(h, lightness + delta, s)


def _numeric(ids: pd.Series) -> pd.Series:
    return ids.map(id_order)


@dataclass(frozen=True)
class Label:
    """A label to draw: where (data coordinates), what, and at which size."""

    x: float
    y: float
    text: str
    level: str


def moved(
    label: Label,
    box: np.ndarray,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    width: int = ASSUMED_WIDTH,
    height: int = ASSUMED_HEIGHT,
) -> Label:
    """`label` placed at the centre of `box` (pixels), in data coordinates."""
    x = x_range[0] + (box[0] + box[2]) / 2 / width * (x_range[1] - x_range[0])
    y = y_range[1] - (box[1] + box[3]) / 2 / height * (y_range[1] - y_range[0])
    return Label(float(x), float(y), label.text, label.level)


# The tries per label, in units of (half its width, its height), screen y pointing down:
# at its point, above, below, left, right, then the four diagonals.
_NUDGES = np.array(
    [(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (-1, 1), (1, -1), (1, 1)], dtype=float
)
# Tried by area labels only, after the first ring: two areas whose centres lie close (ICML
# 2013-2019 cut into 10 areas, 2026-12-07) must both be named; a finer label that does not
# fit near its centre is left out instead of drifting away from its papers.
_FAR = np.array([(0, -2), (0, 2), (-2, 0), (2, 0), (-2, -2), (-2, 2), (2, -2), (2, 2)], dtype=float)
_TRIES = np.vstack([_NUDGES, _FAR])


def candidate_boxes(
    candidates: list[Label],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    width: int = ASSUMED_WIDTH,
    height: int = ASSUMED_HEIGHT,
) -> np.ndarray:
    """Every candidate's box at every try, moved inside the plot where it would cross an
    edge: (candidates, tries, [left, top, right, bottom]) in pixels. Depends only on the
    run, the level and the plot, so the viewer computes it once and places from it."""
    if not candidates:
        return np.empty((0, len(_TRIES), 4))
    x = np.array([c.x for c in candidates], dtype=float)
    y = np.array([c.y for c in candidates], dtype=float)
    font = np.array([FONT[c.level] for c in candidates], dtype=float)
    chars = np.array([len(c.text) for c in candidates], dtype=float)
    half_w = chars * font * CHAR_WIDTH / 2 + PAD
    half_h = font * LINE_HEIGHT / 2 + PAD
    cx = (x - x_range[0]) / (x_range[1] - x_range[0]) * width
    cy = (y_range[1] - y) / (y_range[1] - y_range[0]) * height
    cx = cx[:, None] + _TRIES[None, :, 0] * half_w[:, None]
    cy = cy[:, None] + _TRIES[None, :, 1] * 2 * half_h[:, None]
    cx += _edge_shift(cx - half_w[:, None], cx + half_w[:, None], width)
    cy += _edge_shift(cy - half_h[:, None], cy + half_h[:, None], height)
    hw, hh = half_w[:, None], half_h[:, None]
    boxes = np.stack([cx - hw, cy - hh, cx + hw, cy + hh], axis=-1)
    finer = np.array([c.level != "area" for c in candidates])
    boxes[finer, len(_NUDGES) :] = np.nan  # never inside the plot: never placed
    return boxes


def _edge_shift(low: np.ndarray, high: np.ndarray, size: int) -> np.ndarray:
    """How far to move boxes spanning [low, high] to lie inside [0, size]. A 0.01-px margin
    keeps float rounding from putting a moved box back across the edge."""
    shift = np.maximum(0.0, -low) - np.maximum(0.0, high - size)
    return shift + np.sign(shift) * 0.01


def place_boxes(
    boxes: np.ndarray, *, width: int = ASSUMED_WIDTH, height: int = ASSUMED_HEIGHT
) -> list[tuple[int, np.ndarray]]:
    """Greedy placement over `candidate_boxes` (in priority order): for each candidate, its
    first try inside the plot that overlaps no box placed so far. Returns (candidate index,
    box) of every label placed; vectorised over tries and placed boxes (a map's labels
    were placed in Python before: 15 ms of every filter change at 3,000 papers)."""
    inside = (
        (boxes[..., 0] >= 0) & (boxes[..., 1] >= 0)
        & (boxes[..., 2] <= width) & (boxes[..., 3] <= height)
    )  # fmt: skip
    placed = np.empty((len(boxes), 4))
    out: list[tuple[int, np.ndarray]] = []
    for i, tries in enumerate(boxes):
        free = inside[i]
        if out:
            p = placed[: len(out)]
            overlap = (
                (tries[:, None, 0] < p[None, :, 2]) & (p[None, :, 0] < tries[:, None, 2])
                & (tries[:, None, 1] < p[None, :, 3]) & (p[None, :, 1] < tries[:, None, 3])
            )  # fmt: skip
            free = free & ~overlap.any(axis=1)
        if free.any():
            box = tries[int(free.argmax())]
            placed[len(out)] = box
            out.append((i, box))
    return out
