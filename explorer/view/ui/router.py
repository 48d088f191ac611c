"""Make sure every page runs under app.py's router, even on a fresh server.

Because `pages/` exists, Streamlit starts in its legacy multipage mode: until some
session has run app.py (whose st.navigation switches the server to the modern mode),
a deep link such as /topic_map?q=... runs the page file alone, without the router,
page config or corpus picker. A page that finds itself in that mode flips the flag
and reruns, so app.py routes the very same URL.

`PagesManager.uses_pages_directory` is private Streamlit API: pyproject.toml pins
streamlit below 1.68, and tests/test_app.py fails loudly if the flag disappears, while
tests/e2e/test_browser.py checks the behaviour (a deep link on a fresh server).
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure_router() -> None:
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
