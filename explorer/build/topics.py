"""Topic modelling: the consensus of seeded UMAP -> HDBSCAN -> outlier-assignment fits
(explorer/build/consensus.py; a short list: a Ward cut) -> BERTopic representation.

Each stage is a plain function whose sub-models are visible here, not hidden in
BERTopic's defaults. BERTopic receives the finished clustering (as labels) and
does what it is best at: c-TF-IDF and keyword representations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.build import consensus, settings
from explorer.build.cluster import Clusterer, for_topics
from explorer.build.consensus import renumber_by_size
from explorer.build.embed import embed_texts
from explorer.build.models import Embedder
from explorer.build.projection import KnnGraph, UmapParams
from explorer.errors import InputError
from explorer.node_ids import OUTLIER
from explorer.vectors import centroids as unit_centroids
from explorer.vectors import normalise_rows

if TYPE_CHECKING:
    from bertopic import BERTopic
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance

    from explorer.build.counts import PaperTerms

MIN_DOCUMENTS = settings.MIN_DOCUMENTS
DEFAULT_SEED = settings.default("seed")
# Below this many papers the consensus of UMAP + HDBSCAN fits left a topic over 30% of the
# papers or over 10% outliers in 10 of 15 lists (ICML samples of 40-120 papers and the seed
# corpus), from 150 on in none of 12 (docs/consensus.md, "Short lists"): `short_list`.
SHORT_LIST = 150
SHORT_MAX_SHARE = 0.3  # no topic of a short list holds more than this share of its papers
SHORT_MAX_NOISE = 0.1  # nor do its groups too small to be topics (left to outlier assignment)


@dataclass(frozen=True)
class TopicParams:
    """Everything that decides the topics; recorded in the manifest."""

    min_topic_size: int
    min_samples: int
    n_neighbors: int
    n_components: int
    outlier_quantile: float
    min_df: int
    seed: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def default_params(
    n_docs: int, *, min_topic_size: int | None = None, seed: int = DEFAULT_SEED
) -> TopicParams:
    """Size-aware defaults: a 40-abstract list gets a few topics, 3,000 get tens."""
    if n_docs < MIN_DOCUMENTS:
        raise InputError(
            f"corpus has {n_docs} abstract(s); at least {MIN_DOCUMENTS} are needed to model topics"
        )
    size = min_topic_size or int(np.clip(round(math.sqrt(n_docs) / 4), 3, 40))
    if size < 2:
        raise InputError("--min-topic-size must be at least 2")
    return TopicParams(
        min_topic_size=size,
        # Lower min_samples than HDBSCAN's default (= min_cluster_size) keeps fewer
        # abstracts in the noise without merging clusters.
        min_samples=max(1, min(size, round(size / 2))),
        n_neighbors=int(np.clip(n_docs // 3, 2, 15)),
        n_components=5,
        # A noise abstract joins its nearest topic when it is at least as close to it
        # as 95% of clustered abstracts are to their own topic: outliers stay outliers
        # only when they are genuinely unlike every topic.
        outlier_quantile=0.05,
        min_df=1 if n_docs < 200 else 2,
        seed=seed,
    )


def assign_outliers(
    embeddings: np.ndarray, labels: np.ndarray, quantile: float
) -> tuple[np.ndarray, float]:
    """Give each noise point the topic whose centroid is most cosine-similar, when close enough.

    "Close enough" is the `quantile` of clustered abstracts' similarity to their own
    topic's centroid; returns the new labels and that threshold.

    This is BERTopic's `reduce_outliers(strategy="embeddings")` done before the
    representation is computed, so c-TF-IDF and keywords are extracted once.
    """
    topics = np.unique(labels[labels != OUTLIER])
    noise = np.flatnonzero(labels == OUTLIER)
    if len(topics) == 0 or len(noise) == 0:
        return labels, 0.0
    unit = normalise_rows(embeddings)
    centroids = unit_centroids(unit, labels, topics)
    members = np.flatnonzero(labels != OUTLIER)
    own = (unit[members] * centroids[np.searchsorted(topics, labels[members])]).sum(axis=1)
    threshold = float(np.quantile(own, quantile))
    sims = unit[noise] @ centroids.T
    best = sims.argmax(axis=1)
    keep = sims[np.arange(len(noise)), best] >= threshold
    out = labels.copy()
    out[noise[keep]] = topics[best[keep]]
    return out, threshold


def _word_embedder(embedder: Embedder) -> Callable[[list[str]], np.ndarray]:
    """Candidate keywords embedded through our cache (they repeat across fits)."""

    def embed(words: list[str]) -> np.ndarray:
        vectors, _ = embed_texts(words, embedder, progress=False)
        return vectors

    return embed


class _Precomputed:
    """A 'dimensionality reduction' that hands BERTopic the UMAP output we computed."""

    def __init__(self, reduced: np.ndarray) -> None:
        self.reduced = reduced

    def fit(self, X, y=None):  # noqa: N803 - sklearn signature
        return self

    def transform(self, X):  # noqa: N803
        return self.reduced


@dataclass(frozen=True)
class Partition:
    """The seed-dependent part of the topic stage: which paper is in which topic."""

    reduced: np.ndarray  # a 5-D UMAP reduction (the consensus's first fit)
    labels: np.ndarray
    clustered: int  # documents the consensus placed in a topic before outlier assignment
    threshold: float  # cosine similarity a noise abstract needed to join a topic
    fits: np.ndarray | None = None  # papers x fits: each fit's topics (consensus.py)


def partition(
    embeddings: np.ndarray,
    graph: KnnGraph,
    params: TopicParams,
    cache_root,
    clusterer: Clusterer | None = None,
    *,
    progress: bool = False,
) -> Partition:
    """The consensus of `consensus.FITS` seeded fits (each: reduce its jittered graph,
    cluster, assign outliers), its small groups left to outlier assignment; a short list
    is grouped by `short_list` instead, unless the build was given its own clusterer.
    `graph` holds at least 2 x n_neighbors candidates per paper. `clusterer`: the build's
    own (explorer/build/cluster.py), else HDBSCAN."""
    if is_short_list(len(embeddings), clusterer):
        return short_list(embeddings, params)
    chosen = for_topics(params, clusterer)

    def label(reduced: np.ndarray) -> np.ndarray:
        found = renumber_by_size(chosen.fit_predict(reduced))
        if not (found != OUTLIER).any():
            found = np.zeros(len(found), dtype=np.int64)
        return assign_outliers(embeddings, found, params.outlier_quantile)[0]

    umap = UmapParams(params.n_components, params.n_neighbors, min_dist=0.0, seed=params.seed)
    fits, reduced = consensus.seeded_fits(
        embeddings, graph.indices, umap=umap, label=label, cache_root=cache_root,
        progress=progress,
    )  # fmt: skip
    agreed = consensus.consensus(
        fits, graph.indices[:, : params.n_neighbors], params.min_topic_size
    )
    return _finished(embeddings, renumber_by_size(agreed), params, reduced, fits)


def _finished(
    embeddings: np.ndarray, labels: np.ndarray, params: TopicParams, reduced, fits
) -> Partition:
    """Outliers assigned to a grouping; one topic of everything where nothing grouped
    (typical of very small or uniform corpora: the honest answer, the summary says so)."""
    clustered = int((labels != OUTLIER).sum())
    if clustered == 0:
        labels = np.zeros(len(embeddings), dtype=np.int64)
    labels, threshold = assign_outliers(embeddings, labels, params.outlier_quantile)
    return Partition(reduced, labels, clustered, threshold, fits)


def is_short_list(n_papers: int, clusterer: Clusterer | None) -> bool:
    """Whether a fit of `n_papers` is a short list's Ward cut (`short_list`): below
    SHORT_LIST papers, unless the build was given its own clusterer."""
    return clusterer is None and n_papers < SHORT_LIST


def short_list(embeddings: np.ndarray, params: TopicParams) -> Partition:
    """Topics of a list shorter than `SHORT_LIST`, where the consensus alone leaves a topic
    over 30% of the papers or many outliers: a cut of the Ward tree of the unit vectors
    (`short_cut`), its groups smaller than the smallest topic left to outlier assignment.
    The fits that score its stability are the same cut of `consensus.FITS` jittered copies
    of the vectors."""
    from scipy.cluster.hierarchy import fcluster, linkage

    unit = normalise_rows(np.asarray(embeddings, dtype=np.float64))
    tree = linkage(unit, method="ward")
    k = short_cut(tree, len(unit), params.min_topic_size)

    def ward(vectors: np.ndarray) -> np.ndarray:
        return renumber_by_size(fcluster(linkage(vectors, method="ward"), k, "maxclust"))

    fits = [
        ward(consensus.jittered(unit, consensus.fit_seed(params.seed, i)))
        for i in range(consensus.FITS)
    ]
    groups = fcluster(tree, k, "maxclust")
    small = np.bincount(groups)[groups] < params.min_topic_size
    labels = renumber_by_size(np.where(small, OUTLIER, groups))
    reduced = np.zeros((len(unit), params.n_components), dtype=np.float32)
    return _finished(embeddings, labels, params, reduced, np.stack(fits, axis=1))


def short_cut(tree: np.ndarray, n: int, min_size: int) -> int:
    """How many groups a short list is cut into: of the Ward cuts whose largest group holds
    at most SHORT_MAX_SHARE of the papers and whose groups under `min_size` papers hold at
    most SHORT_MAX_NOISE, the one the data separates most clearly, at the largest ratio of
    the merge above the cut to the highest merge below it (ties: fewer groups). Where no cut
    qualifies, the coarsest whose largest group holds at most SHORT_MAX_SHARE."""
    from scipy.cluster.hierarchy import fcluster

    heights = tree[:, 2]
    best, best_gap = None, -np.inf
    for k in range(2, n // min_size + 1):
        sizes = np.bincount(fcluster(tree, k, "maxclust"))[1:]
        small = sizes[sizes < min_size].sum()
        if sizes.max() > SHORT_MAX_SHARE * n or small > SHORT_MAX_NOISE * n:
            continue
        gap = heights[n - k] / max(heights[n - k - 1], 1e-12)
        if gap > best_gap + 1e-9:
            best, best_gap = k, gap
    if best is not None:
        return best
    fits = (k for k in range(2, n + 1) if np.bincount(fcluster(tree, k, "maxclust")).max()
            <= SHORT_MAX_SHARE * n)  # fmt: skip
    return next(fits, n)


@dataclass
class TopicFit:
    """A fitted model and what the later stages read from it."""

    model: BERTopic
    labels: np.ndarray
    clustered: int  # documents HDBSCAN placed in a topic before outlier assignment
    outlier_threshold: float  # cosine similarity a noise abstract needed to join a topic
    reduced: np.ndarray
    terms: PaperTerms  # every paper's term counts; the model's c-TF-IDF sums them by topic


def represent(
    docs: list[str],
    embeddings: np.ndarray,
    part: Partition,
    params: TopicParams,
    *,
    embedder: Embedder,
) -> TopicFit:
    """BERTopic's keyword representation of a finished partition. BERTopic numbers the
    topics by size (ties as it breaks them): the fit's labels are its `topics_`.

    BERTopic sees paper numbers, not texts (explorer.build.counts): each paper's words are
    counted once here, and its c-TF-IDF adds those counts up per topic."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.vectorizers import ClassTfidfTransformer

    from explorer.build.counts import PaperCounts, count_terms, paper_embedder, paper_keys
    from explorer.build.labels.phrases import keyword_terms

    terms = count_terms(docs, min_df=params.min_df)
    model = BERTopic(
        embedding_model=paper_embedder(embeddings, _word_embedder(embedder)),
        umap_model=_Precomputed(part.reduced),
        hdbscan_model=BaseCluster(),
        vectorizer_model=PaperCounts(min_df=params.min_df, analyzer=keyword_terms).attach(terms),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        # KeyBERT-style phrases read better than raw c-TF-IDF terms; MMR keeps the ten
        # keywords from being near-synonyms of each other. Keep it a list: BERTopic hands a
        # lone KeyBERTInspired the papers' embeddings indexed wrongly; in a list it asks the
        # embedder, which looks the papers' own vectors up (counts.paper_embedder).
        representation_model=[
            sorted_keybert(top_n_words=30, random_state=params.seed),
            batched_mmr(diversity=0.3, top_n_words=10),
        ],
        top_n_words=10,
        calculate_probabilities=False,
    )
    model.fit_transform(paper_keys(len(docs)), embeddings, y=part.labels)
    model.representative_docs_ = {
        topic: [docs[int(key)] for key in keys]
        for topic, keys in (model.representative_docs_ or {}).items()
    }
    return TopicFit(
        model=model,
        labels=np.asarray(model.topics_, dtype=np.int64),
        clustered=part.clustered,
        outlier_threshold=part.threshold,
        reduced=part.reduced,
        terms=terms,
    )


def sorted_keybert(top_n_words: int, random_state: int) -> KeyBERTInspired:
    """BERTopic's KeyBERTInspired with its candidate words in sorted order. Upstream lists
    them from a set, whose order follows Python's per-process hash seed; the order of the
    columns of its cosine product then moved the keyword weights in their last bits (up to
    1.8e-7 on WWW 2025), so two builds of one list on one machine differed. Sorted, the same
    inputs give the same bytes in any process."""
    from bertopic.representation import KeyBERTInspired
    from sklearn.metrics.pairwise import cosine_similarity

    class SortedKeyBERT(KeyBERTInspired):
        def _extract_embeddings(
            self, topic_model, topics, representative_docs, repr_doc_indices, repr_embeddings=None
        ):
            if repr_embeddings is None:
                repr_embeddings = topic_model._extract_embeddings(
                    representative_docs, method="document", verbose=False
                )
            means = [np.mean(repr_embeddings[i[0] : i[-1] + 1], axis=0) for i in repr_doc_indices]
            vocab = sorted({word for words in topics.values() for word in words})
            words = topic_model._extract_embeddings(vocab, method="document", verbose=False)
            return cosine_similarity(means, words), vocab

    return SortedKeyBERT(top_n_words=top_n_words, random_state=random_state)


def batched_mmr(diversity: float, top_n_words: int) -> MaximalMarginalRelevance:
    """BERTopic's MaximalMarginalRelevance, its texts embedded in one call. Upstream asks
    the embedder twice per topic (the topic's words, then the words joined into one text):
    on ICML 2013-2019 (2026-12-06, bfloat16 on AMX) its 52 one-text calls took 3.4 s, each
    a whole batch. Embedded together first, every later ask finds its vectors in the
    cache; a vector does not depend on what shares its batch (embed.encode_chunk), so the
    keywords are the same bytes."""
    from bertopic.representation import MaximalMarginalRelevance

    class BatchedMMR(MaximalMarginalRelevance):
        def extract_topics(self, topic_model, documents, c_tf_idf, topics):
            if topic_model.embedding_model is not None and topics:
                words = [[word for word, _ in topic_words] for topic_words in topics.values()]
                texts = sorted({" ".join(w) for w in words} | {x for w in words for x in w})
                topic_model._extract_embeddings(texts, method="word", verbose=False)
            return super().extract_topics(topic_model, documents, c_tf_idf, topics)

    return BatchedMMR(diversity=diversity, top_n_words=top_n_words)
