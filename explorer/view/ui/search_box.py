"""The search box of the papers page and the map: "papers about X" in the user's words,
ranked among the filtered papers, and the table of the best matches.

The model that built the corpus embeds the query: its ONNX export named in the manifest
(onnxruntime, no torch), else the model itself (explorer.view.query_encoder). It is loaded
on the first query, never on page load, so browsing costs nothing. Where neither can be had
(no export and no model packages, or a hub model while offline), papers are ranked by
TF-IDF over titles and abstracts (explorer.view.search_scores), with a notice that says so.
Each new question waits for its source's fair turn first (explorer/view/ui/fair.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from explorer import artifacts
from explorer.view import query_encoder, search_scores
from explorer.view.store.filters import Filters
from explorer.view.text import counted, md_format
from explorer.view.ui import editing, fair, state
from explorer.view.ui.data import (
    RunData,
    cache_dir,
    filtered,
    per_run,
    per_view,
    process_cached,
)
from explorer.view.ui.widgets.tables import paper_table

RESULTS = 50
# Yet never more than this share of the papers searched (and at least MIN_RESULTS): among
# the 38 seed papers fifty "best" matches would be all of them, every point ringed.
RESULT_SHARE = 0.25
MIN_RESULTS = 5
SCORE_KINDS = {"semantic": "cosine similarity", "tf-idf": "TF-IDF match, not semantic"}


@process_cached(2, "Loading the query encoder (first query only)…")
def _model(name: str, onnx: artifacts.EncoderRef | None) -> tuple[object | None, str | None]:
    """The encoder, or why it cannot be had; a failure is cached too, so a model that cannot
    load (e.g. a hub model while offline) is not retried on every query."""
    try:
        return query_encoder.load_encoder(name, onnx), None
    except Exception as exc:  # noqa: BLE001 - any load failure means: fall back, say why
        return None, str(exc).splitlines()[0][:160]


@st.cache_data(show_spinner=False, max_entries=512)
def _query_vector(name: str, onnx: artifacts.EncoderRef | None, query: str) -> np.ndarray:
    model, _ = _model(name, onnx)
    return query_encoder.encode_query(model, query)


def _lexical_index(data: RunData) -> search_scores.LexicalIndex:
    papers = data.papers
    return search_scores.build_lexical_index(
        f"{t} {a}" for t, a in zip(papers["title"], papers["abstract"], strict=True)
    )


def scores(data: RunData, query: str) -> tuple[np.ndarray, str, str | None]:
    """Scores for every paper, how they were computed ('semantic' or 'tf-idf'), and why
    not semantic when it is not."""
    model = data.manifest.config.embedding_model
    onnx = artifacts.encoder_ref(cache_dir(), data.manifest)
    reason = None
    if not query_encoder.encoder_available(onnx):
        reason = _unavailable(onnx)
    elif (error := _model(model, onnx)[1]) is not None:
        reason = f"model {model!r} could not be loaded ({error})"
    else:
        vector = _query_vector(model, onnx, query)
        if vector.shape[0] == data.embeddings.shape[1]:
            return search_scores.semantic_scores(data.embeddings, vector), "semantic", None
        reason = f"model {model!r} does not match this corpus's stored embeddings"
    return search_scores.lexical_scores(per_run(data, _lexical_index), query), "tf-idf", reason


def _unavailable(onnx: artifacts.EncoderRef | None) -> str:
    if onnx is None:
        return "this build has no ONNX export of its model, and the model is not installed here"
    return "onnxruntime and tokenizers are not installed here (pip install -r requirements.txt)"


def result_count(searched: int) -> int:
    """How many best matches a search among `searched` papers lists (and the map rings)."""
    return min(RESULTS, max(MIN_RESULTS, math.ceil(RESULT_SHARE * searched)))


def matches(data: RunData, filters: Filters, query: str) -> tuple[pd.DataFrame, str | None]:
    """The best matches for `query` among the papers passing `filters` (with a `score`),
    and why the ranking is not semantic when it is not; kept per view."""
    return per_view(data, _matches, filters, query)


def _matches(data: RunData, filters: Filters, query: str) -> tuple[pd.DataFrame, str | None]:
    ranked, how, reason = scores(data, query)
    searched = filtered(data, filters).index.to_numpy()
    best = search_scores.top(ranked, searched, result_count(len(searched)))
    found = data.papers.loc[best].assign(score=ranked[best].astype(np.float32))
    if how == "tf-idf":
        found = found[found["score"] > 0]
    found.attrs["score_kind"] = SCORE_KINDS[how]  # the table says which score it shows
    found.attrs["query"] = query
    return found, reason


def _answer(data: RunData, filters: Filters, query: str) -> tuple[pd.DataFrame, str | None] | None:
    """The matches for `query`, or None when this source's fair turn did not come: a
    question the session already ran (a filter changed, the page reran) runs at once; a new
    one holds its source's turn while it is searched."""
    if st.session_state.get(state.ANSWERED) == query:
        return matches(data, filters, query)
    with fair.GATE.turn(editing.source()) as admitted:
        if not admitted:
            return None
        answer = matches(data, filters, query)
    st.session_state[state.ANSWERED] = query
    return answer


def _asked() -> None:
    st.session_state[state.ASK_CHANGED] = True


def search_box(
    data: RunData, filters: Filters, *, in_fragment: bool = False
) -> pd.DataFrame | None:
    """The query box; returns the best matches among the filtered papers (the query in
    `attrs["query"]`), or None. In a fragment (`in_fragment`), a new question reruns the
    whole page once: the sidebar's link to this view is drawn outside the fragment and
    would otherwise keep the old question."""
    query = st.text_input(
        "Ask in your own words",
        key=state.ASK,
        bind="query-params",
        on_change=_asked,
        placeholder="e.g. papers about uncertainty in robot learning",
        max_chars=state.MAX_TEXT_CHARS,  # enforced on the server too (Streamlit truncates)
        help=md_format(
            "Ranks the papers that pass the filters by meaning, not by exact words "
            "(up to {n} characters).",
            n=state.MAX_TEXT_CHARS,
        ),
    ).strip()
    if st.session_state.pop(state.ASK_CHANGED, False) and in_fragment:
        st.rerun(scope="app")
    if not query:
        return None
    answer = _answer(data, filters, query)
    if answer is None:
        st.warning(
            "Many questions are coming from your address at once, so this one was not run. "
            "Ask again in a few seconds."
        )
        return None
    found, reason = answer
    if reason:
        st.info(
            md_format("Keyword (TF-IDF) ranking, not semantic search: {reason}.", reason=reason)
        )
    return found


def results_table(found: pd.DataFrame, *, data: RunData, key: str) -> None:
    """The ranked matches, best first, with their score; text only, never HTML."""
    st.caption(
        md_format(
            "{matches} among the filtered papers (score: {kind}).",
            matches=counted(len(found), "best match", "best matches"),
            kind=found.attrs.get("score_kind", SCORE_KINDS["semantic"]),
        )
    )
    columns = ("score", "title", "authors", "venue", "year", "topic_label")
    paper_table(found, data=data, key=key, height=300, columns=columns)
