"""The light world: read finished runs and draw them (pandas, pyarrow, numpy, plotly).

Only `explorer.view.ui` and `pages/` import streamlit. Nothing here imports
`explorer.build`, except the lazy query encoder in `explorer.view.query_encoder`; an AST
test (`tests/test_layout.py`) keeps it that way.
"""
