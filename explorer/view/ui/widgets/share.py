"""What takes a view away: the link that reproduces it (in a box with a copy button) and a
chart as a standalone HTML file."""

from __future__ import annotations

import streamlit as st

from explorer.hosting.settings import MAX_LINK_CHARS
from explorer.view.text import md_format
from explorer.view.ui import state


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
    link = share_link(url_path)
    with container:
        st.caption("Link to this view (copy button on the right)")
        if len(link) > MAX_LINK_CHARS:  # said first: the link itself fills the sidebar
            st.warning(
                md_format(
                    "This link is {n} characters long: a shared dashboard refuses links "
                    "over {limit}. Select fewer items to shorten it.",
                    n=f"{len(link):,}",
                    limit=f"{MAX_LINK_CHARS:,}",
                )
            )
        st.code(link, language=None, wrap_lines=True)
