"""Widgets shared by several pages. Filter widgets are bound to the URL, so the
address bar always reproduces the view."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import NoReturn
from urllib.parse import quote_plus, urlencode

import pandas as pd
import streamlit as st

from explorer.artifacts import topic_of
from explorer.view.store import (
    Filters,
    export_frame,
    node_name,
    year_range,
)
from explorer.view.text import csv_text, md_format, shorten
from explorer.view.ui import state
from explorer.view.ui.data import RunData, levels, per_run


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
                "Ignoring {values} from the link's {param}: not found here.",
                values=shown,
                param=param,
            )
        )


@dataclass(frozen=True)
class _Choices:
    """What the sidebar's pickers offer: the same for every rerun of a run."""

    node_ids: list[str]
    names: dict[str, str]  # node id -> "id: label"
    statuses: list[str]
    venues: list[str]
    years: list[int]
    any_hidden: bool  # a curator hid some node
    has_stability: bool  # the build scored topic stability (its consensus fits)


def _choices(data: RunData) -> _Choices:
    papers, name = data.papers, node_name(data.nodes)
    nodes = data.nodes.loc[data.nodes["level"].isin(levels(data)), "node_id"].tolist()
    return _Choices(
        node_ids=nodes,
        names={n: name(n) for n in nodes},
        statuses=sorted(s for s in papers["status"].unique() if s),
        venues=sorted(v for v in papers["venue"].unique() if v),
        years=sorted(int(y) for y in papers["year"].dropna().unique()),
        any_hidden=bool(data.nodes.get("hidden", pd.Series(dtype=bool)).any()),
        has_stability=bool(papers.get("stability", pd.Series(dtype=float)).notna().any()),
    )


def node_multiselect(choices: _Choices) -> list[str]:
    """The sidebar's node filter, in the URL by id (`?topics=3&topics=A1`), never by label:
    a link must survive a curator renaming a node. Streamlit's own binding would put the
    shown `id: label` there, so the URL is read once per session and written back here.
    Links from before (`3: old label`) still work by their id."""
    known = set(choices.node_ids)
    if state.TOPICS not in st.session_state:
        raw = st.query_params.get_all(state.TOPICS)
        asked = [v.split(":", 1)[0].strip() for v in raw]
        unknown = [v for v, a in zip(raw, asked, strict=True) if a not in known]
        if unknown:
            st.warning(
                md_format(
                    "Ignoring {values} from the link's {param}: not found here.",
                    values=", ".join(repr(v[:40]) for v in unknown[:3]),
                    param=state.TOPICS,
                )
            )
        st.session_state[state.TOPICS] = [a for a in dict.fromkeys(asked) if a in known]
    picked = st.multiselect(
        "Areas, topics and subtopics",
        choices.node_ids,
        key=state.TOPICS,
        format_func=lambda n: choices.names.get(n, n),
    )
    if picked:
        st.query_params[state.TOPICS] = picked
    else:
        st.query_params.pop(state.TOPICS, None)
    return picked


def filter_sidebar(data: RunData) -> Filters:
    """The composable filters, in the sidebar; returns what they currently say."""
    choices: _Choices = per_run(data, _choices)
    with st.sidebar:
        st.subheader("Filters")
        topics = node_multiselect(choices)
        query = st.text_input(
            "Search title, abstract, authors",
            key=state.QUERY,
            bind="query-params",
            max_chars=state.MAX_TEXT_CHARS,  # enforced on the server too (Streamlit truncates)
            placeholder=f"Up to {state.MAX_TEXT_CHARS} characters",
        )
        statuses, venues, years = _facet_filters(choices)
        min_probability, hide, min_stability, show_hidden = _topic_filters(choices)
    return Filters(
        topics=tuple(topics),
        statuses=tuple(statuses),
        venues=tuple(venues),
        years=year_range(years, choices.years),
        query=query or "",
        min_probability=float(min_probability),
        show_outliers=not hide,
        show_hidden=bool(show_hidden),
        min_stability=float(min_stability),
    )


def _facet_filters(choices: _Choices) -> tuple[list[str], list[str], tuple[int, int] | None]:
    """Status, venue and year range, each shown only when the run has more than one."""
    statuses = choices.statuses
    warn_unknown(state.STATUS, statuses)
    chosen_status = (
        st.multiselect("Status", statuses, key=state.STATUS, bind="query-params")
        if statuses
        else []
    )
    venues = choices.venues
    warn_unknown(state.VENUE, venues if len(venues) > 1 else [])
    chosen_venues = (
        st.multiselect("Venue", venues, key=state.VENUE, bind="query-params")
        if len(venues) > 1
        else []
    )
    years, chosen_years = choices.years, None
    if len(years) > 1:
        chosen_years = st.slider(
            "Years",
            years[0],
            years[-1],
            (years[0], years[-1]),
            key=state.YEARS,
            bind="query-params",
        )
    return chosen_status, chosen_venues, chosen_years


def _topic_filters(choices: _Choices) -> tuple[float, bool, float, bool]:
    """How sure, how stable and how visible a paper's topic must be: minimum probability,
    outliers hidden, minimum stability (runs that scored it), curator-hidden topics shown."""
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
    min_stability = 0.0
    if choices.has_stability:
        min_stability = st.slider(
            "Hide topics with stability below",
            0.0,
            1.0,
            0.0,
            0.05,
            key=state.MIN_STABILITY,
            bind="query-params",
            help="How often a topic's papers stayed together across the build's seeded "
            "fits, whose consensus the topics are: 1 always, 0 never.",
        )
    show_hidden = choices.any_hidden and st.checkbox(
        "Show hidden topics",
        key=state.SHOW_HIDDEN,
        bind="query-params",
        help="Topics the curator hid: shown greyed, labelled (hidden).",
    )
    return min_probability, hide, min_stability, show_hidden


TABLE_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status", "topic_label", "probability",
)  # fmt: skip


# Rows a table sends to the browser: enough to read, scroll and click; every filter change
# re-sent all 3,000 rows before (Arrow-encoded, with a link per row).
TABLE_ROWS = 200
# How a capped table can be ordered before the cap, so the rows sent are the ones asked for
# (clicking a header sorts only the rows sent): label -> (column, ascending).
SORTS = {
    "as listed": None,
    "year, newest first": ("year", False),
    "year, oldest first": ("year", True),
    "title": ("title", True),
    "topic probability": ("probability", False),
}


def paper_table(
    papers: pd.DataFrame,
    *,
    data: RunData,
    key: str,
    height: int = 400,
    columns: tuple[str, ...] = TABLE_COLUMNS,
    download: str | None = None,
) -> None:
    """Papers (rows of `data.papers`) as a table, text only, each with a link to its detail.

    At most TABLE_ROWS rows are sent; above that a caption gives the count, a picker sorts
    every row before the cap, and `download` (a file name) offers all rows as CSV.
    """
    sent = _capped(papers, key) if len(papers) > TABLE_ROWS else papers
    table = sent.loc[:, list(columns)].copy()
    table.insert(0, "open", detail_links(sent["paper_id"], data.corpus))
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
    if download:
        export_button(papers, data, download, key=f"{key}_csv")


def _capped(papers: pd.DataFrame, key: str) -> pd.DataFrame:
    """The first TABLE_ROWS rows in the order picked, under a caption that says so."""
    left, right = st.columns([3, 2], vertical_alignment="center")
    order = right.selectbox(
        "Sort by",
        list(SORTS),
        key=f"{key}_sort",
        format_func="Sort: {}".format,
        label_visibility="collapsed",
    )
    left.caption(
        md_format("First {k:,} of {n:,} papers, {order}.", k=TABLE_ROWS, n=len(papers), order=order)
    )
    ordered = papers
    if SORTS[order] is not None:
        column, ascending = SORTS[order]
        ordered = papers.sort_values(column, ascending=ascending, kind="stable", na_position="last")
    return ordered.head(TABLE_ROWS)


def export_button(papers: pd.DataFrame, data: RunData, name: str, *, key: str) -> None:
    """Every row of `papers` as CSV, with their areas, topics and subtopics; built on click."""
    st.download_button(
        md_format(
            "Download {which} (CSV)",
            which="this paper" if len(papers) == 1 else f"these {len(papers):,} papers",
        ),
        lambda: csv_text(export_frame(papers, data.nodes)),
        file_name=f"{name}.csv",
        mime="text/csv",
        key=key,
        on_click="ignore",
    )


LEVEL_NAMES = {"area": "Areas", "topic": "Topics", "subtopic": "Subtopics"}


def level_picker(data: RunData, *, default: str = "topic") -> str:
    """Area / topic / subtopic, in the URL as ?level=; only the levels this run has. It
    starts at the level `switch_to` handed over, if there is one."""
    options = levels(data)
    warn_unknown(state.LEVEL, options)
    handed = st.session_state.pop(state.HANDED_LEVEL, None)
    handed = handed if handed in options else None
    if handed:
        st.session_state[state.LEVEL] = handed
    return st.radio(
        "Level",
        options,
        # With a value set just now, a default too would draw Streamlit's warning.
        index=None if handed else options.index(default) if default in options else 0,
        key=state.LEVEL,
        bind="query-params",  # the URL holds the option as shown: ?level=area
        horizontal=True,
        help="Areas group related topics; subtopics split the large topics.",
    )


def switch_to(page: str, params: dict[str, str], *, level: str | None = None) -> NoReturn:
    """Open `page` with `params` in its URL. Streamlit refuses to hand over a parameter
    bound to a widget (the corpus, the level: "Cannot directly set query parameter"), so
    the corpus stays the session's own and `level` goes through session state, which the
    next page's `level_picker` applies before it draws itself."""
    if level is not None:
        st.session_state[state.HANDED_LEVEL] = level
    st.switch_page(page, query_params=params)


def query_select(
    label: str,
    options: list,
    param: str,
    *,
    format_func=str,
    placeholder: str | None = None,
    version: Hashable = None,
) -> object:
    """A selectbox whose value lives in the URL as `?param=<raw option>` (e.g. ?paper=<id>).

    Streamlit's bind="query-params" puts the *formatted* option in the URL (a title),
    which makes poor deep links; this keeps the raw id there. A value in the URL that
    is not an option is ignored with a notice. Without one, the picker starts blank showing
    `placeholder`, or, with no placeholder, on the first option (never blank). A new
    `version` (e.g. the curation's) makes a new widget: the browser otherwise keeps showing
    the picked option's old name.
    """
    requested = st.query_params.get(param)
    by_text = {str(o): i for i, o in enumerate(options)}
    index = (
        by_text.get(requested)
        if requested is not None
        else (0 if placeholder is None and options else None)
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
        key=f"{param}_pick" + (f"_{abs(hash(version))}" if version is not None else ""),
        placeholder=placeholder or "",
    )
    if choice is None:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != str(choice):
        st.query_params[param] = str(choice)
    return choice


def detail_links(paper_ids: pd.Series, corpus: str) -> list[str]:
    """Detail links of the papers a table sends (at most TABLE_ROWS): built per table, as
    every paper's link held for the run would cost ~150 MB at a million papers."""
    prefix = detail_link("", corpus)
    return [prefix + quote_plus(p) for p in paper_ids]


def detail_link(paper_id: str, corpus: str) -> str:
    """Relative link that opens a paper's detail (keeps the corpus, so it works when shared)."""
    return "./papers?" + urlencode({state.CORPUS: corpus, state.PAPER: paper_id})


def topic_link(corpus: str, topic: str) -> str:
    """Relative link that opens a topic on the Topics page (keeps the corpus when shared)."""
    return "./topics?" + urlencode({state.CORPUS: corpus, state.TOPIC_DETAIL: topic})


def node_links(data: RunData) -> pd.DataFrame:
    """Every node with a link to its topic on the Topics page (a subtopic opens its topic)."""
    nodes = data.nodes[data.nodes["level"] != "area"]
    topic = [topic_of(n) for n in nodes["node_id"]]
    links = [topic_link(data.corpus, t) for t in topic]
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
    """The address that reproduces this view: page path plus every query parameter, and
    always the corpus: Streamlit leaves a bound widget's default out of the URL, and the
    default corpus (the first by name) changes when a corpus named before it is built."""
    from urllib.parse import urlencode

    base = (st.context.url or "").rstrip("/")
    # st.context.url may or may not already end with the page's path; never repeat it.
    if url_path and base.endswith("/" + url_path):
        base = base[: -len(url_path) - 1]
    pairs = [(k, v) for k in st.query_params for v in st.query_params.get_all(k)]
    corpus = st.session_state.get(state.CORPUS)
    if corpus and state.CORPUS not in st.query_params:
        pairs.insert(0, (state.CORPUS, str(corpus)))
    query = urlencode(pairs)
    path = f"{base}/{url_path}" if url_path else (base or "/")
    return f"{path}?{query}" if query else path


def share_box(url_path: str, container) -> None:
    """'Copy link to this view': a code box, which has a copy button."""
    with container:
        st.caption("Link to this view (copy button on the right)")
        st.code(share_link(url_path), language=None, wrap_lines=True)
