"""Pickers bound to the URL, so a link reproduces what they show: the level, any option by
its raw value (`?paper=<id>`), the hand-over of a level to the next page, and the warning
for a link's values this corpus lacks."""

from __future__ import annotations

from collections.abc import Hashable
from typing import NoReturn

import streamlit as st

from explorer.view.text import md, md_format, shorten
from explorer.view.ui import state
from explorer.view.ui.data import RunData, levels


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


LEVELS_HELP = "Areas group related topics; subtopics split the large topics."
ONE_LEVEL_HELP = (
    "This corpus has one level: its topics are too few to group into areas, and none was "
    "split into subtopics."
)


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
        help=md(LEVELS_HELP if len(options) > 1 else ONE_LEVEL_HELP),
        disabled=len(options) == 1,  # nothing to pick
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
