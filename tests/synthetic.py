"""A schema-true run of any size written without a model: for scale tests and viewer benchmarks.

Papers sit in Gaussian blobs (one per topic) on the map; every table and array the
viewer reads is present and consistent, and the manifest carries the real inventory.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from explorer import artifacts, node_ids
from explorer.atomic_files import atomic_write_text, file_inventory
from explorer.build import summaries as summarise
from explorer.manifest import SCHEMA_VERSION, Counts, LevelCounts, Manifest, RunConfig
from explorer.names import LATEST
from explorer.vectors import unit_float16

WORDS = [f"term{i}" for i in range(2000)]


def _synthetic_levels(
    papers: pd.DataFrame, topics: pd.DataFrame, present: list[int], n_topics: int
) -> pd.DataFrame:
    """Areas (topic id mod 6) and two subtopics of topic 0; fills the papers' path columns."""
    from explorer.build.labels.selection import NodeLabel
    from explorer.build.levels import Levels

    labels = papers["topic_id"].to_numpy()
    subtopic = np.full(len(papers), "", dtype=object)
    members = np.flatnonzero(labels == 0)
    subtopic[members] = [node_ids.subtopic_id(0, i % 2) for i in range(len(members))]
    levels = Levels(
        area_of_topic={t: node_ids.area_id(t % 6) for t in present},
        subtopic=subtopic,
        unsplit={},
    )
    node_rows, parent_of = summarise.node_members(labels, levels)
    names = {n: NodeLabel(f"node {n}", f"node {n} long", (f"node {n}",)) for n in node_rows}
    coords = papers[["x", "y"]].to_numpy()
    papers["area_id"] = [levels.area_of_topic.get(t, "-1") for t in labels]
    papers["subtopic_id"] = subtopic.astype(str)
    topics["long_label"] = topics["label"]
    topics["area_id"] = [levels.area_of_topic.get(t, "-1") for t in topics["topic_id"]]
    return summarise.node_table(node_rows, parent_of, names, levels, coords)


def write_synthetic_run(
    cache: Path, name: str, n_papers: int, *, n_topics: int = 60, seed: int = 0
) -> Path:
    """Write `cache/name/<run_id>/` and the `latest` pointer; returns the run directory."""
    rng = np.random.default_rng(seed)
    papers, topic_of, centres, years = _papers(rng, n_papers, n_topics)
    topics, present = _topics(papers, topic_of, centres, n_topics)
    nodes = _synthetic_levels(papers, topics, present, n_topics)
    matrix = _term_matrix(rng, n_papers)
    run_id = f"synthetic{n_papers}"
    corpus_dir = Path(cache) / name
    corpus_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=corpus_dir, prefix=".tmp-"))
    for table, frame in _tables(papers, topics, nodes, matrix, topic_of).items():
        artifacts.write_table(tmp, table, frame)
    _write_arrays(tmp, rng, matrix, len(present))
    counts = _counts(topic_of, present, nodes, years)
    _write_manifest(tmp, name, run_id, seed, counts)
    final = corpus_dir / run_id
    tmp.replace(final)
    atomic_write_text(corpus_dir / LATEST, run_id)
    return final


def _topic_labels(n_topics: int) -> list[str]:
    return [f"topic {t} words" for t in range(n_topics)]


def _papers(
    rng: np.random.Generator, n_papers: int, n_topics: int
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The papers table in Zipf-sized topics (5% outliers), with each topic's blob centre on
    the map and the papers' years."""
    topic_of = np.minimum(rng.zipf(1.6, n_papers) - 1, n_topics - 1)
    topic_of[rng.random(n_papers) < 0.05] = -1
    centres = rng.normal(scale=10, size=(n_topics, 2))
    coords = centres[np.maximum(topic_of, 0)] + rng.normal(size=(n_papers, 2))
    years = rng.integers(2013, 2020, n_papers)
    ids = [f"syn-{i}" for i in range(n_papers)]
    labels = _topic_labels(n_topics)
    papers = pd.DataFrame(
        {
            "paper_id": ids,
            "title": [f"Synthetic paper {i} on topic {t}" for i, t in enumerate(topic_of)],
            "abstract": [
                f"Abstract {i} about term{t} and term{t + 1}." for i, t in enumerate(topic_of)
            ],
            "title_derived": False,
            "authors": "A. Author; B. Author",
            "venue": rng.choice(["ICML", "NeurIPS"], n_papers),
            "year": pd.array(years, dtype="Int64"),
            "status": rng.choice(["Poster", "Spotlight", "Oral"], n_papers, p=[0.8, 0.15, 0.05]),
            "track": "main",
            "url": "",
            "code_url": "",
            "source_file": "synthetic",
            "topic_id": topic_of,
            "topic_label": ["Outliers" if t < 0 else labels[t] for t in topic_of],
            "probability": rng.random(n_papers).astype(np.float32),
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    return papers, topic_of, centres, years


def _topics(
    papers: pd.DataFrame, topic_of: np.ndarray, centres: np.ndarray, n_topics: int
) -> tuple[pd.DataFrame, list[int]]:
    """The topics table (the topics some paper is in, then the outliers), and those topics."""
    n_papers, ids, labels = len(papers), papers["paper_id"].tolist(), _topic_labels(n_topics)
    present = sorted(set(topic_of.tolist()) - {-1})
    sizes = papers["topic_id"].value_counts()
    topics = pd.DataFrame(
        {
            "topic_id": present + [-1],
            "label": [labels[t] for t in present] + ["Outliers"],
            "size": [int(sizes.get(t, 0)) for t in present + [-1]],
            "share": [float(sizes.get(t, 0)) / n_papers for t in present + [-1]],
            "keywords": [[f"term{t}", f"term{t + 1}"] for t in present] + [[]],
            "keyword_weights": [[0.6, 0.4] for _ in present] + [[]],
            "representative_ids": [[ids[int(np.flatnonzero(topic_of == t)[0])]] for t in present]
            + [[]],
            "parent_id": pd.array([None] * (len(present) + 1), dtype="Int64"),
            "map_x": [float(centres[t, 0]) for t in present] + [0.0],
            "map_y": [float(centres[t, 1]) for t in present] + [0.0],
            "dist_x": [float(centres[t, 0]) for t in present] + [None],
            "dist_y": [float(centres[t, 1]) for t in present] + [None],
        }
    )
    return topics, present


def _term_matrix(rng: np.random.Generator, n_papers: int) -> csr_matrix:
    """Twelve random vocabulary terms per paper, as a 0/1 document-term matrix."""
    terms = np.sort(rng.integers(0, len(WORDS), size=(n_papers, 12)), axis=1)
    matrix = csr_matrix(
        (np.ones(terms.size, dtype=np.int32), terms.ravel(), np.arange(0, terms.size + 1, 12)),
        shape=(n_papers, len(WORDS)),
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1
    return matrix


def _links(papers: pd.DataFrame, topic_of: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each paper's one topic (doc_topics) and its ten neighbours, the next ten papers."""
    n_papers, ids = len(papers), papers["paper_id"].tolist()
    doc_topics = pd.DataFrame(
        {
            "paper_id": ids,
            "rank": 1,
            "topic_id": np.maximum(topic_of, 0),
            "score": papers["probability"],
        }
    )
    neighbors = pd.DataFrame(
        {
            "paper_id": np.repeat(ids, 10),
            "rank": np.tile(np.arange(1, 11), n_papers),
            "neighbor_id": np.asarray(ids, dtype=object)[
                (np.arange(n_papers)[:, None] + np.arange(1, 11)) % n_papers
            ].ravel(),
            "similarity": np.float32(0.5),
        }
    )
    return doc_topics, neighbors


def _tables(
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    nodes: pd.DataFrame,
    matrix: csr_matrix,
    topic_of: np.ndarray,
) -> dict[str, pd.DataFrame]:
    """Every table of the run, by name, topic ids as text as the build stores them."""
    doc_topics, neighbors = _links(papers, topic_of)
    vocabulary = np.asarray(WORDS, dtype=object)
    vocab = pd.DataFrame(
        {
            "term_id": np.arange(len(WORDS), dtype=np.int32),
            "term": vocabulary,
            "df": np.asarray(matrix.sum(axis=0)).ravel().astype(np.int32),
        }
    )
    as_text = {"topic_id": lambda frame: frame["topic_id"].astype(str)}  # as the build stores
    return {
        "papers": papers.assign(**as_text),
        "topics": topics.assign(**as_text),
        "doc_topics": doc_topics.assign(**as_text),
        "neighbors": neighbors,
        "hierarchy": summarise.hierarchy_table(None, 0, 1),
        "keywords": summarise.keyword_stats(matrix, vocabulary, papers),
        "vocab": vocab,
        "nodes": nodes,
    }


def _write_arrays(tmp: Path, rng: np.random.Generator, matrix: csr_matrix, n_present: int) -> None:
    """The topic similarity, the document-term matrix's index arrays and random embeddings."""
    centroid_sim = np.eye(n_present, dtype=np.float32)
    artifacts.write_array(tmp, "topic_similarity", centroid_sim)
    artifacts.write_array(tmp, "doc_terms_indptr", matrix.indptr.astype(np.int64))
    artifacts.write_array(tmp, "doc_terms_indices", matrix.indices.astype(np.int32))
    vectors = rng.normal(size=(matrix.shape[0], 384)).astype(np.float32)
    artifacts.write_array(tmp, "embeddings", unit_float16(vectors))


def _counts(
    topic_of: np.ndarray, present: list[int], nodes: pd.DataFrame, years: np.ndarray
) -> Counts:
    """The manifest's counts of the run."""
    n_papers = len(topic_of)
    levels = nodes["level"].value_counts()
    return Counts(
        papers=n_papers, skipped=0, merged=0, topics=len(present),
        outliers=int((topic_of == -1).sum()), outlier_share=float((topic_of == -1).mean()),
        clustered_share=0.95, outlier_threshold=0.5, embedded_new=0, embedded_cached=n_papers,
        vocabulary=len(WORDS),
        levels=LevelCounts(
            areas=int(levels.get("area", 0)), topics=int(levels.get("topic", 0)),
            subtopics=int(levels.get("subtopic", 0)), has_areas=node_ids.has_area_level(nodes),
            largest_leaf_share=0.0,
        ),
        years=tuple(sorted(set(years.tolist()))), venues=("ICML", "NeurIPS"),
    )  # fmt: skip


def _write_manifest(tmp: Path, name: str, run_id: str, seed: int, counts: Counts) -> None:
    """The manifest, last, with the inventory of every file written before it."""
    config = RunConfig(
        embedding_model="synthetic", embedding_model_id="synthetic",
        embedding_weights="synthetic", embedding_precision="float32", seed=seed,
        min_topic_size=None, params={}, read_options={},
    )  # fmt: skip
    Manifest(
        schema_version=SCHEMA_VERSION, pipeline_version=0, corpus=name, run_id=run_id,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), config=config,
        inputs=(), counts=counts, skipped_examples=(), merged_examples=(), messages=(),
        timings={}, versions={}, files=file_inventory(tmp),
    ).write(tmp)  # fmt: skip
