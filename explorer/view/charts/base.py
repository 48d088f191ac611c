"""What every chart module shares: the figure built without plotly's validation, the margin
and the text colours over coloured marks."""

from __future__ import annotations

import plotly.graph_objects as go

# Room above the plot for plotly's toolbar, which shows on hover at the top right: with
# less, it covered the largest bar of "Topics by size", and a click there hit "Download
# plot as a PNG" instead of opening the topic.
MARGIN = {"l": 0, "r": 0, "t": 32, "b": 0}
# Text drawn over coloured marks (topic bubbles, pale Sankey bands): dark, with a white
# halo where the mark under it may be dark too, so it reads on any palette colour.
DARK_TEXT = "#262730"
HALO = "0 0 2px #ffffff, 0 0 3px #ffffff"


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain trace/layout dicts, skipping plotly's per-property validation.

    Validation re-checks every value of every trace and dominated the map page's run
    (0.54 s of it for 3,000 papers in 55 traces; 0.07 s without). The dicts are built
    by the chart modules from fixed keys, and the chart tests render every one of them.
    """
    return go.Figure(data=data, layout=layout, _validate=False)
