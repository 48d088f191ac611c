"""Free-text search for the papers page and the map: "papers about X" in the user's words.

The model that built the corpus (named in the manifest) embeds the query; it is loaded on
the first query, never on page load, so browsing costs nothing. Where it cannot be
loaded (a viewer-only install without the build extra, or a hub model while offline),
papers are ranked by TF-IDF over titles and abstracts, with a notice that says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer.view import encoder, search
from explorer.view.text import md_format
from explorer.view.ui import state
from explorer.view.ui.data import RunData, per_run
from explorer.view.ui.widgets import paper_table

RESULTS = 50
SCORE_KINDS = {"semantic": "cosine similarity", "tf-idf": "TF-IDF match, not semantic"}


@st.cache_resource(show_spinner="Loading the embedding model (first query only)…", max_entries=2)
def _model(name: str) -> tuple[object | None, str | None]:
    """The model, or why it cannot be had; a failure is cached too, so a model that cannot
    load (e.g. a hub model while offline) is not retried on every query."""
    try:
        return encoder.load_encoder(name), None
    except Exception as exc:  # noqa: BLE001 - any load failure means: fall back, say why
        return None, str(exc).splitlines()[0][:160]


@st.cache_data(show_spinner=False, max_entries=512)
def _query_vector(name: str, query: str) -> np.ndarray:
    model, _ = _model(name)
    return encoder.encode_query(model, query)


def _lexical_index(data: RunData) -> search.LexicalIndex:
    papers = data.papers
    return search.build_lexical_index(
        f"{t} {a}" for t, a in zip(papers["title"], papers["abstract"], strict=True)
    )


def scores(data: RunData, query: str) -> tuple[np.ndarray, str, str | None]:
    """Scores for every paper, how they were computed ('semantic' or 'tf-idf'), and why
    not semantic when it is not."""
    model = data.manifest.get("config", {}).get("embedding_model", "")
    reason = None
    if not encoder.encoder_available():
        reason = "the embedding model is not installed here (viewer-only install)"
    elif (error := _model(model)[1]) is not None:
        reason = f"model {model!r} could not be loaded ({error})"
    else:
        vector = _query_vector(model, query)
        if vector.shape[0] == data.embeddings.shape[1]:
            return search.semantic_scores(data.embeddings, vector), "semantic", None
        reason = f"model {model!r} does not match this corpus's stored embeddings"
    return search.lexical_scores(per_run(data, _lexical_index), query), "tf-idf", reason


def search_box(data: RunData, shown: pd.DataFrame) -> pd.DataFrame | None:
    """The query box; returns the best matches among `shown` (with a `score`), or None."""
    query = st.text_input(
        "Ask in your own words",
        key=state.ASK,
        bind="query-params",
        placeholder="e.g. papers about uncertainty in robot learning",
        help="Ranks the papers that pass the filters by meaning, not by exact words.",
    ).strip()
    if not query:
        return None
    ranked, how, reason = scores(data, query)
    if reason:
        st.info(
            md_format("Keyword (TF-IDF) ranking, not semantic search: {reason}.", reason=reason)
        )
    best = search.top(ranked, shown.index.to_numpy(), RESULTS)
    found = data.papers.loc[best].assign(score=ranked[best].astype(np.float32))
    if how == "tf-idf":
        found = found[found["score"] > 0]
    found.attrs["score_kind"] = SCORE_KINDS[how]  # the table says which score it shows
    return found


def results_table(found: pd.DataFrame, *, data: RunData, key: str) -> None:
    """The ranked matches, best first, with their score; text only, never HTML."""
    st.caption(
        md_format(
            "{n} best matches among the filtered papers (score: {kind}).",
            n=len(found),
            kind=found.attrs.get("score_kind", SCORE_KINDS["semantic"]),
        )
    )
    columns = ("score", "title", "authors", "venue", "year", "topic_label")
    paper_table(found, data=data, key=key, height=300, columns=columns)
