"""NPMI coherence and topic diversity, and how the views rank and mark with them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import csr_matrix

from explorer.build import coherence as C
from explorer.build.summaries import document_terms
from explorer.view import store


def _binary(rows: list[list[int]], n_terms: int) -> csr_matrix:
    dense = np.zeros((len(rows), n_terms), dtype=np.int32)
    for i, cols in enumerate(rows):
        dense[i, cols] = 1
    return csr_matrix(dense)


def test_npmi_is_one_for_words_always_together_and_minus_one_for_words_never_together():
    matrix = _binary([[0, 1], [0, 1], [2], [3]], 4)
    assert C.npmi(matrix, [0, 1]) == pytest.approx(1.0)
    assert C.npmi(matrix, [0, 2]) == pytest.approx(-1.0)


def test_npmi_is_zero_for_independent_words_and_averages_pairs():
    matrix = _binary([[0, 1], [0], [1], []], 3)  # p(a) = p(b) = 1/2, p(a, b) = 1/4
    assert C.npmi(matrix, [0, 1]) == pytest.approx(0.0)
    three = _binary([[0, 1], [0, 1], [2], [2]], 3)
    assert C.npmi(three, [0, 1, 2]) == pytest.approx((1 - 1 - 1) / 3)


def test_npmi_needs_two_distinct_words():
    matrix = _binary([[0], [1]], 2)
    assert math.isnan(C.npmi(matrix, [0]))
    assert math.isnan(C.npmi(matrix, [1, 1]))


def test_diversity_is_the_share_of_distinct_words():
    assert C.diversity([["a", "b"], ["b", "c"]]) == pytest.approx(0.75)
    assert C.diversity([["a", "b"], ["c", "d"]]) == 1.0
    assert math.isnan(C.diversity([]))


BOILERPLATE = "We propose a novel method with better performance than existing methods."
FIELDS = {
    "stars": "galaxy redshift telescope photometry supernova quasar nebula spectra",
    "cells": "protein enzyme genome mitochondria ribosome antibody receptor peptide",
}


def _corpus():
    rng = np.random.default_rng(0)
    docs, members = [], {}
    for node, words in FIELDS.items():
        vocab = words.split()
        start = len(docs)
        for _ in range(20):
            picked = rng.choice(vocab, size=5, replace=False)
            docs.append(f"{' '.join(picked)}. {BOILERPLATE}")
        members[node] = np.arange(start, len(docs))
    return docs, members, {n: None for n in members}


def test_top_words_are_each_node_s_own_field_and_never_boilerplate():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    best = C.top_words(matrix, vocabulary, members)
    for node, words in best.items():
        assert 1 <= len(words) <= C.TOP_WORDS
        assert set(words) <= set(FIELDS[node].split()), (node, words)


def test_coherent_topics_score_above_mixed_ones_and_the_level_is_diverse():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    nodes = pd.DataFrame({"node_id": list(members), "level": "topic"})
    scored = C.with_coherence(nodes, matrix, vocabulary, members)
    column = {str(t): i for i, t in enumerate(vocabulary)}
    mixed = C.npmi(matrix, [column[w] for w in ["galaxy", "quasar", "protein", "enzyme"]])
    assert (scored["coherence"] > mixed).all()
    quality = C.level_quality(scored, ["topic", "area"])
    assert set(quality) == {"topic"}
    assert quality["topic"]["diversity"] == 1.0
    assert quality["topic"]["low_coherence"] == int((scored["coherence"] < 0).sum())


def test_the_topics_table_marks_low_coherence_and_exports_carry_it():
    nodes = pd.DataFrame(
        {
            "node_id": ["0", "1"],
            "level": "topic",
            "parent_id": ["A0", "A0"],
            "label": ["a", "b"],
            "long_label": ["a", "b"],
            "size": [5, 3],
            "share": [0.5, 0.3],
            "coherence": [0.2, -0.1],
        }
    )
    table = store.node_table(nodes, "topic")
    assert table["note"].tolist() == ["", "low coherence"]
    assert "coherence" in table


def test_keywords_rank_subjects_before_boilerplate():
    vocab = pd.DataFrame(
        {
            "term": ["propose", "galaxy", "novel", "neural networks"],
            "df": [30, 5, 25, 8],
            "specificity": [0.0, 1.0, 0.0, 0.3],
        }
    )
    ranked = store.ranked_terms(vocab)["term"].tolist()
    assert ranked == ["galaxy", "neural networks", "propose", "novel"]  # then most used
    # A run built before specificity: most used first, as before.
    assert store.ranked_terms(vocab.drop(columns="specificity"))["term"].tolist()[0] == "propose"


def test_contrast_keywords_never_offer_boilerplate():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    from explorer.build.summaries import vocabulary_table

    vocab = vocabulary_table(matrix, vocabulary)
    assert vocab.loc[vocab["term"] == "propose", "specificity"].item() == 0.0
    rows = members["stars"]
    top = store.contrast_keywords(matrix.indptr, matrix.indices, vocab, rows)
    assert len(top) and not {"propose", "novel", "better", "performance"} & set(top["term"])


def test_pieces_of_links_hyphenated_words_and_numbers_are_no_keywords():
    from explorer.build.summaries import vocabulary_table

    docs = [
        "Self-supervised galaxy maps; code at https://github.com/x/y in 2024.",
        "Self-supervised galaxy surveys, 2024 release: https://github.com/z.",
    ]
    matrix, vocabulary = document_terms(docs, min_df=1)
    vocab = vocabulary_table(matrix, vocabulary, docs)
    spec = dict(zip(vocab["term"], vocab["specificity"], strict=True))
    assert spec["galaxy"] > 0
    for piece in ("https", "github", "self", "supervised", "2024", "self supervised"):
        assert spec[piece] == 0, piece
    best = C.top_words(
        matrix, vocabulary, {"all": np.arange(2)}, weights=vocab["specificity"].to_numpy()
    )
    assert "galaxy" in best["all"] and not {"https", "github", "self", "2024"} & set(best["all"])
