"""Read-only queries the pages need, one module per thing they ask about.

`nodes` the levels a run has and its nodes at each (what the others build on), `filters`
the sidebar's filters and text search, `selection` a box or lasso on the map, `papers` the
papers' export, neighbours and counts, `keywords` the vocabulary ranked and a selection's
distinctive terms, `topics` the Topics page's tables, `trends` keyword and node trends.

Pure pandas/numpy, no Streamlit, so every rule here is unit-tested directly.
"""
