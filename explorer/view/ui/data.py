"""Loading a run for the pages, cached per (cache dir, corpus, run id)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from explorer import artifacts
from explorer.errors import ArtifactError
from explorer.view.map_layout import node_colors
from explorer.view.text import md
from explorer.view.ui import state


@dataclass(frozen=True)
class RunData:
    """Everything a page reads, loaded once per run. Shared read-only between sessions."""

    corpus: str
    run_id: str
    manifest: dict
    papers: pd.DataFrame
    topics: pd.DataFrame
    doc_topics: pd.DataFrame
    neighbors: pd.DataFrame
    hierarchy: pd.DataFrame
    keywords: pd.DataFrame
    vocab: pd.DataFrame
    nodes: pd.DataFrame  # areas, topics and subtopics (string ids)
    topic_similarity: np.ndarray
    doc_terms_indptr: np.ndarray
    doc_terms_indices: np.ndarray
    embeddings: np.ndarray  # unit-length float16, row i = papers row i

    def row_of(self, paper_ids) -> np.ndarray:
        """Row positions (into the doc-term matrix) of the given papers."""
        index = pd.Index(self.papers["paper_id"])
        rows = index.get_indexer(list(paper_ids))
        return rows[rows >= 0]


# cache_resource, not cache_data: the frames are immutable and shared, and a per-rerun
# copy of the keyword table would cost more than the rest of a page run.
@st.cache_resource(show_spinner="Loading corpus…", max_entries=8)
def load_run(cache_dir: str, corpus: str, run_id: str) -> RunData:
    run = artifacts.open_run(Path(cache_dir), corpus, run_id)
    tables = {name: run.table(name) for name in artifacts.TABLES}
    arrays = {name: run.array(name) for name in artifacts.ARRAYS}
    return RunData(corpus=corpus, run_id=run.run_id, manifest=run.manifest, **tables, **arrays)


def cache_dir() -> Path:
    return artifacts.default_cache_dir()


def corpora() -> list[str]:
    return artifacts.list_corpora(cache_dir())


def headline(corpus: str) -> str:
    """One line for the sidebar, from the manifest alone (no table is loaded)."""
    try:
        counts = artifacts.open_run(cache_dir(), corpus, verify=False).manifest["counts"]
    except ArtifactError as exc:
        return str(exc)
    years = counts["years"]
    span = f"{years[0]}–{years[-1]}" if len(years) > 1 else (str(years[0]) if years else "")
    return f"{counts['papers']:,} papers · {counts['topics']} topics · {counts['outlier_share']:.0%} outliers · {span}"


def current() -> RunData:
    """The corpus picked in the sidebar, at its latest complete run; stops the page with a
    message (never a traceback) when it cannot be loaded."""
    corpus = st.session_state.get(state.CORPUS)
    names = corpora()
    if corpus not in names:
        corpus = names[0] if names else None
    if corpus is None:
        st.info("No corpus is built yet: `explorer build data/icml2025 --name icml2025`")
        st.stop()
    run_id = artifacts.latest_run_id(cache_dir(), corpus)
    try:
        return load_run(str(cache_dir()), corpus, run_id)
    except ArtifactError as exc:
        st.error(md(exc))
        st.stop()


@st.cache_data(show_spinner=False, max_entries=8)
def _default_keywords(cache_dir: str, corpus: str, run_id: str) -> list[str]:
    from explorer.view.store import class_values, rising_terms

    data = load_run(cache_dir, corpus, run_id)
    years = class_values(data.keywords, "year")
    if len(years) > 1:
        return (
            rising_terms(data.keywords, data.vocab, "year", years[0], years[-1])["term"]
            .head(3)
            .tolist()
        )
    return data.vocab.sort_values(["df", "term"], ascending=[False, True])["term"].head(3).tolist()


def default_keywords(data: RunData) -> list[str]:
    """The Trends page's preselection (fastest risers first year -> last), once per run:
    it costs a full log-odds ranking, and every rerun would otherwise repeat it."""
    return _default_keywords(str(cache_dir()), data.corpus, data.run_id)


@st.cache_resource(show_spinner=False, max_entries=512)
def _per_run(corpus: str, run_id: str, name: str, args: tuple, _data: RunData, _fn: Callable):
    return _fn(_data, *args)


def per_run(data: RunData, fn: Callable, *args: Hashable):
    """`fn(data, *args)` computed once per run and arguments, shared by every session.

    For the aggregate queries of the Trends page: each scans the keyword table (~1 s of
    a 3,000-paper page run in all), and the same few arguments repeat on every rerun.
    Results are shared objects: callers must not modify them.
    """
    return _per_run(data.corpus, data.run_id, f"{fn.__module__}.{fn.__qualname__}", args, data, fn)


def _node_colors(data: RunData) -> dict[str, str]:
    return node_colors(data.nodes)


def colors(data: RunData) -> dict[str, str]:
    """Every node's colour (areas as hues, topics as shades): once per run, shared by pages.
    Callers must not modify the dict."""
    return per_run(data, _node_colors)
