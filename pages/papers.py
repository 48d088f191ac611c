"""Papers: the filtered table and one paper in detail (deep link: ?paper=<paper_id>)."""

import pandas as pd
import streamlit as st

from explorer.view import charts
from explorer.view.text import md, md_format
from explorer.view.ui import state
from explorer.view.ui.data import colors, current, filtered, per_run
from explorer.view.ui.router import ensure_router
from explorer.view.ui.search import results_table, search_box
from explorer.view.ui.widgets import detail_link, filter_sidebar, paper_table, query_select

ensure_router()


def _lookup(data):
    """Papers by id, the picker's options and their titles: once per run, not per rerun."""
    titles = dict(zip(data.papers["paper_id"], data.papers["title"], strict=True))
    return data.papers.set_index("paper_id"), list(titles), titles


data = current()
filters = filter_sidebar(data)
shown = filtered(data, filters)
by_id, ids, titles = per_run(data, _lookup)

st.title("Papers")
paper_id = query_select(
    "Paper",
    ids,
    state.PAPER,
    format_func=lambda p: titles[p][:120],
    placeholder="Pick a paper to see its details",
)

if paper_id:
    paper = by_id.loc[paper_id]
    st.subheader(md(paper["title"]), anchor=False)
    if paper["title_derived"]:
        st.caption("Title derived from the abstract's first sentence (the source has no titles).")
    st.text(paper["authors"] or "(authors unknown)")
    year = "" if pd.isna(paper["year"]) else int(paper["year"])
    st.text(
        " · ".join(
            str(v) for v in (paper["venue"], year, paper["status"], paper["track"]) if v != ""
        )
    )
    for label, url in (("Paper", paper["url"]), ("Code", paper["code_url"])):
        if str(url).startswith(("https://", "http://")):
            st.link_button(md(label), url)
    st.text(paper["abstract"])
    st.markdown(
        md_format(
            "**Topic:** {topic} · probability {p:.2f}",
            topic=paper["topic_id"],
            p=paper["probability"],
        )
    )
    st.text(paper["topic_label"])
    dist = data.doc_topics[data.doc_topics["paper_id"] == paper_id].merge(
        data.topics[["topic_id", "label"]], on="topic_id"
    )
    left, right = st.columns([3, 2])
    left.dataframe(dist[["rank", "topic_id", "label", "score"]], hide_index=True)
    same_topic = data.papers[data.papers["topic_id"] == paper["topic_id"]]
    right.plotly_chart(charts.paper_in_topic(same_topic, paper_id, colors(data)), key="paper_map")
    similar = data.neighbors[data.neighbors["paper_id"] == paper_id].merge(
        data.papers, left_on="neighbor_id", right_on="paper_id", suffixes=("_q", "")
    )
    st.markdown("**Most similar papers**")
    similar = similar.assign(open=[detail_link(p, data.corpus) for p in similar["neighbor_id"]])
    st.dataframe(
        similar[["open", "similarity", "title", "venue", "year", "topic_label"]],
        hide_index=True,
        column_config={"open": st.column_config.LinkColumn("", display_text="open", width="small")},
    )
    st.divider()

found = search_box(data, filters)
if found is not None:
    results_table(found, data=data, key="search_results")
    st.divider()
st.caption(
    md_format("{n:,} of {total:,} papers match the filters.", n=len(shown), total=len(data.papers))
)
paper_table(shown, data=data, key="papers_table", download=f"{data.corpus}-papers")
