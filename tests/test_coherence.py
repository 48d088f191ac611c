"""NPMI coherence and topic diversity, and how the views rank and mark with them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from explorer.build import coherence as C
from explorer.build.summaries import document_terms, label_merges, vocabulary_table
from explorer.view.store.keywords import contrast_keywords, one_per_form, ranked_terms
from explorer.view.store.topics import node_table
from explorer.view.store.trends import preselected_terms


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


def _top_words(matrix, vocabulary, members) -> dict[str, list[str]]:
    ranked = C.ranked_words(C.word_counts(matrix, vocabulary, members))
    return dict(zip(members, ranked, strict=True))


def test_top_words_are_each_node_s_own_field_and_never_boilerplate():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    best = _top_words(matrix, vocabulary, members)
    for node, words in best.items():
        assert 1 <= len(words) <= C.TOP_WORDS
        assert set(words) <= set(FIELDS[node].split()), (node, words)


def test_merged_counts_are_the_counts_of_the_merged_nodes_papers():
    docs, members, _ = _corpus()
    halves = {f"{node}{k}": rows[k::2] for node, rows in members.items() for k in (0, 1)}
    matrix, vocabulary = document_terms(docs, min_df=1)
    counts = C.word_counts(matrix, vocabulary, halves)
    merged = counts.merged([[0, 1], [2, 3], [0, 1, 2, 3]])
    whole = C.word_counts(matrix, vocabulary, {**members, "all": np.arange(len(docs))})
    assert (merged.df != whole.df).nnz == 0
    assert merged.sizes.tolist() == whole.sizes.tolist() == [20, 20, 40]


def test_a_merge_parent_is_named_by_its_topics_subject_never_by_boilerplate():
    """BERTopic named the seed corpus's one merge "models, learning, data": the words every
    abstract writes. A parent is named as a node's top words are ranked."""
    docs, members, _ = _corpus()
    topics = {str(k): rows[k % 2 :: 2] for k, rows in enumerate(members.values())}
    topics |= {str(k + 2): rows[1 - k % 2 :: 2] for k, rows in enumerate(members.values())}
    matrix, vocabulary = document_terms(docs, min_df=1)
    counts = C.word_counts(matrix, vocabulary, topics)
    tree = pd.DataFrame({"parent_id": [4, 5], "parent_label": "", "topics": [[0, 2], [1, 3]]})
    named = label_merges(tree, counts, list(topics))
    for label, field in zip(named["parent_label"], FIELDS.values(), strict=True):
        words = label.split(", ")
        assert 1 <= len(words) <= 3 and set(words) <= set(field.split()), label
    empty = tree.iloc[:0]
    assert label_merges(empty, counts, list(topics)).empty


def test_a_merge_parent_is_named_by_telling_words_before_merely_frequent_ones():
    """ "effectiveness" (no boilerplate, but common in every field: low specificity) is in
    every paper of the stars topics: ranked as top words are, it comes first; a name
    weights by specificity and leaves it out."""
    docs, members, _ = _corpus()
    stars = members["stars"]
    docs = [f"{d} Its effectiveness." if i in set(stars) else d for i, d in enumerate(docs)]
    topics = {"0": stars[::2], "1": stars[1::2], "2": members["cells"]}
    matrix, vocabulary = document_terms(docs, min_df=1)
    counts = C.word_counts(matrix, vocabulary, topics)
    assert C.ranked_words(counts.merged([[0, 1]]))[0][0] == "effectiveness"
    tree = pd.DataFrame({"parent_id": [3], "parent_label": "", "topics": [[0, 1]]})
    label = label_merges(tree, counts, list(topics))["parent_label"].item()
    assert set(label.split(", ")) <= set(FIELDS["stars"].split()), label


def test_coherent_topics_score_above_mixed_ones_and_the_level_is_diverse():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    nodes = pd.DataFrame({"node_id": list(members), "level": "topic"})
    scored = C.with_coherence(nodes, matrix, vocabulary, _top_words(matrix, vocabulary, members))
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
    table = node_table(nodes, "topic")
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
    ranked = ranked_terms(vocab, 40)["term"].tolist()
    assert ranked == ["galaxy", "neural networks", "propose", "novel"]  # then most used
    # A run built before specificity: most used first, as before.
    old = vocab.drop(columns="specificity")
    assert ranked_terms(old, 40)["term"].tolist()[0] == "propose"


def test_keywords_the_venues_use_as_often_come_after_the_corpus_subjects():
    """ "extensive" is no boilerplate by the rule, but a corpus writing it as often as the
    venues do (30% here, 30% there) is not about it; "galaxy" (10% here, 0.2% there) is."""
    vocab = pd.DataFrame(
        {
            "term": ["extensive", "galaxy"],
            "df": [12, 4],
            "specificity": [0.5, 1.0],
            "background_share": [0.3, 0.002],
        }
    )
    assert ranked_terms(vocab, 40)["term"].tolist() == ["galaxy", "extensive"]


def test_a_short_list_ranks_by_the_share_its_counts_support():
    """On 38 papers, 9 using a word the venues write in 7% of abstracts is no evidence of a
    subject (the Wilson bound of 9/38 is 17%, not 24%); on 3,800 papers the same share is."""
    from explorer.view.store.keywords import supported_share

    small = supported_share(np.array([0.0, 1, 9, 38]), 38)
    assert (
        small[0] == 0 and (np.diff(small) > 0).all() and (small < [1e-9, 1 / 38, 9 / 38, 1]).all()
    )
    large = supported_share(np.array([900.0]), 3800)[0]
    assert 900 / 3800 - large < 0.01 < 9 / 38 - small[2]


@given(st.integers(0, 500), st.integers(1, 500))
@example(0, 243)  # the Wilson bound's arithmetic left 4.3e-19 at df = 0
def test_a_supported_share_is_a_share_no_larger_than_the_counts_show(df, extra):
    from explorer.view.store.keywords import supported_share

    n = df + extra
    share = supported_share(np.array([float(df)]), n)[0]
    assert 0.0 <= share <= df / n


def test_top_keyword_lists_show_one_inflection_of_a_term():
    """ "algorithms" and "algorithm" took two of the Overview's twenty places on ICML
    2013-2019: the vocabulary names each term's form, and the lists keep its best-ranked
    inflection only (the selection's contrast keywords, the Overview, Trends' first terms)."""
    docs = [
        "Bandit algorithms for galaxy surveys.",
        "Bandit algorithms and galaxy shapes.",
        "An algorithm for galaxy shapes.",
        "Stars and bandit regret.",
        "Stars and quasars.",
    ]
    matrix, vocabulary = document_terms(docs, min_df=1)
    vocab = vocabulary_table(matrix, vocabulary)
    form = dict(zip(vocab["term"], vocab["form"], strict=True))
    assert form["algorithms"] == form["algorithm"] == "algorithm"
    assert form["bandit algorithms"] == "bandit algorithm" != form["galaxy"]
    ranked = one_per_form(ranked_terms(vocab, len(docs)), vocab)["term"].tolist()
    assert "algorithms" in ranked and "algorithm" not in ranked  # 2 papers against 1
    assert set(ranked) == set(vocab["term"]) - {"algorithm"}
    top = contrast_keywords(matrix.indptr, matrix.indices, vocab, np.arange(3), top=50)
    assert "algorithms" in set(top["term"]) and "algorithm" not in set(top["term"])
    # A run built before the vocabulary had forms keeps every term.
    old = vocab.drop(columns="form")
    assert len(one_per_form(ranked_terms(old, 5), old)) == len(old)


def test_contrast_keywords_never_offer_boilerplate():
    docs, members, _ = _corpus()
    matrix, vocabulary = document_terms(docs, min_df=1)
    vocab = vocabulary_table(matrix, vocabulary)
    assert vocab.loc[vocab["term"] == "propose", "specificity"].item() == 0.0
    rows = members["stars"]
    top = contrast_keywords(matrix.indptr, matrix.indices, vocab, rows)
    assert len(top) and not {"propose", "novel", "better", "performance"} & set(top["term"])


def test_keywords_are_counted_from_prose_not_links_or_math():
    """A code link or a formula is no subject: "https", "github", "com" and LaTeX commands
    never become keywords (the seed corpus's Overview listed them first otherwise)."""
    docs = [
        f"Graph neural networks for molecules. Code: https://github.com/lab/gnn{i} and "
        f"www.example.com/x{i}; we bound $\\alpha_{i}$ with \\emph{{care}}."
        for i in range(6)
    ]
    _, vocabulary = document_terms(docs, min_df=1)
    terms = {word for term in vocabulary for word in str(term).split()}
    assert {"graph", "molecules"} <= terms
    assert not terms & {"https", "github", "com", "www", "example", "alpha", "emph", "lab"}


@pytest.mark.realbuild
def test_the_seed_corpus_top_keywords_hold_no_link_parts(seed_run):
    from explorer.view.store.keywords import ranked_terms

    top = (
        ranked_terms(seed_run.table("vocab"), len(seed_run.table("papers")))
        .head(20)["term"]
        .astype(str)
    )
    words = {w for term in top for w in term.split()}
    assert not words & {"https", "http", "github", "com", "www", "org"}


# Issue 52: what abstracts of every field say once, modifiers that name nothing alone (never
# a top keyword of the seed corpus: "large language" is the keywords' piece of "large
# language models") and subjects that must stay above them.
SEED_PASSING = {"findings", "highlighting", "computationally efficient", "theoretical findings"}
SEED_MODIFIERS = {"theoretical", "large language"}
SEED_SUBJECTS = {"diffusion models", "language models", "reinforcement learning",
                 "conformal prediction"}  # fmt: skip


@pytest.mark.realbuild
def test_the_seed_corpus_top_keywords_are_subjects_not_words_said_in_passing(seed_run):
    from explorer.view.store.keywords import one_per_form, ranked_terms

    vocab, n = seed_run.table("vocab"), len(seed_run.table("papers"))
    top = one_per_form(ranked_terms(vocab, n), vocab)["term"].head(20).tolist()
    assert not (SEED_PASSING | SEED_MODIFIERS) & set(top), top
    assert "diffusion models" in top
    specific = dict(zip(vocab["term"], vocab["specificity"], strict=True))
    weak = SEED_PASSING | SEED_MODIFIERS
    assert set(specific) >= weak | SEED_SUBJECTS
    assert max(specific[t] for t in weak) < min(specific[t] for t in SEED_SUBJECTS)


@pytest.mark.realbuild
def test_the_seed_corpus_map_labels_hold_no_word_said_in_passing(seed_run):
    """Under every EXPLORER_TEST_SEED: no node's map label is one of them or a modifier
    alone, and no topic's contrast keywords (the selection's) offer them before its
    subjects run out."""
    from explorer.build.background import stands_alone
    from explorer.view.store.keywords import contrast_keywords

    nodes = seed_run.table("nodes")
    for short in nodes["label"]:
        phrases = str(short).split(", ")
        assert not (SEED_PASSING | SEED_MODIFIERS) & set(phrases), short
        assert all(stands_alone(p) for p in phrases), short
    papers, vocab = seed_run.table("papers"), seed_run.table("vocab")
    indptr, indices = seed_run.array("doc_terms_indptr"), seed_run.array("doc_terms_indices")
    for _, group in papers.groupby("topic_id"):
        top = contrast_keywords(indptr, indices, vocab, group.index.to_numpy(), top=5)
        assert not SEED_PASSING & set(top["term"]), top["term"].tolist()


def test_keywords_are_verbatim_terms_with_hyphenated_words_whole():
    """A keyword is a word or two adjacent words of the prose: no pair across a stop word,
    punctuation or a link ("code available", "maps code"), no piece of a hyphenated word
    ("self", "state art") and no bare number."""
    docs = [
        "Self-supervised galaxy maps; code is available at https://github.com/x/y in 2024.",
        "State-of-the-art self-supervised galaxy surveys, 2024 release: https://github.com/z.",
        "Galaxy maps as Smith et al. (2020) drew them.",
    ]
    matrix, vocabulary = document_terms(docs, min_df=1)
    terms = set(vocabulary)
    assert {"self-supervised galaxy", "galaxy maps", "state-of-the-art", "galaxy"} <= terms
    for piece in (
        "self",
        "supervised",
        "self supervised",
        "state art",
        "2024",
        "https",
        "code available",
        "maps code",
        "surveys release",
        "github",
    ):
        assert piece not in terms, piece
    vocab = vocabulary_table(matrix, vocabulary)
    spec = dict(zip(vocab["term"], vocab["specificity"], strict=True))
    assert spec["galaxy"] > 0 and spec["state-of-the-art"] == 0


def test_trends_preselects_rising_subjects_not_rising_boilerplate():
    keywords = pd.DataFrame(
        {
            "dimension": "year",
            "value": ["2019"] * 3 + ["2020"] * 3,
            "term": ["neural", "galaxy", "stars"] * 2,
            "df": [1, 1, 5, 30, 20, 5],
            "n_docs": [40] * 3 + [40] * 3,
        }
    )
    vocab = pd.DataFrame(
        {"term": ["neural", "galaxy", "stars"], "df": [31, 21, 10], "specificity": [0.0, 1, 1]}
    )
    assert preselected_terms(keywords, vocab, 80, n=2) == ["galaxy", "stars"]
    one_year = keywords[keywords["value"] == "2020"]
    assert preselected_terms(one_year, vocab, 40, n=1) == ["galaxy"]
    # One form per term, boilerplate out first: "neural" rising fastest of the form it
    # shares with "neurals" (a crude singular joins them) does not hide the subject.
    renamed = keywords.replace({"stars": "neurals"})
    forms = vocab.replace({"stars": "neurals"}).assign(form=["neural", "galaxy", "neural"])
    assert preselected_terms(renamed, forms, 80, n=2) == ["galaxy", "neurals"]
    twins = forms.assign(specificity=[1.0, 1, 1])  # both subjects: the faster riser only
    assert preselected_terms(renamed, twins, 80, n=3) == ["neural", "galaxy"]
