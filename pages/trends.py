"""Keyword and topic trends: over the years, across classes, and what rises or falls."""

import streamlit as st

from explorer.view.charts.trends import class_bars, rising_falling, topic_area, trend_lines
from explorer.view.store.keywords import ranked_terms
from explorer.view.store.nodes import LEVEL_NAMES, level_ids, node_name, nodes_at
from explorer.view.store.trends import class_values, keyword_trend, node_trend, rising_terms
from explorer.view.text import md, md_format
from explorer.view.ui import state
from explorer.view.ui.data import colors, current, default_keywords, per_run
from explorer.view.ui.router import ensure_router
from explorer.view.ui.widgets.pickers import level_picker, warn_unknown
from explorer.view.ui.widgets.share import chart_download

ensure_router()


def _values(data, dimension):
    return class_values(data.keywords, dimension)


def _options(data):
    """The type-ahead's terms: the 20,000 most characteristic, plus the preselected risers
    wherever they rank (a boilerplate riser ranks last, past the cut on a large corpus)."""
    top = ranked_terms(data.vocab, len(data.built_papers))["term"].head(20_000).tolist()
    shown = set(top)
    return top + [t for t in default_keywords(data) if t not in shown]


def _keyword_trend(data, terms, dimension):
    return keyword_trend(data.keywords, list(terms), dimension)


def _node_trend(data, level, dimension, nodes):
    groups = level_ids(data.papers, level)
    return node_trend(data.papers, groups, data.nodes, dimension, list(nodes) or None)


def _share_table(table, key, container=st):
    """A table whose shares (`share`, `share_<value>`) read as percentages."""
    percent = st.column_config.NumberColumn(format="percent")
    container.dataframe(
        table,
        hide_index=True,
        key=key,
        column_config={c: percent for c in table.columns if str(c).startswith("share")},
    )


def _rising(data, dimension, before, after):
    return rising_terms(data.keywords, data.vocab, dimension, before, after)


data = current()
years = per_run(data, _values, "year")
classes = [d for d in ("status", "track", "venue") if len(per_run(data, _values, d)) > 1]

st.title("Trends")
# The type-ahead offers the corpus vocabulary (words and two-word phrases), most
# characteristic first (papers x specificity), boilerplate last. Each pick is a line of
# the charts, so the dropdown offers no "Select N matches": Enter after typing "bandit"
# would otherwise add every phrase holding it.
options = per_run(data, _options)
default = default_keywords(data)
warn_unknown(state.KEYWORDS, options)
terms = st.multiselect(
    "Keywords (type to search words and phrases)",
    options,
    default=default,
    key=state.KEYWORDS,
    bind="query-params",
    select_all=False,
)
level = level_picker(data)
node_ids = nodes_at(data.nodes, level)["node_id"].tolist()
name = node_name(data.nodes)
warn_unknown(state.TREND_TOPICS, [name(n) for n in node_ids])
picked_topics = st.multiselect(
    md(LEVEL_NAMES[level]),
    node_ids,
    key=state.TREND_TOPICS,
    bind="query-params",
    format_func=name,
    select_all=False,
)

over_time, across, rising, topics_time = st.tabs(
    ["Over time", "Across classes", "Rising and falling", "Topics over time"]
)

with over_time:
    if len(years) < 2:
        st.info(
            md_format(
                "This corpus covers a single year ({year}), so there is no time axis; "
                "compare classes in the next tab."
                if classes
                else "This corpus covers a single year ({year}) and one status, track and "
                "venue, so this page has nothing to compare. Build several years or venues "
                "together (`explorer build A B --name X`) to see trends.",
                year=years[0] if years else "unknown",
            )
        )
    elif not terms and not picked_topics:
        st.info("Pick keywords or topics above.")
    else:
        raw = st.toggle("Raw counts instead of shares", key=state.RAW_COUNTS, bind="query-params")
        st.caption(md_format("Years present: {years}", years=", ".join(years)))
        value_col = "papers" if raw else "share"
        if terms:
            trend = per_run(data, _keyword_trend, tuple(terms), "year")
            fig = trend_lines(trend, series="term", value_col=value_col, title="Keywords")
            st.plotly_chart(fig, key="kw_time")
            chart_download(fig, f"{data.corpus}-keyword-trends", key="dl_kw_time")
            _share_table(trend, "kw_time_table")
        if picked_topics:
            trend = per_run(data, _node_trend, level, "year", tuple(picked_topics))
            st.plotly_chart(
                trend_lines(trend, series="label", value_col=value_col, title=LEVEL_NAMES[level]),
                key="tp_time",
            )

with across:
    if not classes:
        st.info(
            "Every paper has the same status, track and venue here, so there are no classes to compare."
        )
    else:
        dimension = st.selectbox("Compare", classes, key=state.CLASS_DIMENSION, bind="query-params")
        if terms:
            trend = per_run(data, _keyword_trend, tuple(terms), dimension)
            st.plotly_chart(class_bars(trend, series="term", dimension=dimension), key="kw_class")
            _share_table(trend, "kw_class_table")
        if picked_topics:
            trend = per_run(data, _node_trend, level, dimension, tuple(picked_topics))
            st.plotly_chart(class_bars(trend, series="label", dimension=dimension), key="tp_class")

with rising:
    dims = (["year"] if len(years) > 1 else []) + classes
    if not dims:
        st.info("Rising and falling keywords need two years or two classes to compare.")
    else:
        dimension = st.selectbox(
            "Between two values of", dims, key=state.RISE_DIMENSION, bind="query-params"
        )
        values = per_run(data, _values, dimension)
        left, right = st.columns(2)
        before = left.selectbox("From", values, index=0, key=state.RISE_FROM, bind="query-params")
        after = right.selectbox(
            "To", values, index=len(values) - 1, key=state.RISE_TO, bind="query-params"
        )
        if before == after:
            st.info("Pick two different values.")
        else:
            ranked = per_run(data, _rising, dimension, before, after)
            st.caption(
                md_format(
                    "Ranked by the z-score of the log-odds ratio with an informative Dirichlet "
                    "prior (Monroe et al. 2008). Positive: more common in {after} than in "
                    "{before}. Terms in fewer than 3 papers are left out.",
                    after=after,
                    before=before,
                )
            )
            st.plotly_chart(rising_falling(ranked), key="rise_chart")
            cols = st.columns(2)
            cols[0].markdown(md_format("**Rising towards {value}**", value=after))
            _share_table(ranked.head(15), "rising_table", cols[0])
            cols[1].markdown(md_format("**Falling towards {value}**", value=after))
            _share_table(ranked.tail(15).iloc[::-1], "falling_table", cols[1])

with topics_time:
    if len(years) < 2:
        st.info("Topics over time need papers from at least two years.")
    else:
        st.caption(
            md_format(
                "Each band is one {level}'s share of that year's papers; the outliers (in no "
                "topic) make up the rest of each year's 100%.",
                level=level,
            )
        )
        fig = topic_area(per_run(data, _node_trend, level, "year", ()), colors(data))
        st.plotly_chart(fig, key="topic_area")
        chart_download(fig, f"{data.corpus}-topics-over-time", key="dl_topic_area")
