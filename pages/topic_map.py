"""The 2-D map: filters in the sidebar, box/lasso selection, and what the selection is about."""

import streamlit as st

from explorer.view import charts
from explorer.view.store import (
    contrast_keywords,
    filter_papers,
    level_ids,
    selection_to_ids,
    topic_mix,
)
from explorer.view.text import md_format
from explorer.view.ui.data import colors, current, per_run
from explorer.view.ui.router import ensure_router
from explorer.view.ui.search import results_table, search_box
from explorer.view.ui.widgets import chart_download, filter_sidebar, level_picker, paper_table

ensure_router()


def _hover(data):
    return charts.map_hover(data.papers)


def _groups(data, level):
    return level_ids(data.papers, level)


def _extent(data):
    return charts.map_extent(data.papers)


data = current()
filters = filter_sidebar(data)
shown = filter_papers(data.papers, filters)

st.title("Topic map")
level = level_picker(data)
with st.sidebar:
    show_labels = st.checkbox("Labels on the map", value=True)

total = len(data.papers)
st.caption(
    md_format(
        "{n:,} of {total:,} papers shown. "
        "Drag to lasso-select (box in the toolbar); double-click to reset.",
        n=len(shown),
        total=total,
    )
)
if shown.empty:
    st.info("No paper matches these filters.")
    st.stop()
found = search_box(data, shown)
plotted = shown
if len(shown) > charts.MAX_MAP_POINTS:
    plotted = shown.sample(charts.MAX_MAP_POINTS, random_state=0)
    st.warning(
        md_format(
            "Showing a random sample of {k:,} of {n:,} papers to keep the map responsive.",
            k=charts.MAX_MAP_POINTS,
            n=len(shown),
        )
    )

figure = charts.topic_map(
    plotted,
    per_run(data, _groups, level),
    data.nodes,
    level=level,
    colors=colors(data),
    extent=per_run(data, _extent),
    show_labels=show_labels,
    hover=per_run(data, _hover),
    highlight=found,
)
event = st.plotly_chart(
    figure,
    on_select="rerun",
    selection_mode=("points", "box", "lasso"),
    key="map",
    config={"scrollZoom": True, "displaylogo": False},
)
chart_download(figure, f"{data.corpus}-map", key="dl_map")
points = event.selection.points if event else []
# The set of plotted ids only when there is a selection: building it costs 0.1 s at 50k.
selected_ids = selection_to_ids(points, set(plotted["paper_id"])) if points else []

if selected_ids:
    selected = shown[shown["paper_id"].isin(selected_ids)]
    st.subheader(md_format("Selection: {n:,} papers", n=len(selected)))
    left, right = st.columns(2)
    with left:
        st.markdown("**Topic mix**")
        st.dataframe(
            topic_mix(selected, data.topics),
            hide_index=True,
            column_config={"share": st.column_config.NumberColumn(format="percent")},
        )
    with right:
        st.markdown("**Keywords that set the selection apart**")
        rows = data.row_of(selected["paper_id"])
        st.dataframe(
            contrast_keywords(data.doc_terms_indptr, data.doc_terms_indices, data.vocab, rows),
            hide_index=True,
        )
    paper_table(selected, data=data, key="selected_papers")
elif found is not None:
    st.subheader("Search matches (ringed on the map)")
    results_table(found, data=data, key="search_results")
else:
    st.subheader("Papers")
    paper_table(shown, data=data, key="shown_papers")
