"""Ending a page early without losing the sidebar every page shares.

`st.stop()` ends the whole script run: the router's link box and the host's sign-in, drawn
after the page (explorer/view/ui/router.py), would vanish with it. A page that has said why
it cannot go on calls `stop_page()` instead; the router catches `PageStopped` and draws the
sidebar as usual.
"""

from __future__ import annotations

from typing import NoReturn


class PageStopped(Exception):
    """The page ended early, having shown why."""


def stop_page() -> NoReturn:
    """End the page here (not the run): only outside a fragment, which the router does not
    wrap."""
    raise PageStopped
