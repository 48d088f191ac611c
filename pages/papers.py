"""Papers: the filtered table and one paper in detail (deep link: ?paper=<paper_id>)."""

import pandas as pd
import streamlit as st

from explorer.view.charts.maps import paper_in_topic
from explorer.view.text import md, md_format, md_math
from explorer.view.ui import state
from explorer.view.ui.data import colors, current, filtered
from explorer.view.ui.router import ensure_router
from explorer.view.ui.search_box import results_table, search_box
from explorer.view.ui.widgets.filters import filter_sidebar
from explorer.view.ui.widgets.pickers import query_select
from explorer.view.ui.widgets.tables import detail_links, paper_table

ensure_router()


# A select box sends every option's text on each rerun: a million titles would be ~100 MB.
# 5,000 (~0.6 MB) still lists every paper of a large conference, typed search included.
PICKER_OPTIONS = 5_000


def _options(data, shown: pd.DataFrame, requested: str | None) -> list[str]:
    """The picker's papers: the first PICKER_OPTIONS that pass the filters, and the paper in
    the URL (a shared link) wherever it is."""
    ids = shown["paper_id"].head(PICKER_OPTIONS).tolist()
    if requested and requested not in ids and len(data.row_of([requested])):
        ids.insert(0, requested)
    return ids


data = current()
filters = filter_sidebar(data)
shown = filtered(data, filters)
ids = _options(data, shown, st.query_params.get(state.PAPER))
titles = dict(zip(ids, data.papers["title"].to_numpy()[data.row_of(ids)], strict=True))

st.title("Papers")
paper_id = query_select(
    "Paper",
    ids,
    state.PAPER,
    format_func=lambda p: titles[p][:120],
    placeholder="Pick a paper to see its details",
)
if len(shown) > PICKER_OPTIONS:
    st.caption(
        md_format(
            "The picker lists the first {k:,} of {n:,} papers: narrow the filters or open "
            "one from the table below.",
            k=PICKER_OPTIONS,
            n=len(shown),
        )
    )

if paper_id:
    row = int(data.row_of([paper_id])[0])
    paper = data.papers.iloc[row]
    st.subheader(md_math(paper["title"]), anchor=False)
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
    st.markdown(md_math(paper["abstract"]))
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
    left.caption("Its closest topics (score: its share of the paper's topic distribution)")
    right.caption("This paper (star) among its topic's papers on the map")
    left.dataframe(dist[["rank", "topic_id", "label", "score"]], hide_index=True)
    # Only what the small map draws: a topic can hold ~400,000 of a million papers.
    same_topic = data.papers.loc[
        data.papers["topic_id"] == paper["topic_id"], ["paper_id", "topic_id", "x", "y", "title"]
    ]
    right.plotly_chart(paper_in_topic(same_topic, paper_id, colors(data)), key="paper_map")
    rows, similarity = data.neighbors.of_row(row)
    st.markdown("**Most similar papers**")
    similar = data.papers.iloc[rows].assign(
        similarity=similarity, open=detail_links(data.papers["paper_id"].iloc[rows], data.corpus)
    )
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
