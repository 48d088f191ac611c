"""The sidebar's filters, bound to the URL: nodes of any level (by id), text search, status,
venue, years, topic probability and stability, curator-hidden topics."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from explorer.view.store.filters import Filters, year_range
from explorer.view.store.nodes import levels_named, node_name
from explorer.view.text import md, md_format
from explorer.view.ui import state
from explorer.view.ui.data import RunData, levels, per_run
from explorer.view.ui.widgets.pickers import warn_unknown


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
    label: str  # the node filter's: the levels this run has ("Topics" on a short list)


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
        label=levels_named(levels(data)),
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
        md(choices.label),
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
