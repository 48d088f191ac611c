"""The topic stage of each build mode (plan.BuildMode), each ending in one `stages.Topics`.

`FULL`: `fit` (the consensus of seeded fits over every paper), then `project` (the 2-D map
from the shared graph). `KEEP_TOPICS`: `keep` (the latest run's topics, new papers
assigned). `SAMPLE`: `fit_sample` (topics, levels and map fitted on a stratified sample,
every other paper assigned). Like stages.py, this module imports plan.py, never
pipeline.py; `pipeline` runs the stage of the plan's mode between `stages.neighbours` and
`stages.summarise`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from explorer import node_ids
from explorer.build.consensus import topic_stability
from explorer.build.stages import Topics, graph_k
from explorer.build.topics import Partition

if TYPE_CHECKING:
    from pathlib import Path

    from explorer.build.config import BuildConfig
    from explorer.build.consensus import Stability
    from explorer.build.keep import Kept
    from explorer.build.levels import Levels
    from explorer.build.plan import Plan
    from explorer.build.projection import KnnGraph
    from explorer.build.stages import Embedded
    from explorer.build.topics import TopicFit, TopicParams


def fit(plan: Plan, docs: list[str], embedded: Embedded, graph: KnnGraph) -> Topics:
    """The consensus partition (topics.partition), each topic's stability over its fits,
    and BERTopic's keyword representation; the map is projected by `project`."""
    from explorer.build.levels import build_levels, renamed
    from explorer.build.topics import partition

    part = partition(
        embedded.vectors, graph, plan.params, plan.cache_dir, plan.config.clusterer,
        progress=plan.progress,
    )  # fmt: skip
    # The subtopics' fits too, while the worker processes are up and before BERTopic and
    # the model load here (`_represent` releases the workers first): the build's peak
    # memory is either the fits or that, never both.
    levels = build_levels(
        embedded.vectors, part.labels, min_topic_size=plan.params.min_topic_size,
        seed=plan.params.seed, cache_root=plan.cache_dir, clusterer=plan.config.clusterer,
    )  # fmt: skip
    fitted = _represent(plan, docs, embedded, part)
    empty = np.zeros((0, 2), dtype=np.float32)
    return Topics(
        fitted, empty, levels=renamed(levels, part.labels, fitted.labels),
        stability=topic_stability(part.fits, fitted.labels),
    )  # fmt: skip


def keep(plan: Plan, docs: list[str], embedded: Embedded) -> Topics:
    """The latest run's topics with the new papers assigned (`--keep-topics`), and their
    keyword representation; ids as BERTopic numbers them."""
    from explorer.build.keep import keep_topics, renumbered

    assert plan.base is not None
    ids = [p.paper_id for p in plan.corpus.papers]
    kept = keep_topics(plan.base, ids, embedded.vectors, engine=plan.config.engine)
    clustered = int((kept.labels != node_ids.OUTLIER).sum())
    fitted = _represent(
        plan, docs, embedded, _given(docs, plan, kept.labels, clustered, plan.base.threshold)
    )
    return _assigned(fitted, renumbered(kept, fitted.labels))


@dataclass(frozen=True)
class SampleFit:
    """A sample's own fit, before the other papers are assigned: its graph, topics, levels."""

    graph: KnnGraph
    partition: Partition
    levels: Levels


def fit_rows(
    vectors: np.ndarray,
    params: TopicParams,
    cache_dir: Path,
    config: BuildConfig,
    *,
    progress: bool = False,
) -> SampleFit:
    """Graph, partition and levels of `vectors` alone, as a build fits its sample: the one
    home of that sequence, which bench/sample_fit.py also fits its full fits and samples by.
    `config` is the BuildConfig (its clusterer and neighbour threshold)."""
    from explorer.build.levels import build_levels
    from explorer.build.projection import knn_graph
    from explorer.build.topics import partition

    graph = knn_graph(
        vectors, graph_k(params), exact_up_to=config.exact_neighbours_up_to, seed=params.seed
    )
    part = partition(vectors, graph, params, cache_dir, config.clusterer, progress=progress)
    levels = build_levels(
        vectors, part.labels, min_topic_size=params.min_topic_size, seed=params.seed,
        cache_root=cache_dir, clusterer=config.clusterer,
    )  # fmt: skip
    return SampleFit(graph, part, levels)


def fit_sample(plan: Plan, docs: list[str], embedded: Embedded) -> Topics:
    """Topics, levels and map fitted on a stratified sample (explorer/build/sample.py), every
    other paper assigned to them as `--keep-topics` assigns new papers; ids by size."""
    from explorer.build.keep import Base, keep_topics, renumbered
    from explorer.build.projection import project_2d
    from explorer.build.sample import stratified_sample

    params = plan.params
    rows = stratified_sample(plan.corpus.papers, plan.config.sample_size, params.seed)
    vectors = embedded.vectors[rows]
    sample = fit_rows(vectors, params, plan.cache_dir, plan.config, progress=plan.progress)
    part, levels = sample.partition, sample.levels
    coords = project_2d(
        vectors, sample.graph, n_neighbors=params.n_neighbors, seed=params.seed,
        cache_root=plan.cache_dir,
    )  # fmt: skip
    ids = [p.paper_id for p in plan.corpus.papers]
    fitted_papers = pd.DataFrame(
        {
            "paper_id": np.asarray(ids, dtype=object)[rows],
            "topic_id": part.labels,
            "subtopic_id": levels.subtopic,
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    base = Base(
        run_id="sample", papers=fitted_papers, params=params.as_dict(),
        embedding_model=plan.embedder.model_name, threshold=part.threshold,
        area_of_topic=levels.area_of_topic, unsplit=levels.unsplit,
    )  # fmt: skip
    kept = keep_topics(base, ids, embedded.vectors, engine=plan.config.engine)
    # The manifest's clustered share is the sample's (HDBSCAN saw only the sample).
    clustered = round(part.clustered * len(docs) / len(rows))
    fitted = _represent(
        plan, docs, embedded, _given(docs, plan, kept.labels, clustered, part.threshold)
    )
    held = topic_stability(part.fits, fitted.labels[rows])  # the sample's fits, its papers
    return _assigned(fitted, renumbered(kept, fitted.labels), held)


def _assigned(fit: TopicFit, kept: Kept, stability: Stability | None = None) -> Topics:
    """Topics no fit over every paper made, with the levels and map they came with."""
    return Topics(
        fit, kept.coords, levels=kept.levels, stability=stability, kept=kept.kept,
        added=kept.added,
    )  # fmt: skip


def _given(
    docs: list[str], plan: Plan, labels: np.ndarray, clustered: int, threshold: float
) -> Partition:
    """A partition made without a fit over these papers (kept or a sample's): BERTopic is
    handed the finished labels; the reduction it would cluster is unused."""
    unused = np.zeros((len(docs), plan.params.n_components), dtype=np.float32)
    return Partition(unused, labels, clustered, threshold)


def _represent(plan: Plan, docs: list[str], embedded: Embedded, part: Partition) -> TopicFit:
    """BERTopic's keywords for a finished partition (topics.represent); the model its
    keyword candidates loaded is dropped after (the subtopics' fits come next)."""
    from explorer.build.cores import release_workers
    from explorer.build.models import unload_models
    from explorer.build.topics import represent

    release_workers()  # no fit follows: their memory goes before BERTopic and the model come
    fitted = represent(docs, embedded.vectors, part, plan.params, embedder=plan.embedder)
    unload_models()
    return fitted


def project(
    plan: Plan, embedded: Embedded, graph: KnnGraph, topics: np.ndarray | None = None
) -> np.ndarray:
    """The map (projection.project_2d); `topics` held together on a short list's map."""
    from explorer.build.projection import project_2d

    return project_2d(
        embedded.vectors, graph, n_neighbors=plan.params.n_neighbors, seed=plan.params.seed,
        cache_root=plan.cache_dir, topics=topics,
    )  # fmt: skip
