"""Widgets shared by several pages. Filter widgets are bound to the URL, so the
address bar always reproduces the view."""

from __future__ import annotations

from urllib.parse import quote_plus, urlencode

import pandas as pd
import streamlit as st

from explorer.view.store import Filters, available_levels, node_name, year_range
from explorer.view.text import md_format, shorten
from explorer.view.ui import state
from explorer.view.ui.data import RunData


def warn_unknown(param: str, valid: list[str]) -> None:
    """Say which values of a URL-bound widget's parameter this corpus lacks.

    Streamlit drops such values silently; a shared link that shows less than it
    promises must say so.
    """
    unknown = [v for v in st.query_params.get_all(param) if v not in set(valid)]
    if unknown:
        shown = ", ".join(repr(v[:40]) for v in unknown[:3])
        st.warning(
            md_format(
                "Ignoring {values} from the link's {param}: not in this corpus.",
                values=shown,
                param=param,
            )
        )


def filter_sidebar(data: RunData) -> Filters:
    """The composable filters, in the sidebar; returns what they currently say."""
    papers = data.papers
    with st.sidebar:
        st.subheader("Filters")
        levels = available_levels(data.nodes)  # no stand-in areas for small corpora
        node_ids = data.nodes.loc[data.nodes["level"].isin(levels), "node_id"].tolist()
        name = node_name(data.nodes)
        warn_unknown(state.TOPICS, [name(n) for n in node_ids])
        topics = st.multiselect(
            "Areas, topics and subtopics",
            node_ids,
            key=state.TOPICS,
            bind="query-params",
            format_func=name,
        )
        query = st.text_input(
            "Search title, abstract, authors", key=state.QUERY, bind="query-params"
        )
        statuses = sorted(s for s in papers["status"].unique() if s)
        warn_unknown(state.STATUS, statuses)
        chosen_status = (
            st.multiselect("Status", statuses, key=state.STATUS, bind="query-params")
            if statuses
            else []
        )
        venues = sorted(v for v in papers["venue"].unique() if v)
        warn_unknown(state.VENUE, venues if len(venues) > 1 else [])
        chosen_venues = (
            st.multiselect("Venue", venues, key=state.VENUE, bind="query-params")
            if len(venues) > 1
            else []
        )
        years = sorted(int(y) for y in papers["year"].dropna().unique())
        chosen_years = None
        if len(years) > 1:
            chosen_years = st.slider(
                "Years",
                years[0],
                years[-1],
                (years[0], years[-1]),
                key=state.YEARS,
                bind="query-params",
            )
        min_probability = st.slider(
            "Minimum topic probability",
            0.0,
            1.0,
            0.0,
            0.05,
            key=state.MIN_PROBABILITY,
            bind="query-params",
        )
        hide = st.checkbox("Hide outliers", key=state.HIDE_OUTLIERS, bind="query-params")
    return Filters(
        topics=tuple(topics),
        statuses=tuple(chosen_status),
        venues=tuple(chosen_venues),
        years=year_range(chosen_years, years),
        query=query or "",
        min_probability=float(min_probability),
        show_outliers=not hide,
    )


TABLE_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status", "topic_label", "probability",
)  # fmt: skip


def paper_table(
    papers: pd.DataFrame,
    *,
    data: RunData,
    key: str,
    height: int = 400,
    columns: tuple[str, ...] = TABLE_COLUMNS,
) -> None:
    """Papers (rows of `data.papers`) as a table, text only, each with a link to its detail."""
    table = papers.loc[:, list(columns)].copy()
    table.insert(0, "open", detail_links(data).loc[papers.index].to_numpy())
    st.dataframe(
        table,
        key=key,
        height=height,
        hide_index=True,
        column_config={
            "open": st.column_config.LinkColumn("", display_text="open", width="small"),
            "probability": st.column_config.NumberColumn(format="%.2f"),
            "score": st.column_config.NumberColumn(format="%.3f"),
            "year": st.column_config.NumberColumn(format="%d"),
        },
    )


LEVEL_NAMES = {"area": "Areas", "topic": "Topics", "subtopic": "Subtopics"}


def level_picker(data: RunData, *, default: str = "topic") -> str:
    """Area / topic / subtopic, in the URL as ?level=; only the levels this run has."""
    levels = available_levels(data.nodes)
    warn_unknown(state.LEVEL, levels)
    return st.radio(
        "Level",
        levels,
        index=levels.index(default) if default in levels else 0,
        key=state.LEVEL,
        bind="query-params",  # the URL holds the option as shown: ?level=area
        horizontal=True,
        help="Areas group related topics; subtopics split the large topics.",
    )


def query_select(
    label: str,
    options: list,
    param: str,
    *,
    format_func=str,
    placeholder: str = "",
    first_by_default: bool = False,
) -> object:
    """A selectbox whose value lives in the URL as `?param=<raw option>` (e.g. ?paper=<id>).

    Streamlit's bind="query-params" puts the *formatted* option in the URL (a title),
    which makes poor deep links; this keeps the raw id there. A value in the URL that
    is not an option is ignored with a notice.
    """
    requested = st.query_params.get(param)
    by_text = {str(o): i for i, o in enumerate(options)}
    index = (
        by_text.get(requested)
        if requested is not None
        else (0 if first_by_default and options else None)
    )
    if requested is not None and index is None:
        st.warning(
            md_format(
                "Ignoring ?{param}={value}: it is not in this corpus.",
                param=param,
                value=shorten(requested, 60),
            )
        )
    choice = st.selectbox(
        label,
        options,
        index=index,
        format_func=format_func,
        key=f"{param}_pick",
        placeholder=placeholder,
    )
    if choice is None:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != str(choice):
        st.query_params[param] = str(choice)
    return choice


@st.cache_resource(show_spinner=False, max_entries=8)
def _links(corpus: str, run_id: str, _papers: pd.DataFrame) -> pd.Series:
    prefix = detail_link("", corpus)
    return pd.Series([prefix + quote_plus(p) for p in _papers["paper_id"]], index=_papers.index)


def detail_links(data: RunData) -> pd.Series:
    """Every paper's detail link, by row: built once per run, then sliced (one urlencode
    per row cost 0.3 s per table at 50,000 papers)."""
    return _links(data.corpus, data.run_id, data.papers)


def detail_link(paper_id: str, corpus: str) -> str:
    """Relative link that opens a paper's detail (keeps the corpus, so it works when shared)."""
    return "./papers?" + urlencode({state.CORPUS: corpus, state.PAPER: paper_id})


def node_links(data: RunData) -> pd.DataFrame:
    """Every node with a link to its topic on the Topics page (a subtopic opens its topic)."""
    nodes = data.nodes[data.nodes["level"] != "area"]
    topic = [n.split(".")[0] for n in nodes["node_id"]]
    links = [
        "./topics?" + urlencode({state.CORPUS: data.corpus, state.TOPIC_DETAIL: t}) for t in topic
    ]
    frame = nodes[["node_id", "level", "long_label", "size"]].rename(
        columns={"node_id": "id", "long_label": "label"}
    )
    frame.insert(0, "open", links)
    return frame


def chart_download(fig, name: str, *, key: str) -> None:
    """The chart as a standalone HTML file (PNG is in the chart's own toolbar); built on click."""
    st.download_button(
        "Download chart (HTML)",
        data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
        file_name=f"{name}.html",
        mime="text/html",
        key=key,
        on_click="ignore",
    )


def share_link(url_path: str) -> str:
    """The address that reproduces this view: page path plus every query parameter."""
    from urllib.parse import urlencode

    base = (st.context.url or "").rstrip("/")
    # st.context.url may or may not already end with the page's path; never repeat it.
    if url_path and base.endswith("/" + url_path):
        base = base[: -len(url_path) - 1]
    pairs = [(k, v) for k in st.query_params for v in st.query_params.get_all(k)]
    query = urlencode(pairs)
    path = f"{base}/{url_path}" if url_path else (base or "/")
    return f"{path}?{query}" if query else path


def share_box(url_path: str, container) -> None:
    """'Copy link to this view': a code box, which has a copy button."""
    with container:
        st.caption("Link to this view (copy button on the right)")
        st.code(share_link(url_path), language=None, wrap_lines=True)
