"""Loading a run for the pages, cached per (cache dir, corpus, run id)."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer import artifacts, curation
from explorer.errors import ArtifactError
from explorer.manifest import Manifest
from explorer.names import latest_run_id, list_corpora
from explorer.view.map_layout import HIDDEN_COLOR, node_colors
from explorer.view.store.filters import Filters, filter_mask, search_haystack
from explorer.view.store.nodes import available_levels
from explorer.view.store.papers import Neighbours
from explorer.view.text import frame_without_bidi, md, without_bidi
from explorer.view.ui import state
from explorer.view.ui.stop import stop_page


class Memo:
    """A bounded, thread-safe memo shared by every session: least recently used goes first.

    Sessions run their scripts in threads of one process, so the lock guards the order
    bookkeeping; a value computed twice by two sessions at once is harmless (same value).
    """

    _MISSING = object()

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._values: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], object]) -> object:
        value = self._lookup(key)
        return self._store(key, make()) if value is Memo._MISSING else value

    def _lookup(self, key: Hashable) -> object:
        with self._lock:
            if key not in self._values:
                return Memo._MISSING
            self._values.move_to_end(key)
            return self._values[key]

    def _store(self, key: Hashable, value: object) -> object:
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.limit:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


class ProcessCache(Memo):
    """What is expensive to load (a run's verified tables, the curated run, the query
    encoder), in this process's memory rather than Streamlit's caches: Streamlit 1.67
    empties every st.cache_* on any session's `clear_cache` message, with no setting
    against it, so one visitor could make every next visit reload and re-verify its corpus.
    Unlike a Memo, one load per key at a time: other sessions wait for it rather than load
    the same corpus again."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self._loading: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, make: Callable[[], object]) -> object:
        value = self._lookup(key)
        if value is not Memo._MISSING:
            return value
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            value = self._lookup(key)  # another session may have loaded it meanwhile
            if value is Memo._MISSING:
                value = self._store(key, make())
            with self._lock:
                self._loading.pop(key, None)
            return value


def process_cached(limit: int, spinner: str) -> Callable[[Callable], Callable]:
    """`fn(*args)` kept in a ProcessCache (by its arguments, which must be hashable), with
    `spinner` shown while it loads; `.clear()` empties it (tests, never a visitor)."""

    def wrap(fn: Callable) -> Callable:
        cache = ProcessCache(limit)

        @functools.wraps(fn)
        def cached(*args: Hashable) -> object:
            def make() -> object:
                if get_script_run_ctx(suppress_warning=True) is None:  # warm-up: no page to show it
                    return fn(*args)
                with st.spinner(spinner):
                    return fn(*args)

            return cache.get((fn.__qualname__, *args), make)

        cached.clear = cache.clear  # type: ignore[attr-defined]
        return cached

    return wrap


# Run-wide values (lookups, hover texts, label placements): small, and few per run.
RUN_MEMO_ENTRIES = 512
# Views (a filter state's rows, a figure): a 3,000-paper map figure holds ~1 MB of Python
# objects, so 64 recent views cost tens of MB per run, not GBs.
VIEW_MEMO_ENTRIES = 64


@dataclass(frozen=True)
class RunData:
    """Everything a page reads, loaded once per run. Shared read-only between sessions."""

    corpus: str
    run_id: str
    manifest: Manifest
    papers: pd.DataFrame
    topics: pd.DataFrame
    doc_topics: pd.DataFrame
    neighbors: Neighbours
    hierarchy: pd.DataFrame
    keywords: pd.DataFrame
    vocab: pd.DataFrame
    nodes: pd.DataFrame  # areas, topics and subtopics (string ids)
    topic_similarity: np.ndarray
    doc_terms_indptr: np.ndarray
    doc_terms_indices: np.ndarray
    embeddings: np.ndarray  # unit-length float16, row i = papers row i; memory-mapped
    built_papers: pd.DataFrame  # the papers as built, before curation (what edits record)
    curation: tuple  # the overlay's version (curation.version) these tables include
    unmatched: tuple[dict, ...]  # curation changes whose nodes this run does not have
    refused: tuple[dict, ...]  # curation changes holding a label no longer allowed
    memo: Memo = field(default_factory=lambda: Memo(RUN_MEMO_ENTRIES), repr=False, compare=False)
    views: Memo = field(default_factory=lambda: Memo(VIEW_MEMO_ENTRIES), repr=False, compare=False)

    def row_of(self, paper_ids) -> np.ndarray:
        """Row positions (into the papers table, the doc-term matrix and the embeddings) of
        the given papers; ids not in the run are left out."""
        rows = self.memo.get("paper index", lambda: pd.Index(self.papers["paper_id"]))
        found = rows.get_indexer(list(paper_ids))
        return found[found >= 0]


# Shared, not copied per rerun (the frames are immutable; a copy of the keyword table would
# cost more than the rest of a page run), and out of reach of a visitor's clear_cache.
@process_cached(4, "Loading corpus…")
def _built(cache_dir: str, corpus: str, run_id: str) -> tuple[str, Manifest, dict, dict]:
    """A run's tables and arrays as built (verified against its manifest)."""
    run = artifacts.open_run(Path(cache_dir), corpus, run_id)
    # Bidirectional controls leave the text here, once, so no page can show them.
    tables = {
        name: frame_without_bidi(run.table(name))
        for name in artifacts.TABLES
        if name != "neighbors"
    }
    tables["papers"] = _python_strings(tables["papers"])
    tables["neighbors"] = _neighbours(run, tables["papers"])
    arrays = {name: run.array(name) for name in artifacts.ARRAYS if name != "embeddings"}
    arrays["embeddings"] = run.array("embeddings", mapped=True)  # only semantic search reads it
    return run.run_id, run.manifest, tables, arrays


def _neighbours(run: artifacts.Run, papers: pd.DataFrame) -> Neighbours:
    """The similar-papers table as row positions, reading only the three columns needed."""
    table = run.arrow("neighbors", columns=["paper_id", "neighbor_id", "similarity"])
    return Neighbours.of(pa.array(papers["paper_id"], type=pa.string()), table)


@process_cached(4, "Applying curation…")
def load_run(cache_dir: str, corpus: str, run_id: str, version: tuple = ()) -> RunData:
    """The run as its curator left it: keyed by the overlay's version too, so an edit (from
    any worker, the CLI or the Curate page) shows at the next rerun. The curated frames
    share their strings and arrays with the built ones."""
    run_id, manifest, tables, arrays = _built(cache_dir, corpus, run_id)
    # A curator's labels are untrusted text too: without bidirectional controls, like the
    # run's, before they reach the topics, the nodes and every paper's label columns.
    changes = [_clean_label(c) for c in curation.read(Path(cache_dir), corpus)]
    built = curation.BuiltTables(
        tables["papers"], tables["topics"], tables["nodes"], tables["doc_topics"],
        arrays["topic_similarity"],
    )  # fmt: skip
    cur = curation.apply(built, changes, run_id=run_id, folder=(Path(cache_dir), corpus))
    curated = {**tables, "papers": cur.papers, "topics": cur.topics, "nodes": cur.nodes}
    curated["doc_topics"] = cur.doc_topics
    return RunData(
        corpus=corpus, run_id=run_id, manifest=manifest, **curated,
        **{**arrays, "topic_similarity": cur.topic_similarity},
        built_papers=tables["papers"], curation=version, unmatched=tuple(cur.unmatched),
        refused=tuple(cur.refused),
    )  # fmt: skip


def _clean_label(change: dict) -> dict:
    """A curation change with its label (a rename's) free of bidirectional controls."""
    if isinstance(change.get("label"), str):
        return {**change, "label": without_bidi(change["label"])}
    return change


def _python_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as Python strings: every filter change takes a subset of the papers,
    and taking Arrow string columns (abstracts above all) was the largest part of a map
    rerun (17% at 3,000 papers); taking object columns moves pointers only."""
    text = [c for c in frame.columns if isinstance(frame[c].dtype, pd.StringDtype)]
    return frame.assign(**{c: _shared_strings(frame[c]) for c in text})


def _shared_strings(column: pd.Series) -> pd.Series:
    """`column` as Python strings, one object per distinct value: venue, status, labels and
    ids repeat on every row, and a million separate copies of them cost ~500 MB."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    values = np.asarray(uniques.astype(object))[codes]
    return pd.Series(values, index=column.index, dtype=object, name=column.name)


def cache_dir() -> Path:
    return artifacts.default_cache_dir()


@st.cache_data(ttl=2, show_spinner=False)
def _corpora(cache: str) -> list[str]:
    return list_corpora(Path(cache))


def corpora() -> list[str]:
    """The corpora built under the cache. Listing them checks every folder (10% of a map
    rerun's CPU under load), so the list is kept for 2 s: a new build shows up after that."""
    return _corpora(str(cache_dir()))


def headline(data: RunData) -> str:
    """One line for the sidebar: papers, topics as curated, outliers, years."""
    counts = data.manifest.counts
    years = counts.years
    span = f"{years[0]}–{years[-1]}" if len(years) > 1 else (str(years[0]) if years else "")
    topics = int((data.nodes["level"] == "topic").sum())
    return (
        f"{counts.papers:,} papers · {topics} topics · {counts.outlier_share:.1%} outliers · {span}"
    )


def current() -> RunData:
    """The corpus picked in the sidebar, at its latest complete run; stops the page with a
    message (never a traceback) when it cannot be loaded."""
    corpus = st.session_state.get(state.CORPUS)
    names = corpora()
    if corpus not in names:
        corpus = names[0] if names else None
    if corpus is None:
        st.info("No corpus is built yet: `explorer build data/icml2025 --name icml2025`")
        stop_page()
    return run_of(corpus)


def run_of(corpus: str) -> RunData:
    """A built corpus at its latest complete run, curated; stops the page with a message
    when it cannot be loaded."""
    try:
        return _loaded(corpus)
    except ArtifactError as exc:
        st.error(md(exc))
        stop_page()


def sidebar_headline(corpus: str) -> str | None:
    """`headline` of the corpus, or None when it cannot be loaded (the page says why)."""
    try:
        return headline(_loaded(corpus))
    except ArtifactError:
        return None


def _loaded(corpus: str) -> RunData:
    run_id = latest_run_id(cache_dir(), corpus)
    # One stat per rerun tells whether the curation changed.
    return load_run(str(cache_dir()), corpus, run_id, curation.version(cache_dir(), corpus))


@st.cache_data(show_spinner=False, max_entries=8)
def _default_keywords(cache_dir: str, corpus: str, run_id: str) -> list[str]:
    from explorer.view.store.trends import preselected_terms

    tables = _built(cache_dir, corpus, run_id)[2]  # keywords: curation does not change them
    return preselected_terms(tables["keywords"], tables["vocab"], len(tables["papers"]))


def default_keywords(data: RunData) -> list[str]:
    """The Trends page's preselection (fastest risers first year -> last), once per run:
    it costs a full log-odds ranking, and every rerun would otherwise repeat it."""
    return _default_keywords(str(cache_dir()), data.corpus, data.run_id)


def _key(fn: Callable, args: tuple) -> tuple:
    return (fn.__module__, fn.__qualname__, args)


def per_run(data: RunData, fn: Callable, *args: Hashable):
    """`fn(data, *args)` computed once per run and arguments, shared by every session.

    For what every rerun would otherwise repeat although only the run decides it: lookups,
    hover texts, label placements, the Trends page's aggregate queries (each scans the
    keyword table). Results are shared objects: callers must not modify them.
    """
    return data.memo.get(_key(fn, args), lambda: fn(data, *args))


def per_view(data: RunData, fn: Callable, *args: Hashable):
    """`fn(data, *args)` for one view (filters, level, ...), kept for the most recent views.

    Two visitors on the same view, or one going back to a view, are served from here; the
    bound keeps memory flat however many distinct views a crowd asks for.
    """
    return data.views.get(_key(fn, args), lambda: fn(data, *args))


def _haystack(data: RunData) -> pd.Series:
    return search_haystack(data.papers)


def _filtered(data: RunData, filters: Filters) -> pd.DataFrame:
    return data.papers.loc[filter_mask(data.papers, filters, per_run(data, _haystack))]


def filtered(data: RunData, filters: Filters) -> pd.DataFrame:
    """The papers that pass `filters`, kept per view: the search over every abstract is
    the costly part, and the frame itself is small (its text columns hold pointers to the
    run's strings). Shared: callers must not modify it."""
    return per_view(data, _filtered, filters)


def _levels(data: RunData) -> list[str]:
    return available_levels(data.nodes)


def levels(data: RunData) -> list[str]:
    """`store.available_levels` of this run, once per run. Callers must not modify it."""
    return per_run(data, _levels)


def _node_colors(data: RunData) -> dict[str, str]:
    colors = node_colors(data.nodes)
    if "hidden" in data.nodes:  # a curator's hidden nodes are greyed, not gone
        colors.update(dict.fromkeys(data.nodes.loc[data.nodes["hidden"], "node_id"], HIDDEN_COLOR))
    return colors


def colors(data: RunData) -> dict[str, str]:
    """Every node's colour (areas as hues, topics as shades): once per run, shared by pages.
    Callers must not modify the dict."""
    return per_run(data, _node_colors)
