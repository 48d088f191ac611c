"""DataFrame in, plotly figure out, one module per page's figures: `maps` (the Topic map, its
density form and labels, a paper's small map), `topics` (node sizes, keywords, hierarchy,
distances), `trends`, `comparisons` (two years, two corpora); `base` holds what they share.

Every untrusted string goes through `text.plot` first: plotly renders a subset of HTML in
hover text, labels and ticks, and expands ``%{..}``.
"""
