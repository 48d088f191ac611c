"""Everything the dashboard draws that depends on the fit: labels, distributions,
neighbours, hierarchy, and keyword/topic statistics per year and class.

All functions take arrays and DataFrames and return DataFrames; nothing here writes files.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from explorer import node_ids
from explorer.build.coherence import WordCounts, ranked_words
from explorer.build.levels import Levels
from explorer.build.projection import KnnGraph
from explorer.build.topics import OUTLIER, TopicFit
from explorer.node_ids import OUTLIER_LABEL, id_order
from explorer.vectors import centroids as unit_centroids
from explorer.vectors import normalise_rows

N_SIMILAR = 10
N_REPRESENTATIVE = 5
TOP_TOPICS_PER_DOC = 5
# Softmax temperature for cosine similarities to topic centroids: cosines of
# related abstracts differ by a few hundredths, so a low temperature separates them.
DISTRIBUTION_TEMPERATURE = 0.05
# Papers scored against every topic at once: a million papers by a thousand topics would
# need ~20 GB of scores and ranks held together.
DISTRIBUTION_BLOCK = 50_000
# Class columns keyword and topic statistics are broken down by.
DIMENSIONS = ("year", "status", "track", "venue")


def topic_label(words: list[str], n: int = 3) -> str:
    """A short label from the best keywords, skipping words already covered by a phrase."""
    chosen: list[str] = []
    for word in words:
        if any(word in c or c in word for c in chosen):
            continue
        chosen.append(word)
        if len(chosen) == n:
            break
    return ", ".join(chosen) if chosen else "(no keywords)"


def topic_centroids(
    embeddings: np.ndarray, labels: np.ndarray, topic_ids: np.ndarray
) -> np.ndarray:
    """Unit-length mean embedding of each topic's papers."""
    return unit_centroids(normalise_rows(embeddings), labels, topic_ids)


def doc_topic_distribution(
    embeddings: np.ndarray, labels: np.ndarray, centroids: np.ndarray, topic_ids: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Each paper's top topics by softmaxed centroid similarity; also the assigned topic's
    share. Scored DISTRIBUTION_BLOCK papers at a time, so memory stays bounded at millions."""
    k = min(TOP_TOPICS_PER_DOC, len(topic_ids))
    column = {t: i for i, t in enumerate(topic_ids)}
    own = np.array([-1 if t == OUTLIER else column[t] for t in labels], dtype=np.int64)
    tops, scores, assigned = [], [], []
    for a in range(0, len(labels), DISTRIBUTION_BLOCK):
        sims = normalise_rows(embeddings[a : a + DISTRIBUTION_BLOCK]) @ centroids.T
        logits = (sims - sims.max(axis=1, keepdims=True)) / DISTRIBUTION_TEMPERATURE
        weights = np.exp(logits)
        weights /= weights.sum(axis=1, keepdims=True)
        top = np.argsort(-weights, axis=1, kind="stable")[:, :k]
        tops.append(top)
        scores.append(np.take_along_axis(weights, top, axis=1).astype(np.float32))
        mine = own[a : a + DISTRIBUTION_BLOCK]
        share = weights[np.arange(len(mine)), np.maximum(mine, 0)]
        assigned.append(np.where(mine >= 0, share, 0.0).astype(np.float32))
    top = np.concatenate(tops) if tops else np.zeros((0, k), np.int64)
    table = pd.DataFrame(
        {
            "doc": np.repeat(np.arange(len(labels)), k),
            "rank": np.tile(np.arange(1, k + 1), len(labels)),
            "topic_id": topic_ids[top].ravel(),
            "score": np.concatenate(scores).ravel() if scores else np.zeros(0, np.float32),
        }
    )
    return table, np.concatenate(assigned) if assigned else np.zeros(0, np.float32)


def similar_papers(graph: KnnGraph, paper_ids: list[str]) -> pd.DataFrame:
    """The N_SIMILAR nearest papers of each paper by cosine similarity (itself excluded)."""
    ids = np.asarray(paper_ids, dtype=object)
    k = min(N_SIMILAR + 1, graph.indices.shape[1])
    idx, dist = graph.take(k)
    idx, dist = idx[:, 1:], dist[:, 1:]
    n, m = idx.shape
    return pd.DataFrame(
        {
            "paper_id": np.repeat(ids, m),
            "rank": np.tile(np.arange(1, m + 1), n),
            "neighbor_id": ids[idx.ravel()],
            "similarity": (1.0 - dist.ravel()).astype(np.float32),
        }
    )


def representative_papers(
    embeddings: np.ndarray,
    labels: np.ndarray,
    centroids: np.ndarray,
    topic_ids: np.ndarray,
    paper_ids: list[str],
) -> dict[int, list[str]]:
    """The papers closest to each topic's centroid: what the topic is 'about'."""
    unit = normalise_rows(embeddings)
    out: dict[int, list[str]] = {}
    for i, topic in enumerate(topic_ids):
        members = np.flatnonzero(labels == topic)
        sims = unit[members] @ centroids[i]
        best = members[np.argsort(-sims, kind="stable")[:N_REPRESENTATIVE]]
        out[int(topic)] = [paper_ids[j] for j in best]
    return out


def classical_mds(similarity: np.ndarray) -> np.ndarray:
    """2-D positions whose distances follow 1 - cosine similarity (Torgerson MDS)."""
    k = similarity.shape[0]
    if k < 3:
        return np.column_stack([np.arange(k, dtype=float) - (k - 1) / 2, np.zeros(k)])
    d2 = np.clip(1.0 - similarity, 0, None) ** 2
    centre = np.eye(k) - np.ones((k, k)) / k
    b = -0.5 * centre @ d2 @ centre
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:2]
    coords = vectors[:, top] * np.sqrt(np.clip(values[top], 0, None))
    # eigh's sign is arbitrary: fix it so the layout is reproducible.
    signs = np.sign(coords[np.abs(coords).argmax(axis=0), [0, 1]])
    return coords * np.where(signs == 0, 1, signs)


def hierarchy_table(model, n_papers: int, n_topics: int, *, progress: bool = True) -> pd.DataFrame:
    """BERTopic's agglomerative merge tree: one row per merge, leaves are topic ids. The
    model was fitted on `counts.paper_keys` (its vectorizer sums the papers' counts), and
    is handed the same keys here. `parent_label` is left empty: BERTopic names a parent by
    its four best c-TF-IDF words, boilerplate included ("models, learning, data"), so
    `label_merges` names it once the corpus's words are counted."""
    columns = ["parent_id", "parent_label", "child_left_id", "child_right_id", "distance", "topics"]
    if n_topics < 2:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    # hierarchical_topics re-runs the representation model for every merge (KeyBERT +
    # MMR: ~1.4 s each) only to name the parents, which label_merges names instead.
    from explorer.build.counts import paper_keys

    representation, model.representation_model = model.representation_model, None
    # BERTopic draws a progress bar here whatever its `verbose`; --no-progress means quiet.
    import bertopic._bertopic as impl

    bar = impl.tqdm
    if not progress:
        impl.tqdm = functools.partial(bar, disable=True)
    try:
        raw = model.hierarchical_topics(paper_keys(n_papers))
    finally:
        model.representation_model = representation
        impl.tqdm = bar
    return pd.DataFrame(
        {
            "parent_id": raw["Parent_ID"].astype(int),
            "parent_label": "",
            "child_left_id": raw["Child_Left_ID"].astype(int),
            "child_right_id": raw["Child_Right_ID"].astype(int),
            "distance": raw["Distance"].astype(float),
            "topics": [sorted(int(t) for t in ts) for ts in raw["Topics"]],
        }
    ).sort_values("parent_id", ignore_index=True)


def label_merges(
    hierarchy: pd.DataFrame,
    counts: WordCounts,
    nodes: Sequence[str],
    weights: np.ndarray | None = None,
) -> pd.DataFrame:
    """The merge tree with each parent named by the three best words of its topics' papers
    together: ranked against the rest of the corpus as a node's top words are
    (explorer/build/coherence.py), weighted by their specificity as labels are, so a parent
    of many topics is named by subjects, not by what every abstract of the field writes
    ("extensive", "address", "effectiveness" on WWW 2025). `counts` holds the rows of
    `nodes`, the topics among them by their ids as text; `weights` the single words'
    specificity."""
    if hierarchy.empty:
        return hierarchy
    row = {node: i for i, node in enumerate(nodes)}
    groups = [[row[str(t)] for t in topics] for topics in hierarchy["topics"]]
    words = ranked_words(counts.merged(groups), weights=weights, by_specificity=True)
    return hierarchy.assign(parent_label=[topic_label(w) for w in words])


def topic_table(
    fit: TopicFit,
    *,
    topic_ids: np.ndarray,
    coords: np.ndarray,
    parents: dict[int, int],
    representatives: dict[int, list[str]],
    positions: np.ndarray,
) -> pd.DataFrame:
    """One row per topic (outliers last): label, size, keywords, place on the map and in
    the intertopic distance map, representative papers and hierarchy parent."""
    labels = fit.labels
    position = {int(t): i for i, t in enumerate(topic_ids)}
    rows = []
    for topic in [*topic_ids.tolist(), *([OUTLIER] if (labels == OUTLIER).any() else [])]:
        words = fit.model.get_topic(topic) or []
        members = labels == topic
        real = topic != OUTLIER
        rows.append(
            {
                "topic_id": topic,
                "label": topic_label([w for w, _ in words]) if real else OUTLIER_LABEL,
                "size": int(members.sum()),
                "share": float(members.mean()),
                "keywords": [w for w, _ in words],
                "keyword_weights": [float(s) for _, s in words],
                "representative_ids": representatives.get(topic, []),
                "parent_id": parents.get(topic),
                "map_x": float(np.median(coords[members, 0])),
                "map_y": float(np.median(coords[members, 1])),
                "dist_x": float(positions[position[topic], 0]) if real else None,
                "dist_y": float(positions[position[topic], 1]) if real else None,
            }
        )
    topics = pd.DataFrame(rows)
    topics["parent_id"] = topics["parent_id"].astype("Int64")
    return topics


def node_members(
    labels: np.ndarray, levels: Levels
) -> tuple[dict[str, np.ndarray], dict[str, str | None]]:
    """Each node's member papers (indices) and parent, for areas, topics and subtopics."""
    members: dict[str, np.ndarray] = {}
    parent_of: dict[str, str | None] = {}
    area_of = np.array([levels.area_of_topic.get(int(t), "") for t in labels], dtype=object)
    for area in sorted(set(levels.area_of_topic.values()), key=id_order):
        members[area], parent_of[area] = np.flatnonzero(area_of == area), None
    for topic, area in sorted(levels.area_of_topic.items()):
        members[str(topic)], parent_of[str(topic)] = np.flatnonzero(labels == topic), area
    for sub in sorted(set(levels.subtopic.tolist()) - {""}, key=id_order):
        members[sub] = np.flatnonzero(levels.subtopic == sub)
        parent_of[sub] = node_ids.parent_of(sub)
    return members, parent_of


def node_table(
    members: dict[str, np.ndarray],
    parent_of: dict[str, str | None],
    labels: dict,  # node id -> explorer.build.labels.selection.NodeLabel
    levels: Levels,
    coords: np.ndarray,
) -> pd.DataFrame:
    """One row per area, topic and subtopic: id, level, parent, labels, size, map place."""
    n = len(coords)
    rows = []
    for node, rows_of in members.items():
        level = node_ids.level_of(node)
        note = levels.unsplit.get(int(node), "") if level == "topic" else ""
        rows.append(
            {
                "node_id": node,
                "level": level,
                "parent_id": parent_of[node],
                "label": labels[node].short,
                "long_label": labels[node].long,
                "phrases": list(labels[node].phrases),
                "size": len(rows_of),
                "share": len(rows_of) / n,
                "map_x": float(np.median(coords[rows_of, 0])),
                "map_y": float(np.median(coords[rows_of, 1])),
                "note": note,
            }
        )
    return pd.DataFrame(rows)


def vocabulary_table(matrix, vocabulary: np.ndarray) -> pd.DataFrame:
    """Each term's id, text, document frequency over the whole corpus, specificity against
    the venue background (0 for boilerplate; a modifier such as "theoretical", which names
    nothing alone, graded down: `background.keyword_weights`) and typical share of the
    venues' abstracts using it (`explorer/build/background.py`): the views rank keywords
    by these, so a corpus's top terms are its subjects. Its `form` (`terms.term_form`) is
    shared by a term's inflections, so a list of top keywords shows "algorithms" or
    "algorithm", not both."""
    from explorer.build.background import keyword_weights, typical_shares
    from explorer.build.labels.terms import term_form

    terms = [str(t) for t in vocabulary]
    specific = keyword_weights(terms)
    return pd.DataFrame(
        {
            "term_id": np.arange(len(vocabulary), dtype=np.int32),
            "term": vocabulary,
            "df": np.asarray(matrix.sum(axis=0)).ravel().astype(np.int32),
            "specificity": specific.astype(np.float32),
            "background_share": typical_shares(terms).astype(np.float32),
            "form": [term_form(t) for t in terms],
        }
    )


def direct_parents(hierarchy: pd.DataFrame) -> dict[int, int]:
    """Node id -> the merge node that has it as a direct child."""
    parents: dict[int, int] = {}
    for row in hierarchy.itertuples():
        parents[int(row.child_left_id)] = int(row.parent_id)
        parents[int(row.child_right_id)] = int(row.parent_id)
    return parents


def document_terms(docs: list[str], *, min_df: int):
    """Binary doc-term matrix (CSR) and its vocabulary, with the topic model's tokenisation
    (over the documents' prose: links and math cut out, as for labels). A build reads the
    same from its topic fit (`TopicFit.terms`) instead of counting again."""
    from explorer.build.counts import count_terms

    terms = count_terms(docs, min_df=min_df).widest()
    return terms.presence(), terms.vocabulary


def keyword_stats(matrix, vocabulary: np.ndarray, papers: pd.DataFrame) -> pd.DataFrame:
    """Document frequency of each term within each value of year/status/track/venue/topic."""
    frames = []
    for dimension in (*DIMENSIONS, "topic_id"):
        values = papers[dimension].astype("string").fillna("")
        for value in sorted(v for v in values.unique() if v != ""):
            rows = np.flatnonzero((values == value).to_numpy())
            df = np.asarray(matrix[rows].sum(axis=0)).ravel()
            present = np.flatnonzero(df)
            frames.append(
                pd.DataFrame(
                    {
                        "dimension": dimension,
                        "value": value,
                        "term": vocabulary[present],
                        "df": df[present].astype(np.int32),
                        "n_docs": np.int32(len(rows)),
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=["dimension", "value", "term", "df", "n_docs"])
    return pd.concat(frames, ignore_index=True)
