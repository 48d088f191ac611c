"""Search: TF-IDF scoring rules, and semantic ranking with the corpus's own model."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.view import search_scores

# (key phrase in the user's words, a substring of the one abstract it should find)
QUERIES = [
    ("risk-averse training of neural processes", "robust neural processes"),
    (
        "cheaper image generation by using smaller models at some decoding steps",
        "visual generation",
    ),
    ("spiking neural networks", "spiking"),
]


def test_lexical_index_scores_shared_rare_words_highest():
    texts = ["graph neural networks for molecules", "bandit regret bounds", "graph bandit"]
    index = search_scores.build_lexical_index(texts)
    scores = search_scores.lexical_scores(index, "Molecules and graphs? graph")
    assert scores.argmax() == 0 and scores[1] == 0
    assert search_scores.lexical_scores(index, "the of and").sum() == 0  # stop words only
    assert list(search_scores.top(scores, np.array([1, 2]), 5)) == [2, 1]  # respects candidates
    assert search_scores.top(scores, np.array([], dtype=int), 5).size == 0


def test_semantic_scores_are_cosines():
    unit = np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float16)
    assert np.allclose(
        search_scores.semantic_scores(unit, np.array([3.0, 4.0])), [0.6, 0.8, 1.0], atol=1e-3
    )


def _row_of(papers, needle: str) -> int:
    hits = papers.index[papers["abstract"].str.contains(needle, case=False, regex=False)]
    assert len(hits) >= 1, needle
    return int(hits[0])


@pytest.mark.parametrize(("query", "needle"), QUERIES)
def test_key_phrase_ranks_its_paper_in_top_three(seed_run, query, needle):
    from explorer.build.models import load_model

    papers = seed_run.table("papers")
    model = load_model(seed_run.manifest.config.embedding_model)
    scores = search_scores.semantic_scores(seed_run.array("embeddings"), model.encode([query])[0])
    best = search_scores.top(scores, papers.index.to_numpy(), 3)
    assert _row_of(papers, needle) in best, papers.loc[best, "title"].tolist()


@pytest.mark.parametrize(("query", "needle"), QUERIES)
def test_tf_idf_fallback_finds_them_too(seed_run, query, needle):
    papers = seed_run.table("papers")
    index = search_scores.build_lexical_index(papers["title"] + " " + papers["abstract"])
    best = search_scores.top(search_scores.lexical_scores(index, query), papers.index.to_numpy(), 3)
    assert _row_of(papers, needle) in best


def test_a_search_lists_at_most_a_quarter_of_a_small_corpus():
    from explorer.view.ui.search_box import MIN_RESULTS, RESULTS, result_count

    assert result_count(38) == 10  # the seed corpus: not every paper ringed
    assert result_count(8) == MIN_RESULTS and result_count(2) == MIN_RESULTS  # top() trims
    assert result_count(200) == RESULTS == result_count(1_000_000)
