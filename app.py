"""The dashboard. Streamlit runs this file for every visitor's page (`__main__`: the router
of explorer/view/ui/router.py); `streamlit run app.py` first imports it to find `app`, the
server, which adds explorer/view/ui/asgi.py's guards (foreign origins refused, visitors'
clear_cache dropped, metrics for the host only, corpora loaded before the first visitor) in
front of Streamlit."""

from pathlib import Path

import streamlit as st

APP_DIR = Path(__file__).resolve().parent

if __name__ == "__main__":
    from explorer.view.ui.router import route

    route(APP_DIR)
else:
    from starlette.middleware import Middleware

    from explorer.view.ui import asgi

    app = st.App(
        __file__,
        middleware=[Middleware(asgi.VisitorGuard, app_dir=APP_DIR)],
        lifespan=asgi.lifespan,
    )
