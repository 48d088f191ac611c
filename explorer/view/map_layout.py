"""What the map needs besides points: colours by area and label boxes that never overlap.

Colours: each area gets a hue; its topics are shades of it (lightness spread within the
area), and subtopics vary their topic's shade slightly, so related regions look related.

Labels: placed greedily in screen space at the default zoom, largest nodes first, area
labels (large) before finer ones (small). A label whose box would overlap a placed one is
left out; as many labels are shown as fit. The axis ranges are fixed by the caller, so
data and pixel coordinates map exactly (for the assumed plot size).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

import pandas as pd

from explorer.artifacts import OUTLIER_ID, id_order

OUTLIER_COLOR = "#b8b8b8"
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
        index = int(sub.split(".")[1])
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


def place_labels(
    candidates: list[Label],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    width: int = ASSUMED_WIDTH,
    height: int = ASSUMED_HEIGHT,
) -> list[Label]:
    """The candidates (in priority order) that fit without overlapping any placed label.

    Each is tried at its point (moved inside the plot if it would cross an edge), then just
    above, below, left and right of it, then diagonally; a label that fits nowhere is left
    out.
    """
    if x_range[1] <= x_range[0] or y_range[1] <= y_range[0]:
        return []  # nothing to place labels in
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for label in candidates:
        for nudged in _nudged(label, x_range, y_range, width=width, height=height):
            moved = _clamped(nudged, x_range, y_range, width=width, height=height)
            box = label_box(moved, x_range, y_range, width=width, height=height)
            if _inside(box, width, height) and not any(_overlap(box, o) for o in placed):
                placed.append(box)
                out.append(moved)
                break
    return out


def _nudged(label: Label, x_range, y_range, *, width: int, height: int) -> list[Label]:
    """The label at its point, then moved by one box height up or down, or half a width."""
    left, top, right, bottom = label_box(label, x_range, y_range, width=width, height=height)
    dx = (right - left) / 2 / width * (x_range[1] - x_range[0])
    dy = (bottom - top) / height * (y_range[1] - y_range[0])
    steps = [(0, 0), (0, dy), (0, -dy), (-dx, 0), (dx, 0)]
    steps += [(sx, sy) for sx in (-dx, dx) for sy in (dy, -dy)]
    return [Label(label.x + sx, label.y + sy, label.text, label.level) for sx, sy in steps]


def _clamped(label: Label, x_range, y_range, *, width: int, height: int) -> Label:
    """The label moved just inside the plot where its box would cross an edge."""
    left, top, right, bottom = label_box(label, x_range, y_range, width=width, height=height)
    shift_x = max(0.0, -left) - max(0.0, right - width)
    shift_y = max(0.0, -top) - max(0.0, bottom - height)
    # A 0.01-px margin keeps float rounding from putting the box back across the edge.
    shift_x += 0.01 if shift_x > 0 else (-0.01 if shift_x < 0 else 0.0)
    shift_y += 0.01 if shift_y > 0 else (-0.01 if shift_y < 0 else 0.0)
    return Label(
        label.x + shift_x / width * (x_range[1] - x_range[0]),
        label.y - shift_y / height * (y_range[1] - y_range[0]),
        label.text,
        label.level,
    )


def label_box(
    label: Label,
    x_range: tuple[float, float],
    y_range: tuple[float, float],
    *,
    width: int,
    height: int,
) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) in pixels of a label centred on its point."""
    px = (label.x - x_range[0]) / (x_range[1] - x_range[0]) * width
    py = (y_range[1] - label.y) / (y_range[1] - y_range[0]) * height
    font = FONT[label.level]
    half_w = len(label.text) * font * CHAR_WIDTH / 2 + PAD
    half_h = font * LINE_HEIGHT / 2 + PAD
    return (px - half_w, py - half_h, px + half_w, py + half_h)


def _inside(box: tuple[float, float, float, float], width: int, height: int) -> bool:
    return box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
