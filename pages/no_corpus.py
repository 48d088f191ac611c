"""Shown when nothing is built yet: the exact command that builds the default corpus."""

import streamlit as st

from explorer.view.text import md_format
from explorer.view.ui.data import cache_dir
from explorer.view.ui.router import ensure_router

ensure_router()

st.title("Topic Explorer")
st.info(md_format("No corpus is built under {path} yet.", path=cache_dir()))
st.markdown("Build the shipped ICML 2025 sample (about a minute), then reload this page:")
st.code("explorer build data/icml2025 --name icml2025", language="bash")
st.markdown("Or build your own list: `explorer build PATH... --name NAME` (see the README).")
