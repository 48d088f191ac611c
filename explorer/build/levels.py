"""Three levels of topics: areas above today's topics, subtopics inside large ones.

- **Areas** are cut from the tree of topic centroids (average linkage, cosine distance)
  into one area per `TOPICS_PER_AREA` topics, 5 to 15 (`area_count`). The count follows the
  topic count, which the consensus holds still; the best silhouette, the rule before, picked
  5, 7 and 15 areas on three builds of one corpus, from a curve too flat to choose
  (bench/README.md, "Areas by the topic count"). A corpus with fewer than
  `MIN_TOPICS_FOR_AREAS` topics has no area level: each topic is its own area; nor has a
  short list (topics.SHORT_LIST) whose cut leaves an area of a single topic.
- **Subtopics**: a topic holding more than `SPLIT_SHARE` of the corpus is re-clustered on
  its own members (the consensus of seeded fits, each UMAP 5-D on its members'
  embeddings then HDBSCAN; its leaf selection when the usual one leaves a part above the 5%
  target; or the build's own clusterer, explorer/build/cluster.py). Smaller topics stay whole: the
  consensus topics are the fine grain already, and splitting the heterogeneous ones too (the
  rule of PIPELINE_VERSION 25) gave leaves less coherent and less reproducible than the
  topics they came from (bench/README.md, "Which topics split"). Stragglers join the nearest
  subtopic centroid, so every member lands in exactly one subtopic. A topic whose members
  show no structure (fewer than two clusters) keeps no subtopics, and the node table says so.

Ids are strings: areas "A0", "A1"... (largest first), topics "12", subtopics "12.3"
(largest first within their topic). Same inputs and options give the same ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.build import consensus
from explorer.build.cluster import Clusterer, for_subtopics
from explorer.node_ids import OUTLIER, area_id, subtopic_id, subtopic_index, topic_of
from explorer.vectors import centroids, normalise_rows

SPLIT_SHARE = 0.05
MIN_TOPICS_FOR_AREAS = 8
AREA_RANGE = (5, 15)
# The silhouette's own grain on nine builds of three corpora, 2026-12-07: 96 areas over 492
# topics (5.1 topics per area).
TOPICS_PER_AREA = 5


@dataclass(frozen=True)
class Levels:
    """Each paper's path, and what the build decided per topic."""

    area_of_topic: dict[int, str]  # topic id -> area id
    subtopic: np.ndarray  # per paper: subtopic id, or "" where its topic is not split
    unsplit: dict[int, str]  # topic id -> why it has no subtopics (only for topics considered)
    # subtopic id -> how often its papers stayed together across the split's fits
    stability: dict[str, float] = field(default_factory=dict)


def renamed(levels: Levels, labels: np.ndarray, fitted: np.ndarray) -> Levels:
    """`levels`, cut for the topic ids `labels`, under the ids `fitted` gives the same papers
    (BERTopic's, by size): subtopic ids, the area and unsplit maps and the subtopics'
    stability follow their topics."""
    mapping = {int(a): int(b) for a, b in zip(labels.tolist(), fitted.tolist(), strict=True)}

    def sub(node: str) -> str:
        if not node:
            return ""
        return subtopic_id(mapping[int(topic_of(node))], subtopic_index(node))

    names = {s: sub(s) for s in set(levels.subtopic.tolist())}  # once per subtopic
    return Levels(
        area_of_topic={mapping[t]: a for t, a in levels.area_of_topic.items()},
        subtopic=np.array([names[s] for s in levels.subtopic], dtype=object),
        unsplit={mapping[t]: why for t, why in levels.unsplit.items()},
        stability={names[s]: score for s, score in levels.stability.items()},
    )


def area_count(n_topics: int, per: int = TOPICS_PER_AREA) -> int:
    """How many areas `n_topics` topics (at least MIN_TOPICS_FOR_AREAS) are cut into: one
    per `per` topics, within AREA_RANGE, and fewer than the topics (bench/area_rules.py
    tries other `per`)."""
    return min(int(np.clip(round(n_topics / per), *AREA_RANGE)), n_topics - 1)


def cut_areas(topic_centroids: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Area index (0 = largest area) of each topic, by the documented cut rule."""
    n = len(topic_centroids)
    if n < MIN_TOPICS_FOR_AREAS:
        return _rank_by_size(np.arange(n), sizes)
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(topic_centroids, method="average", metric="cosine")
    return _rank_by_size(fcluster(tree, t=area_count(n), criterion="maxclust"), sizes)


def _rank_by_size(groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Renumber groups 0.. by total size, largest first (ties: smallest first member)."""
    keys = {}
    for index, group in enumerate(groups.tolist()):
        total, first = keys.get(group, (0, index))
        keys[group] = (total + int(sizes[index]), min(first, index))
    order = sorted(keys, key=lambda g: (-keys[g][0], keys[g][1]))
    rank = {g: i for i, g in enumerate(order)}
    return np.array([rank[g] for g in groups.tolist()], dtype=np.int64)


def subtopic_sizes(min_topic_size: int, n_papers: int) -> tuple[int, int]:
    """The smallest subtopic a split keeps (at least 5 papers, else the topics' own
    minimum) and the leaf target no part should exceed (SPLIT_SHARE of the corpus): one
    home, which the build and the benches that split topics again (bench/subtopic_*.py) read."""
    return max(5, min_topic_size), int(SPLIT_SHARE * n_papers)


def split_decisions(sizes: np.ndarray, n_papers: int) -> np.ndarray:
    """Per topic (`sizes` in topic order), whether the subtopic rule splits it: more than
    SPLIT_SHARE of the corpus. bench/subtopic_rules.py asks the same of stored runs."""
    return np.asarray(sizes) > SPLIT_SHARE * n_papers


def split_topic(
    vectors: np.ndarray,
    *,
    min_size: int,
    max_size: int,
    seed: int,
    cache_root: Path | None,
    clusterer: Clusterer | None = None,
) -> Split | None:
    """Subcluster index (0 = largest) of each member, or None when there is no structure:
    the consensus (explorer/build/consensus.py) of seeded fits on the members alone, each
    grouping its reduction with the clusterers of cluster.for_subtopics in turn, until one
    leaves no part above `max_size` papers (by default HDBSCAN's excess-of-mass selection,
    then its finer leaf selection). Stragglers join the nearest part's centroid."""
    tried = for_subtopics(min_size, clusterer)

    def label(reduced: np.ndarray) -> np.ndarray:
        parts = first_fitting(vectors, reduced, tried, max_size)
        return parts if parts is not None else np.zeros(len(vectors), dtype=np.int64)

    fits, neighbours = topic_fits(vectors, label, seed=seed, cache_root=cache_root)
    parts = agreed_parts(vectors, fits, neighbours, min_size)
    return None if parts is None else Split(parts, fits)


def topic_fits(
    vectors: np.ndarray,
    label: Callable[[np.ndarray], np.ndarray],
    *,
    seed: int,
    cache_root: Path | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The seeded fits of one topic's members (consensus.seeded_fits: UMAP 5-D on their own
    graph, grouped by `label`), and the neighbour lists their consensus reads.
    bench/subtopic_rules.py labels the same fits other ways."""
    from explorer.build.projection import UmapParams, knn_graph

    k = int(min(15, len(vectors) - 1))
    candidates = knn_graph(vectors, 2 * k, seed=seed).indices
    umap = UmapParams(5, k, min_dist=0.0, seed=seed)
    fits, _ = consensus.seeded_fits(
        vectors, candidates, umap=umap, label=label, cache_root=cache_root
    )
    return fits, candidates[:, :k]


def agreed_parts(
    vectors: np.ndarray, fits: np.ndarray, neighbours: np.ndarray, min_size: int
) -> np.ndarray | None:
    """The fits' consensus on one topic's members, stragglers joined to the nearest part
    (None below two parts)."""
    return _with_stragglers(vectors, consensus.consensus(fits, neighbours, min_size))


@dataclass(frozen=True)
class Split:
    """A topic's subtopics: each member's part, and each fit's parts (for stability)."""

    parts: np.ndarray
    fits: np.ndarray


def first_fitting(
    vectors: np.ndarray, reduced: np.ndarray, tried: tuple[Clusterer, ...], max_size: int
) -> np.ndarray | None:
    """One fit's parts: the clusterers `tried` in turn on the reduced members until one
    leaves no part above `max_size` papers (else the last that found two parts; None when
    none did). bench/subtopic_npmi.py splits as the code before the consensus did with it."""
    parts = None
    for candidate in tried:
        found = subclusters(vectors, reduced, candidate)
        parts = found if found is not None else parts
        if parts is not None and np.bincount(parts).max() <= max_size:
            break
    return parts


def subclusters(
    vectors: np.ndarray, reduced: np.ndarray, clusterer: Clusterer
) -> np.ndarray | None:
    """The clusterer on the reduced members; stragglers join the nearest subcluster's
    centroid."""
    return _with_stragglers(vectors, consensus.renumber_by_size(clusterer.fit_predict(reduced)))


def _with_stragglers(vectors: np.ndarray, labels: np.ndarray) -> np.ndarray | None:
    """Parts numbered by size with every OUTLIER in the nearest part (by centroid), or None
    when fewer than two parts were found."""
    found = np.unique(labels[labels != OUTLIER])
    if len(found) < 2:
        return None
    labels = labels.copy()
    unit = normalise_rows(vectors)
    stray = labels == OUTLIER
    if stray.any():
        sims = unit[stray] @ centroids(unit, labels, found).T
        labels[stray] = found[sims.argmax(axis=1)]
    return consensus.renumber_by_size(labels)


def _areas(topic_centroids: np.ndarray, sizes: np.ndarray, n_papers: int) -> np.ndarray:
    """Each topic's area (`cut_areas`); a short list whose cut leaves an area of a single
    topic gets one area per topic instead, numbered by size."""
    from explorer.build.topics import SHORT_LIST

    areas = cut_areas(topic_centroids, sizes)
    if n_papers < SHORT_LIST and np.bincount(areas).min() < 2:
        # A short list's area level must group something: an area of one topic is not one.
        areas = _rank_by_size(np.arange(len(sizes)), sizes)
    return areas


def build_levels(
    embeddings: np.ndarray,
    labels: np.ndarray,
    *,
    min_topic_size: int,
    seed: int,
    cache_root: Path | None = None,
    clusterer: Clusterer | None = None,
) -> Levels:
    """Areas and subtopics for a fitted topic labelling (`labels`, OUTLIER for noise);
    `clusterer` splits large topics (the build's own, else HDBSCAN: cluster.for_subtopics)."""
    unit = normalise_rows(embeddings.astype(np.float32))
    topics = np.array(sorted(t for t in set(labels.tolist()) if t != OUTLIER))
    n = len(labels)
    if len(topics) == 0:
        return Levels({}, np.full(n, "", dtype=object), {})
    topic_centroids = centroids(unit, labels, topics)
    sizes = np.array([(labels == t).sum() for t in topics])
    areas = _areas(topic_centroids, sizes, n)
    area_of_topic = {int(t): area_id(a) for t, a in zip(topics, areas, strict=True)}
    splits = split_decisions(sizes, n)
    subtopic = np.full(n, "", dtype=object)
    unsplit: dict[int, str] = {}
    stability: dict[str, float] = {}
    min_size, max_size = subtopic_sizes(min_topic_size, n)
    for i, topic in enumerate(topics.tolist()):
        if not splits[i]:
            continue
        members = np.flatnonzero(labels == topic)
        if len(members) < 2 * min_size:
            unsplit[topic] = "too few papers to split"
            continue
        split = split_topic(
            embeddings[members],
            min_size=min_size,
            max_size=max_size,
            seed=seed,
            cache_root=cache_root,
            clusterer=clusterer,
        )
        if split is None:
            unsplit[topic] = "no structure among its papers"
            continue
        count = int(split.parts.max()) + 1
        names = np.array([subtopic_id(topic, p) for p in range(count)], dtype=object)
        subtopic[members] = names[split.parts]
        parts = {p: np.flatnonzero(split.parts == p) for p in range(count)}
        held = consensus.stability(split.fits, parts)
        stability.update({str(names[p]): score for p, score in held.items()})
    return Levels(
        area_of_topic=area_of_topic,
        subtopic=subtopic,
        unsplit=unsplit,
        stability=stability,
    )
