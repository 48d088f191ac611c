"""Read-only queries the pages need: filter, search, select, aggregate, export.

Pure pandas/numpy, no Streamlit, so every rule here is unit-tested directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

OUTLIER = -1  # same value as explorer.topics.OUTLIER, without importing the pipeline

EXPORT_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status",
    "topic_id", "topic_label", "probability", "x", "y",
)  # fmt: skip


def export_frame(papers: pd.DataFrame) -> pd.DataFrame:
    """One row per paper with the columns `explorer export` promises, in that order."""
    return papers.loc[:, list(EXPORT_COLUMNS)].reset_index(drop=True)


# --- filtering -----------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """The sidebar's filters; empty means 'no restriction'. They compose with AND."""

    topics: tuple[int, ...] = ()
    statuses: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()
    years: tuple[int, int] | None = None
    query: str = ""
    min_probability: float = 0.0
    show_outliers: bool = True


def search_mask(papers: pd.DataFrame, query: str) -> np.ndarray:
    """Case-insensitive literal match of every word of `query` in title, abstract or authors."""
    words = query.casefold().split()
    if not words:
        return np.ones(len(papers), dtype=bool)
    haystack = (
        papers["title"] + "\n" + papers["abstract"] + "\n" + papers["authors"]
    ).str.casefold()
    mask = np.ones(len(papers), dtype=bool)
    for word in words:
        mask &= haystack.str.contains(word, regex=False).to_numpy()
    return mask


def filter_mask(papers: pd.DataFrame, filters: Filters) -> np.ndarray:
    """Which rows of `papers` pass every filter."""
    mask = np.ones(len(papers), dtype=bool)
    if filters.topics:
        mask &= papers["topic_id"].isin(filters.topics).to_numpy()
    if not filters.show_outliers:
        mask &= (papers["topic_id"] != OUTLIER).to_numpy()
    if filters.statuses:
        mask &= papers["status"].isin(filters.statuses).to_numpy()
    if filters.venues:
        mask &= papers["venue"].isin(filters.venues).to_numpy()
    if filters.years is not None:
        low, high = filters.years
        years = papers["year"]
        mask &= (years.ge(low) & years.le(high)).fillna(False).to_numpy(dtype=bool)
    if filters.min_probability > 0:
        mask &= (papers["probability"] >= filters.min_probability).to_numpy()
    if filters.query.strip():
        mask &= search_mask(papers, filters.query)
    return mask


def filter_papers(papers: pd.DataFrame, filters: Filters) -> pd.DataFrame:
    return papers.loc[filter_mask(papers, filters)]


# --- selections ------------------------------------------------------------------------


def selection_to_ids(points: list[dict], visible_ids: set[str] | None = None) -> list[str]:
    """Paper ids from a plotly selection event's points (paper_id travels in customdata).

    Points without a paper id (labels, annotations) are ignored; with `visible_ids`,
    ids no longer shown (the filters changed since the selection) are dropped.
    """
    ids: list[str] = []
    for point in points or []:
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)):
            custom = custom[0] if custom else None
        if isinstance(custom, str) and (visible_ids is None or custom in visible_ids):
            ids.append(custom)
    return list(dict.fromkeys(ids))


def topic_mix(papers: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """How many of `papers` fall in each topic, largest first."""
    counts = papers["topic_id"].value_counts().rename_axis("topic_id").reset_index(name="papers")
    mix = counts.merge(topics[["topic_id", "label"]], on="topic_id", how="left")
    mix["share"] = mix["papers"] / max(len(papers), 1)
    return mix.sort_values(["papers", "topic_id"], ascending=[False, True], ignore_index=True)


def term_document_frequency(
    indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray, n_terms: int
) -> np.ndarray:
    """Document frequency of every term among `rows` of the binary doc-term matrix."""
    if len(rows) == 0:
        return np.zeros(n_terms, dtype=np.int64)
    starts, stops = indptr[rows], indptr[rows + 1]
    lengths = stops - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    picked = indices[np.arange(lengths.sum()) + offsets]
    return np.bincount(picked, minlength=n_terms)


def contrast_keywords(
    indptr: np.ndarray,
    indices: np.ndarray,
    vocab: pd.DataFrame,
    rows: np.ndarray,
    *,
    top: int = 15,
) -> pd.DataFrame:
    """Terms that characterise `rows` against the whole corpus, c-TF-IDF style:
    share of selected papers using the term x log(1 + corpus size / corpus df)."""
    n_docs = len(indptr) - 1
    selected = term_document_frequency(
        indptr, indices, np.asarray(rows, dtype=np.int64), len(vocab)
    )
    corpus_df = vocab["df"].to_numpy()
    min_count = 2 if len(rows) >= 10 else 1
    score = (selected / max(len(rows), 1)) * np.log1p(n_docs / np.maximum(corpus_df, 1))
    score[selected < min_count] = 0
    best = [i for i in np.argsort(-score, kind="stable")[:top] if score[i] > 0]
    return pd.DataFrame(
        {
            "term": vocab["term"].to_numpy()[best],
            "selected_papers": selected[best],
            "selected_share": selected[best] / max(len(rows), 1),
            "corpus_share": corpus_df[best] / max(n_docs, 1),
            "score": score[best],
        }
    )


def topic_table(topics: pd.DataFrame) -> pd.DataFrame:
    """The topics page's sortable table: one row per topic, keywords joined for reading."""
    table = topics.loc[
        topics["topic_id"] != OUTLIER, ["topic_id", "label", "size", "share", "keywords"]
    ].copy()
    table["keywords"] = [", ".join(k) for k in table["keywords"]]
    return table.reset_index(drop=True)
