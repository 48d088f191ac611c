"""The 2-D map: filters in the sidebar, box/lasso selection, and what the selection is about."""

import streamlit as st

from explorer.view.charts import maps
from explorer.view.store.filters import Filters
from explorer.view.store.keywords import contrast_keywords
from explorer.view.store.nodes import level_ids
from explorer.view.store.selection import in_region, selection_to_ids, topic_mix
from explorer.view.text import counted, md_format
from explorer.view.ui.data import RunData, colors, current, filtered, per_run, per_view
from explorer.view.ui.router import ensure_router
from explorer.view.ui.search_box import matches, results_table, search_box
from explorer.view.ui.widgets.filters import filter_sidebar
from explorer.view.ui.widgets.pickers import level_picker
from explorer.view.ui.widgets.share import chart_download
from explorer.view.ui.widgets.tables import paper_table

ensure_router()


def _hover(data):
    return maps.map_hover(data.papers)


def _groups(data, level):
    return level_ids(data.papers, level)


def _extent(data):
    return maps.map_extent(data.papers)


def _layout(data, level):
    return maps.label_layout(data.nodes, level, per_run(data, _extent))


def _labels(data, level, shown_nodes):
    return maps.map_labels(per_run(data, _layout, level), shown_nodes)


def dense(shown) -> bool:
    """More papers than points can show: the map is their density (maps.density_map)."""
    return len(shown) > maps.MAX_MAP_POINTS


def _figure(data: RunData, filters: Filters, level: str, show_labels: bool, ask: str):
    """The map of one view; kept per view, so a view asked for again is not rebuilt."""
    shown = filtered(data, filters)
    groups = per_run(data, _groups, level)
    labels = ()
    if show_labels:  # placement depends only on which nodes have papers on the map
        present = tuple(sorted(set(groups.loc[shown.index])))
        labels = per_run(data, _labels, level, present)
    options = maps.MapOptions(extent=per_run(data, _extent), colors=colors(data), labels=labels)
    if dense(shown):
        return maps.density_map(shown, options)
    return maps.topic_map(
        shown,
        groups,
        data.nodes,
        options,
        hover=per_run(data, _hover),
        highlight=matches(data, filters, ask)[0] if ask else None,
    )


@st.fragment
def map_view(data: RunData, filters: Filters, level: str, show_labels: bool) -> None:
    """The search box, the map and what is selected on it: a selection reruns this part
    only, a new question the page once more (its link is in the sidebar); the sidebar's
    filters rerun the page."""
    shown = filtered(data, filters)
    found = search_box(data, filters, in_fragment=True)
    ask = found.attrs["query"] if found is not None else ""
    if dense(shown):
        st.info(
            md_format(
                "{n:,} papers are more than the map draws as points ({k:,}): it shows their "
                "density. Select a region (lasso, or box in the toolbar) to see its papers.",
                n=len(shown),
                k=maps.MAX_MAP_POINTS,
            )
        )
    figure = per_view(data, _figure, filters, level, show_labels, ask)
    event = st.plotly_chart(
        figure,
        on_select="rerun",
        selection_mode=("points", "box", "lasso"),
        key="map",
        config={"scrollZoom": True, "displaylogo": False},
    )
    chart_download(figure, f"{data.corpus}-map", key="dl_map")
    chosen = selected(shown, event.selection if event else None)
    if chosen is not None and len(chosen):
        if dense(shown):
            region_points(data, chosen, level)
        selection(data, chosen)
    elif found is not None:
        if dense(shown):
            st.subheader("Search matches")
        else:
            st.subheader("Search matches (ringed on the map)")
        results_table(found, data=data, key="search_results")
    else:
        st.subheader("Papers")
        paper_table(shown, data=data, key="shown_papers", download=f"{data.corpus}-map")


def selected(shown, state) -> object:
    """The papers a selection holds: by paper id from the points (point map), or by the
    box or lasso drawn over the density (density map). None without a selection."""
    if not state:
        return None
    if dense(shown):
        boxes, lassos = state.get("box", []), state.get("lasso", [])
        if not boxes and not lassos:
            return None
        mask = in_region(shown["x"].to_numpy(), shown["y"].to_numpy(), boxes, lassos)
        return shown[mask]
    points = state.get("points", [])
    if not points:
        return None
    ids = selection_to_ids(points, set(shown["paper_id"]))
    return shown[shown["paper_id"].isin(ids)]


def region_points(data: RunData, chosen, level: str) -> None:
    """A density selection's papers as points (a random sample above MAX_MAP_POINTS)."""
    drawn = chosen
    if len(chosen) > maps.MAX_MAP_POINTS:
        drawn = chosen.sample(maps.MAX_MAP_POINTS, random_state=0)
        st.caption(
            md_format(
                "Drawing a random {k:,} of the {n:,} papers selected.",
                k=maps.MAX_MAP_POINTS,
                n=len(chosen),
            )
        )
    figure = maps.topic_map(
        drawn,
        per_run(data, _groups, level),
        data.nodes,
        maps.MapOptions(extent=maps.map_extent(drawn), colors=colors(data), height=480),
        hover=per_run(data, _hover),
    )
    st.plotly_chart(figure, key="region", config={"displaylogo": False})


def selection(data: RunData, selected) -> None:
    """What a box or lasso selection is about: its topic mix and its distinctive words."""
    st.subheader(md_format("Selection: {papers}", papers=counted(len(selected), "paper", "papers")))
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
        percent = st.column_config.NumberColumn(format="percent")
        st.dataframe(
            contrast_keywords(data.doc_terms_indptr, data.doc_terms_indices, data.vocab, rows),
            hide_index=True,
            column_config={
                "selected_share": percent,
                "corpus_share": percent,
                "score": st.column_config.NumberColumn(format="%.3f"),
            },
        )
    paper_table(selected, data=data, key="selected_papers", download=f"{data.corpus}-selection")


data = current()
filters = filter_sidebar(data)
shown = filtered(data, filters)

st.title("Topic map")
level = level_picker(data)
with st.sidebar:
    show_labels = st.checkbox("Labels on the map", value=True)

st.caption(
    md_format(
        "{n:,} of {total:,} papers shown. "
        "Drag to lasso-select (box in the toolbar); double-click to reset.",
        n=len(shown),
        total=len(data.papers),
    )
)
if shown.empty:
    st.info("No paper matches these filters.")
else:
    map_view(data, filters, level, show_labels)
