"""Dashboard entry point (placeholder until the dashboard pages land): the built corpora."""

import streamlit as st

from explorer import artifacts

st.set_page_config(page_title="Topic Explorer", layout="wide")
st.title("Topic Explorer")
cache = artifacts.default_cache_dir()
names = artifacts.list_corpora(cache)
if not names:
    st.info("No corpus is built yet. Build one with: explorer build data/icml2025 --name icml2025")
for name in names:
    run = artifacts.open_run(cache, name)
    counts = run.manifest["counts"]
    st.subheader(name)
    st.text(f"{counts['papers']} papers, {counts['topics']} topics, {counts['outliers']} outliers")
