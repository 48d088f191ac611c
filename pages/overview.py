"""The corpus at a glance: counts, status mix, topic sizes, top keywords, how it was built."""

import pandas as pd
import streamlit as st

from explorer.view.charts.topics import node_sizes
from explorer.view.store.keywords import one_per_form, ranked_terms
from explorer.view.store.nodes import LEVEL_NAMES, nodes_at, opened_by
from explorer.view.store.papers import class_counts
from explorer.view.text import md, md_format
from explorer.view.ui.data import colors, current, levels
from explorer.view.ui.router import ensure_router
from explorer.view.ui.widgets.pickers import level_picker, switch_to

ensure_router()

data = current()
m = data.manifest
counts = m.counts
papers = data.papers

st.title(md_format("Overview: {corpus}", corpus=data.corpus))
cols = st.columns(4)
# Metric values render Markdown too, and the manifest is a file on disk: escaped.
cols[0].metric("Papers", md_format("{n:,}", n=counts.papers))
per_level = data.nodes["level"].value_counts()  # as curated: a merge counts one topic
cols[1].metric(
    "Areas · topics · subtopics",
    md_format(
        "{a} · {t} · {s}",
        a=per_level.get("area", 0) if "area" in levels(data) else 0,
        t=per_level.get("topic", 0),
        s=per_level.get("subtopic", 0),
    ),
)
cols[2].metric("Outliers", md_format("{share:.1%}", share=counts.outlier_share))
years = counts.years
span = f"{years[0]}–{years[-1]}" if len(years) > 1 else (years[0] if years else "—")
cols[3].metric("Years", md(span))
for message in m.messages:
    st.warning(md(message))

left, right = st.columns([3, 2])
with left:
    level = level_picker(data, default="area")
    st.subheader(md_format("{level} by size", level=LEVEL_NAMES[level]))
    if level == "area":
        st.caption("Click a bar to open its largest topic on the Topics page.")
    else:
        st.caption("Click a bar to open it on the Topics page.")
    event = st.plotly_chart(
        node_sizes(nodes_at(data.nodes, level), colors(data)),
        on_select="rerun",
        selection_mode="points",
        key="sizes",
    )
    points = event.selection.points if event else []
    if points:
        topic, opened_level = opened_by(data.nodes, str(points[0]["customdata"][0]), level)
        switch_to("pages/topics.py", {"topic": topic}, level=opened_level)
with right:
    status = class_counts(papers, "status")
    if len(status) > 1 or status["status"].iloc[0] != "(none)":
        st.subheader("Status mix")
        st.dataframe(status, hide_index=True)
    venues = class_counts(papers, "venue")
    st.subheader("Venues")
    st.dataframe(venues, hide_index=True)
    st.subheader("Top keywords")
    st.caption(
        "Most characteristic of this corpus first: papers using a term, weighted by how "
        "specific it is to a field (what every field says, says in passing, or writes only "
        "before another word, as 'theoretical', weighs little) "
        "and by how much more often this corpus uses it than venues do, as far as its counts "
        "tell. One form per term ('algorithm' or 'algorithms'), with its own count."
    )
    # Ranked by papers x specificity x lift over the venues: subjects, not boilerplate.
    top = (
        one_per_form(ranked_terms(data.vocab, len(data.built_papers)), data.vocab)
        .head(20)[["term", "df"]]
        .rename(columns={"df": "papers"})
    )
    st.dataframe(top, hide_index=True)

st.subheader("How this corpus was built")
config = m.config
st.dataframe(
    pd.DataFrame(
        {
            "setting": ["run", "built", "embedding model", "papers skipped", "duplicates merged"]
            + list(config.params),
            "value": [
                data.run_id,
                m.created_at,
                config.embedding_model_id,
                counts.skipped,
                counts.merged,
            ]
            + [str(v) for v in config.params.values()],
        }
    ).astype(str),
    hide_index=True,
)
st.caption(
    md_format(
        "Seconds per stage: {stages}",
        stages=", ".join(f"{k} {v:.1f}" for k, v in m.timings.items()),
    )
)
