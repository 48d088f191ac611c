"""Router: page config, navigation over pages/, and the shared sidebar (corpus picker, and
the host's sign-in where editing is configured: explorer/view/ui/editing.py)."""

from pathlib import Path

import streamlit as st

from explorer.view.text import md
from explorer.view.ui import editing, state
from explorer.view.ui.data import corpora, headline, run_of
from explorer.view.ui.widgets import share_box, warn_unknown

APP_DIR = Path(__file__).resolve().parent
st.set_page_config(page_title="Topic Explorer", page_icon="🗺️", layout="wide")

# First, before any page or link is drawn: the one-click link's key leaves the URL.
refusal = editing.sign_in_from_url(APP_DIR)
names = corpora()
if names:
    pages = [
        st.Page("pages/overview.py", title="Overview", icon="📊", default=True),
        st.Page("pages/topic_map.py", title="Topic map", icon="🗺️"),
        st.Page("pages/topics.py", title="Topics", icon="🧩"),
        st.Page("pages/trends.py", title="Trends", icon="📈"),
        st.Page("pages/papers.py", title="Papers", icon="📄"),
        st.Page("pages/compare.py", title="Compare", icon="⚖️"),
    ]
    if editing.is_editor(APP_DIR):  # omitted, not hidden: for anyone else it does not exist
        pages.append(st.Page("pages/curate.py", title="Curate", icon="✏️"))
    with st.sidebar:
        warn_unknown(state.CORPUS, names)
        picked = st.selectbox("Corpus", names, key=state.CORPUS, bind="query-params")
        st.caption(md(headline(run_of(picked))))
else:
    pages = [st.Page("pages/no_corpus.py", title="Get started", icon="🚀", default=True)]

page = st.navigation(pages)
link_slot = st.sidebar.container()
try:
    page.run()
finally:
    # After the page ran (even if it stopped early), so the link includes what it set.
    if names:
        share_box(page.url_path, link_slot)
        with st.sidebar:
            editing.sidebar(APP_DIR, refusal)
