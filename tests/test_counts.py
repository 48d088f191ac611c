"""Each paper's words counted once (explorer.build.counts), and BERTopic fed from those
counts: its c-TF-IDF, keywords, representative papers and merge tree must be what it would
have made from the topics' joined texts."""

from __future__ import annotations

import random
from collections import Counter
from hashlib import sha256

import numpy as np
import pytest
from bertopic.vectorizers import ClassTfidfTransformer
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.build import counts as C
from explorer.build import topics
from explorer.build.labels.phrases import keyword_terms
from explorer.build.models import Embedder
from explorer.build.summaries import hierarchy_table
from explorer.build.topics import Partition, TopicParams, represent
from tests.planted import GROUPS

WORDS = ["graph", "neural", "network", "policy", "gradient", "kernel", "bandit", "proof"]


def _reference(docs: list[str], min_df: int, max_terms: int) -> dict[str, list[int]]:
    """Each kept term's count in each paper, by plain Python: terms used by at least
    `min_df` papers, the `max_terms` most widespread, ties by name."""
    per_paper = [Counter(keyword_terms(d)) for d in docs]
    df = Counter(term for counts in per_paper for term in counts)
    ranked = sorted((t for t in df if df[t] >= min_df), key=lambda t: (-df[t], t))
    return {t: [counts[t] for counts in per_paper] for t in sorted(ranked[:max_terms])}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(WORDS + [",", "the", "2024"]), max_size=12).map(" ".join),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 5),
    st.integers(1, 3),
    st.integers(1, 20),
)
def test_counting_in_blocks_equals_counting_at_once(docs, block, min_df, max_terms):
    terms = C.count_terms(docs, min_df=min_df, block=block).widest(max_terms)
    want = _reference(docs, min_df, max_terms)
    assert list(terms.vocabulary) == list(want)
    assert terms.counts.shape == (len(docs), len(want))
    for j, term in enumerate(want):
        assert terms.counts[:, j].toarray().ravel().tolist() == want[term], term
    assert terms.counts.dtype == np.int32 and terms.counts.has_sorted_indices


def test_min_df_counts_papers_across_blocks_and_the_cap_breaks_ties_by_name():
    assert list(C.count_terms(["graph kernel.", "graph proof."], min_df=2, block=1).vocabulary) == [
        "graph"
    ]
    # graph in 3 papers; proof and kernel in 2 each, proof met first: the cap of 2 keeps
    # graph and kernel (by name), not graph and proof (by order met).
    docs = ["graph proof.", "graph kernel.", "graph bandit.", "kernel proof.", "policy."]
    assert list(C.count_terms(docs, min_df=1, block=1).widest(2).vocabulary) == [
        "graph",
        "kernel",
    ]


def test_presence_marks_use_not_count():
    terms = C.count_terms(["graph graph graph.", "graph kernel."], min_df=1)
    assert terms.counts.max() == 3
    presence = terms.presence()
    assert set(presence.data.tolist()) == {1}
    assert (presence.indices == terms.counts.indices).all()


def test_no_words_at_all_gives_an_empty_vocabulary():
    assert C.count_terms([], min_df=1).counts.shape == (0, 0)
    terms = C.count_terms(["the of", "", "42"], min_df=1, block=1)
    assert terms.counts.shape == (3, 0) and len(terms.vocabulary) == 0


def test_the_vectorizer_sums_the_papers_a_key_text_names():
    docs = ["graph kernel.", "graph proof.", "bandit policy gradient."]
    terms = C.count_terms(docs, min_df=1)
    vectorizer = C.PaperCounts(min_df=1, analyzer=keyword_terms).attach(terms)
    vectorizer.fit(["anything"])  # keeps the vocabulary it was given
    joined = vectorizer.transform(["0 1", "2", "1"]).toarray()
    counts = terms.counts.toarray()
    assert (joined[0] == counts[0] + counts[1]).all()
    assert (joined[1] == counts[2]).all() and (joined[2] == counts[1]).all()
    assert list(vectorizer.get_feature_names_out()) == list(terms.vocabulary)
    assert vectorizer.get_params()["min_df"] == 1  # BERTopic's save reads these


def test_the_embedder_looks_papers_up_and_embeds_words_in_order():
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    asked: list[list[str]] = []

    def words(items: list[str]) -> np.ndarray:
        asked.append(items)
        return np.full((len(items), 3), -1.0, dtype=np.float32)

    embedder = C.paper_embedder(vectors, words)
    out = embedder.embed_documents(["3", "graph kernel", "0", "bandit"])
    assert (out[0] == vectors[3]).all() and (out[2] == vectors[0]).all()
    assert (out[[1, 3]] == -1).all()
    assert asked == [["graph kernel", "bandit"]]
    assert (embedder.embed_words(["1"]) == vectors[1]).all()  # no keyword is all digits


def _planted(groups: list[str], per_group: int = 12) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Abstracts of the planted subjects (each sentence ends a phrase, so joined texts
    create no pair across papers) with vectors near one direction per subject."""
    rng = np.random.default_rng(0)
    pick = random.Random(0)
    docs, labels = [], []
    for topic, group in enumerate(groups):
        sentences = GROUPS[group][1]
        for _ in range(per_group):
            docs.append(" ".join(pick.sample(sentences, 4)))
            labels.append(topic)
    centres = rng.normal(size=(len(groups), 384))  # the model's width: keywords are embedded
    vectors = centres[labels] + 0.05 * rng.normal(size=(len(docs), 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return docs, vectors.astype(np.float32), np.array(labels)


def _hashed(texts: list[str], width: int = 384) -> np.ndarray:
    """A stand-in text embedder: a fixed unit vector per text, from its hash."""
    rows = [np.random.default_rng(int(sha256(t.encode()).hexdigest()[:8], 16)) for t in texts]
    out = np.array([r.normal(size=width) for r in rows], dtype=np.float32).reshape(-1, width)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def planted_fit(tmp_path_factory):
    """BERTopic's representation of three planted topics, every text the build would embed
    recorded (the model itself is not needed: candidate words get hashed vectors)."""
    groups = list(GROUPS)[:3]
    docs, vectors, labels = _planted(groups)
    params = TopicParams(
        min_topic_size=5, min_samples=5, n_neighbors=5, n_components=2,
        outlier_quantile=0.05, min_df=1, seed=0,
    )  # fmt: skip
    part = Partition(np.zeros((len(docs), 2), np.float32), labels, len(docs), 0.0)
    embedded: list[str] = []

    def fake_embed_texts(texts, embedder, progress=True):
        embedded.extend(texts)
        return _hashed(list(texts)), len(texts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(topics, "embed_texts", fake_embed_texts)
        embedder = Embedder.of(cache_root=tmp_path_factory.mktemp("cache"), weights="0")
        fit = represent(docs, vectors, part, params, embedder=embedder)
    return docs, embedded, fit


def test_only_candidate_words_are_embedded_never_a_paper_key(planted_fit):
    _, embedded, fit = planted_fit
    words = {w for term in fit.terms.vocabulary for w in term.split()}
    assert embedded and not any(text.isdigit() for text in embedded)
    # Candidate keywords (KeyBERT) and a topic's keywords joined (MMR), nothing else.
    assert all(set(text.split()) <= words for text in embedded)


def test_c_tf_idf_from_paper_counts_equals_it_from_joined_topic_texts(planted_fit):
    docs, _, fit = planted_fit
    topics = fit.labels
    vocabulary = fit.terms.vocabulary
    joined = [" ".join(d for d, t in zip(docs, topics, strict=True) if t == k) for k in range(3)]
    vectorizer = C.make_vectorizer(min_df=1, vocabulary=list(vocabulary))
    expected = ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(
        vectorizer.transform(joined)
    )
    assert np.allclose(fit.model.c_tf_idf_.toarray(), expected.toarray())


def test_keywords_and_representatives_come_from_each_topic_s_own_papers(planted_fit):
    docs, _, fit = planted_fit
    for topic in range(3):
        own = [d for d, t in zip(docs, fit.labels, strict=True) if t == topic]
        own_terms = {term for d in own for term in keyword_terms(d)}
        words = [w for w, _ in fit.model.get_topic(topic) if w]  # "" pads a short list
        assert words and set(words) <= own_terms, (topic, words)
        assert set(fit.model.representative_docs_[topic]) <= set(own)


def test_the_merge_tree_reads_the_same_keys_and_names_parents_from_their_papers(planted_fit):
    from explorer.build.coherence import word_counts
    from explorer.build.summaries import document_terms, label_merges

    docs, _, fit = planted_fit
    tree = hierarchy_table(fit.model, len(docs), 3, progress=False)
    assert len(tree) == 2
    assert sorted(tree.iloc[-1]["topics"]) == [0, 1, 2]
    matrix, vocabulary = document_terms(docs, min_df=1)
    members = {str(t): np.flatnonzero(fit.labels == t) for t in range(3)}
    named = label_merges(tree, word_counts(matrix, vocabulary, members), list(members))
    for row in named.itertuples():
        merged = [d for d, t in zip(docs, fit.labels, strict=True) if t in row.topics]
        words = {term for d in merged for term in keyword_terms(d)}
        assert row.parent_label and set(row.parent_label.split(", ")) <= words
