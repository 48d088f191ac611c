"""The router app.py runs for every page: page config, navigation over pages/, and the
shared sidebar (corpus picker, and the host's sign-in where editing is configured:
explorer/view/ui/editing.py).

`ensure_router` makes sure every page runs under it, even on a fresh server. Because
`pages/` exists, Streamlit starts in its legacy multipage mode: until some session has run
app.py (whose st.navigation switches the server to the modern mode), a deep link such as
/topic_map?q=... runs the page file alone, without the router, page config or corpus
picker. A page that finds itself in that mode flips the flag and reruns, so app.py routes
the very same URL.

`PagesManager.uses_pages_directory` is private Streamlit API: pyproject.toml pins
streamlit below 1.68, and tests/test_app.py fails loudly if the flag disappears, while
tests/e2e/test_browser.py checks the behaviour (a deep link on a fresh server).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from explorer.view.text import md
from explorer.view.ui import editing, state
from explorer.view.ui.data import corpora, sidebar_headline
from explorer.view.ui.stop import PageStopped
from explorer.view.ui.widgets.pickers import warn_unknown
from explorer.view.ui.widgets.share import share_box


def ensure_router() -> None:
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def route(app_dir: Path) -> None:
    """Draw the page the URL names, with the sidebar every page shares."""
    st.set_page_config(page_title="Topic Explorer", page_icon="🗺️", layout="wide")
    # First, before any page or link is drawn: the one-click link's key leaves the URL.
    refusal = editing.sign_in_from_url(app_dir)
    names = corpora()
    if names:
        pages = _pages(editing.is_editor(app_dir))
        with st.sidebar:
            warn_unknown(state.CORPUS, names)
            picked = st.selectbox("Corpus", names, key=state.CORPUS, bind="query-params")
            line = sidebar_headline(picked)
            if line:
                st.caption(md(line))
    else:
        pages = [st.Page("pages/no_corpus.py", title="Get started", icon="🚀", default=True)]
    page = st.navigation(pages)
    link_slot = st.sidebar.container()
    try:
        page.run()
    except PageStopped:
        pass  # the page said why it stopped; the sidebar is still drawn
    finally:
        # After the page ran (even if it stopped early), so the link includes what it set.
        if names:
            share_box(page.url_path, link_slot)
            with st.sidebar:
                editing.sidebar(app_dir, refusal)


# Every visitor's pages: URL path (pages/<path>.py), title, icon; the first is the default.
PAGE_PATHS = {
    "overview": ("Overview", "📊"),
    "topic_map": ("Topic map", "🗺️"),
    "topics": ("Topics", "🧩"),
    "trends": ("Trends", "📈"),
    "papers": ("Papers", "📄"),
    "compare": ("Compare", "⚖️"),
}


def _pages(editor: bool) -> list:
    pages = [
        st.Page(f"pages/{path}.py", title=title, icon=icon, default=index == 0)
        for index, (path, (title, icon)) in enumerate(PAGE_PATHS.items())
    ]
    if editor:  # omitted, not hidden: for anyone else the Curate page does not exist
        pages.append(st.Page("pages/curate.py", title="Curate", icon="✏️"))
    return pages
