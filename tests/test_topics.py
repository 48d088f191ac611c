import hashlib

import numpy as np
import pytest

from explorer.build.topics import OUTLIER, assign_outliers, default_params, sorted_keybert
from explorer.errors import InputError


def test_params_scale_with_corpus_size():
    small, mid, large = default_params(38), default_params(3000), default_params(11000)
    assert small.min_topic_size == 3 and small.n_neighbors == 12
    assert small.min_topic_size < mid.min_topic_size < large.min_topic_size
    assert mid.n_neighbors == 15 and mid.min_df == 2
    assert default_params(3000, min_topic_size=25).min_topic_size == 25


def test_too_small_corpus_says_the_minimum():
    with pytest.raises(InputError, match="at least 10 are needed"):
        default_params(4)


def test_assign_outliers_only_when_close_enough():
    emb = np.array(
        [[1, 0], [0.99, 0.1], [0, 1], [0.1, 0.99], [0.995, 0.05], [-1, -1]], dtype=np.float32
    )
    labels = np.array([0, 0, 1, 1, OUTLIER, OUTLIER])
    out, threshold = assign_outliers(emb, labels, 0.05)
    assert out.tolist() == [0, 0, 1, 1, 0, OUTLIER]
    assert 0.9 < threshold < 1.0


class _WordVectors:
    """Stands in for the BERTopic model KeyBERTInspired asks for vectors: each text gets a
    fixed vector of its own, whatever the order it is asked in."""

    def _extract_embeddings(self, texts, method="document", verbose=False):
        seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
        return np.stack([np.random.default_rng(s).normal(size=8) for s in seeds])


def test_keyword_candidates_do_not_follow_the_hash_seed():
    """KeyBERTInspired lists its candidate words from a set, whose order follows the
    process's hash seed, and the column order of its cosine product moved the keyword
    weights in their last bits: two builds of one list differed. Ours sorts them, and each
    column still belongs to its word."""
    words = [f"word{i}" for i in range(60)]
    topics = {0: words[:40], 1: words[20:]}
    docs = [f"doc {i}" for i in range(6)]
    model = _WordVectors()
    sim, vocab = sorted_keybert(10, 42)._extract_embeddings(
        model, topics, docs, [[0, 1, 2], [3, 4, 5]]
    )
    assert vocab == sorted(words)
    topic = model._extract_embeddings(docs)[3:].mean(axis=0)
    word = model._extract_embeddings([vocab[7]])[0]
    assert sim[1, 7] == pytest.approx(topic @ word / np.linalg.norm(topic) / np.linalg.norm(word))


class _CountingWords(_WordVectors):
    """_WordVectors that remembers each text it was asked for, as the embedding cache
    would (`embedding_model` set: MMR needs one)."""

    embedding_model = object()

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def _extract_embeddings(self, texts, method="document", verbose=False):
        texts = [texts] if isinstance(texts, str) else list(texts)
        self.asked.append(texts)
        return super()._extract_embeddings(texts, method, verbose)


def test_mmr_keywords_are_upstreams_with_every_text_embedded_in_one_first_call():
    from bertopic.representation import MaximalMarginalRelevance

    from explorer.build.topics import batched_mmr

    rng = np.random.default_rng(3)
    topics = {
        t: [(f"w{t}{i}", float(w)) for i, w in enumerate(rng.random(12))] for t in range(-1, 4)
    }
    ours, theirs = _CountingWords(), _CountingWords()
    got = batched_mmr(0.3, 5).extract_topics(ours, None, None, topics)
    want = MaximalMarginalRelevance(diversity=0.3, top_n_words=5).extract_topics(
        theirs, None, None, topics
    )
    assert got == want
    first = set(ours.asked[0])
    assert all(set(texts) <= first for texts in ours.asked[1:])  # later asks: cache hits
    assert first == {text for texts in theirs.asked for text in texts}
