"""The build's stages after planning, each a function of the plan and earlier results,
and the typed results they hand on.

`pipeline.build` runs them in order under its stage timer; every result is a value the
next stage takes, so no stage reaches back into an earlier one. `embed` and `neighbours`
come first; then the topic stage of the plan's mode (topic_stages.py), which always ends
in one `Topics`; then `summarise`, `write` and `export_encoder`. This module imports
plan.py, never pipeline.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from explorer import artifacts, node_ids
from explorer.build import summaries
from explorer.vectors import unit_float16

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from scipy.sparse import csr_matrix

    from explorer.build.coherence import WordCounts
    from explorer.build.consensus import Stability
    from explorer.build.counts import PaperTerms
    from explorer.build.levels import Levels
    from explorer.build.models import Embedder
    from explorer.build.plan import Plan
    from explorer.build.projection import KnnGraph
    from explorer.build.topics import TopicFit, TopicParams


@dataclass(frozen=True)
class Embedded:
    """One vector per paper (row i = paper i), and how many had to be computed."""

    vectors: np.ndarray
    n_new: int


@dataclass(frozen=True)
class Summary:
    """Every table and array a run holds besides the model."""

    tables: dict[str, pd.DataFrame]  # artifacts.TABLES, by name
    topic_similarity: np.ndarray
    doc_terms: csr_matrix  # papers x vocabulary
    n_topics: int
    stability: dict | None = None  # fits, their mean ARI, median topic stability


@dataclass(frozen=True)
class Topics:
    """The topic stage's result in every mode: what `summarise` and the manifest read."""

    fit: TopicFit
    coords: np.ndarray  # the 2-D map, row i = paper i
    levels: Levels  # areas and subtopics: cut with the fit, kept, or the sample's
    stability: Stability | None = None  # from the consensus's fits (none when topics are kept)
    kept: int = 0  # papers whose topic came from the kept run or the sample's fit
    added: int = 0  # papers assigned to those topics (assign.py)


def embed(plan: Plan, docs: list[str], log: Callable[[str], None]) -> Embedded:
    """Every paper's vector. What the cache lacks is embedded in a child process
    (isolated.py says why), on the Ray cluster for `--engine ray`, and written to the
    cache; this process then reads every vector from there. The query encoder is exported
    in that child too (`log` says so), before the fit's memory."""
    from explorer.build.embed import embed_texts
    from explorer.build.isolated import in_child
    from explorer.build.models import unload_models

    on_cluster = 0
    if plan.config.engine == "ray":
        from explorer.build import ray_engine

        on_cluster = ray_engine.embed_missing(
            docs,
            plan.embedder,
            options=plan.config.ray or ray_engine.RayOptions(),
            progress=plan.progress,
        )
    n_new, skipped = in_child(_embed_and_export, docs, plan.embedder, plan.progress, log)
    if skipped is not None:  # said once by the encoder stage, not tried again
        from explorer.build.encoder_export import remember_skip

        remember_skip(plan.embedder, skipped)
    vectors, _ = embed_texts(docs, plan.embedder, progress=False)  # read from the cache
    unload_models()  # where the child ran here: the topic fits come next
    return Embedded(vectors=vectors, n_new=n_new + on_cluster)


def _embed_and_export(
    docs: list[str], embedder: Embedder, progress: bool, log: Callable[[str], None]
) -> tuple[int, str | None]:
    """Embed what the cache lacks and export the query encoder (a no-op when the cache
    holds it intact): the export's cheapest moment, before the fit. How many were new, and
    why there is no export when the model cannot have one."""
    from explorer.build.embed import embed_texts
    from explorer.build.encoder_export import export_early

    _, n_new = embed_texts(docs, embedder, progress=progress)
    return n_new, export_early(embedder, log=log)


def neighbours(plan: Plan, embedded: Embedded) -> KnnGraph:
    from explorer.build.projection import knn_graph

    return knn_graph(
        embedded.vectors, graph_k(plan.params),
        exact_up_to=plan.config.exact_neighbours_up_to, seed=plan.params.seed,
    )  # fmt: skip


def graph_k(params: TopicParams) -> int:
    """Neighbours per paper in the shared graph: twice UMAP's, the candidates each
    consensus fit picks its jittered neighbours from (consensus.jittered_graph), and at
    least the similar-papers list's."""
    return max(2 * params.n_neighbors, summaries.N_SIMILAR + 1)


def summarise(
    plan: Plan, docs: list[str], embedded: Embedded, graph: KnnGraph, topics: Topics
) -> Summary:
    """Topics, per-paper topic mixes, neighbours, hierarchy and keyword statistics, and
    every node's phrase labels (the areas and subtopics came with the topic stage)."""
    fit, coords = topics.fit, topics.coords
    vectors, labels = embedded.vectors, fit.labels
    papers = pd.DataFrame([asdict(p) for p in plan.corpus.papers])
    papers["year"] = papers["year"].astype("Int64")
    ids = papers["paper_id"].tolist()
    topic_ids = np.array(sorted(t for t in set(labels.tolist()) if t != node_ids.OUTLIER))
    centroids = summaries.topic_centroids(vectors, labels, topic_ids)
    doc_topics, assigned = summaries.doc_topic_distribution(vectors, labels, centroids, topic_ids)
    doc_topics.insert(0, "paper_id", np.asarray(ids, dtype=object)[doc_topics.pop("doc")])
    n_topics = len(topic_ids)
    hierarchy = summaries.hierarchy_table(fit.model, len(docs), n_topics, progress=plan.progress)
    similarity = (centroids @ centroids.T).astype(np.float32)
    table = summaries.topic_table(
        fit,
        topic_ids=topic_ids,
        coords=coords,
        parents=summaries.direct_parents(hierarchy),
        representatives=summaries.representative_papers(vectors, labels, centroids, topic_ids, ids),
        positions=summaries.classical_mds(similarity),
    )
    levels = topics.levels
    nodes = _labelled_nodes(plan, papers, labels, coords, levels)
    table = _with_phrase_labels(table, nodes)
    scores = topics.stability.topics if topics.stability else {}
    table["stability"] = [scores.get(int(t), np.nan) for t in table["topic_id"]]
    held = {**{str(t): v for t, v in scores.items()}, **levels.stability}
    nodes["stability"] = nodes["node_id"].map(held).astype(float)  # areas: none
    _add_paths(papers, labels, nodes, levels)
    label_of = dict(zip(table["topic_id"], table["label"], strict=True))
    papers["topic_id"] = labels
    papers["topic_label"] = [label_of[t] for t in labels]
    papers["probability"] = assigned
    papers["x"], papers["y"] = coords[:, 0], coords[:, 1]
    matrix, vocabulary, vocab, nodes, counts = _terms_and_coherence(
        fit.terms, labels, levels, nodes
    )
    hierarchy = summaries.label_merges(hierarchy, *counts)
    coherence_of = dict(zip(nodes["node_id"], nodes["coherence"], strict=True))
    table["coherence"] = [coherence_of.get(str(t), np.nan) for t in table["topic_id"]]
    tables = {
        "papers": _string_ids(papers),
        "topics": _string_ids(table),
        "doc_topics": _string_ids(doc_topics),
        "neighbors": summaries.similar_papers(graph, ids),
        "hierarchy": hierarchy,
        "keywords": summaries.keyword_stats(matrix, vocabulary, papers),
        "vocab": vocab,
        "nodes": nodes,
    }
    return Summary(
        tables=tables, topic_similarity=similarity, doc_terms=matrix, n_topics=n_topics,
        stability=_stability_counts(topics.stability),
    )  # fmt: skip


def _terms_and_coherence(
    terms: PaperTerms, labels: np.ndarray, levels: Levels, nodes: pd.DataFrame
) -> tuple[csr_matrix, np.ndarray, pd.DataFrame, pd.DataFrame, tuple[WordCounts, list, np.ndarray]]:
    """Which papers use which of the most widespread terms (from the topic fit's counts),
    the vocabulary, its table, the nodes with their top words and NPMI coherence, and what
    `summaries.label_merges` names the merge tree's parents from (the nodes' word counts)."""
    from explorer.build import coherence

    widest = terms.widest()
    matrix, vocabulary = widest.presence(), widest.vocabulary
    vocab = summaries.vocabulary_table(matrix, vocabulary)
    members, _ = summaries.node_members(labels, levels)
    counts = coherence.word_counts(matrix, vocabulary, members)
    weights = coherence.single_word_weights(vocabulary, vocab["specificity"].to_numpy())
    best = dict(zip(members, coherence.ranked_words(counts, weights=weights), strict=True))
    nodes = coherence.with_coherence(nodes, matrix, vocabulary, best)
    return matrix, vocabulary, vocab, nodes, (counts, list(members), weights)


def _stability_counts(stability: Stability | None) -> dict | None:
    if stability is None:
        return None
    values = list(stability.topics.values())
    return {
        "refits": stability.refits,
        "mean_ari": round(stability.mean_ari, 4),
        "median": round(float(np.median(values)), 4) if values else None,
        "below_0.5": sum(v < 0.5 for v in values),
    }


def _labelled_nodes(
    plan: Plan, papers: pd.DataFrame, labels: np.ndarray, coords: np.ndarray, levels: Levels
) -> pd.DataFrame:
    """The nodes table: every area, topic and subtopic with its phrase labels."""
    from explorer.build.labels.nodes import label_nodes

    members, parent_of = summaries.node_members(labels, levels)
    phrase = label_nodes(papers["abstract"].tolist(), members, parent_of, seed=plan.params.seed)
    return summaries.node_table(members, parent_of, phrase, levels, coords)


def _with_phrase_labels(topics: pd.DataFrame, nodes: pd.DataFrame) -> pd.DataFrame:
    """The topic table with phrase labels (short and long) and each topic's area."""
    by_id = nodes.set_index("node_id")
    real = topics["topic_id"] != node_ids.OUTLIER
    keys = topics["topic_id"].astype(str)
    topics = topics.copy()
    topics.loc[real, "label"] = by_id.loc[keys[real], "label"].to_numpy()
    topics["long_label"] = topics["label"]
    topics.loc[real, "long_label"] = by_id.loc[keys[real], "long_label"].to_numpy()
    topics["area_id"] = node_ids.OUTLIER_ID
    topics.loc[real, "area_id"] = by_id.loc[keys[real], "parent_id"].to_numpy()
    return topics


def _string_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with topic ids as text ("12", OUTLIER_ID), as node ids are, so no reader
    turns an id into a number (the merge tree's node ids in `hierarchy` stay integers)."""
    return frame.assign(topic_id=frame["topic_id"].astype(int).astype(str))


def _add_paths(
    papers: pd.DataFrame, labels: np.ndarray, nodes: pd.DataFrame, levels: Levels
) -> None:
    """Each paper's path as strings: area_id ("-1" for outliers) and subtopic_id ("" where
    its topic has no subtopics)."""
    area = dict(zip(nodes["node_id"], nodes["parent_id"], strict=True))
    papers["area_id"] = [
        area[str(t)] if t != node_ids.OUTLIER else node_ids.OUTLIER_ID for t in labels
    ]
    papers["subtopic_id"] = levels.subtopic.astype(str)


def export_encoder(plan: Plan, log: Callable[[str], None]) -> dict:
    """The run's query encoder: the model's ONNX export (made once per model and weights,
    under the cache) as the manifest records it, or why there is none."""
    from explorer.build.encoder_export import export_query_encoder

    return export_query_encoder(plan.embedder, log=log)


def write(plan: Plan, directory: Path, summary: Summary, fit: TopicFit, embedded: Embedded) -> None:
    """Every artifact of the run into `directory` (the manifest comes after, from pipeline)."""
    from explorer.build.models import model_id

    for name in artifacts.TABLES:
        artifacts.write_table(directory, name, summary.tables[name])
    matrix = summary.doc_terms
    artifacts.write_array(directory, "topic_similarity", summary.topic_similarity)
    artifacts.write_array(directory, "doc_terms_indptr", matrix.indptr.astype(np.int64))
    artifacts.write_array(directory, "doc_terms_indices", matrix.indices.astype(np.int32))
    # Unit-length float16: semantic search needs only cosines, at half the bytes.
    artifacts.write_array(directory, "embeddings", unit_float16(embedded.vectors))
    fit.model.save(
        directory / artifacts.MODEL_DIR,
        serialization="safetensors",
        save_ctfidf=True,
        save_embedding_model=model_id(plan.embedder.model_name),
    )
