"""Paper tables: at most TABLE_ROWS rows sent, sorted before the cap, every row as CSV on
click, and the links in them (a paper's detail, a topic on the Topics page)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote_plus, urlencode

import streamlit as st

from explorer.node_ids import topic_of
from explorer.view.store.papers import export_frame
from explorer.view.text import csv_text, md_format
from explorer.view.ui import state
from explorer.view.ui.data import RunData

if TYPE_CHECKING:
    import pandas as pd


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
