"""The clusterer seam: what groups the reduced vectors into topics, and a topic into subtopics.

BERTopic's users swap the clusterer more than any other stage, so it is a value passed in,
in scikit-learn's shape: the parameters are data (a frozen dataclass's fields) and
`fit_predict(reduced)` returns one integer label per row, OUTLIER (-1) for noise. Labels
need not be numbered by size: topics.py and levels.py renumber them. The consensus fits
call it in worker processes (consensus.seeded_fits), so it must pickle.

HDBSCAN is the default. Its parameters follow the corpus (topics.TopicParams, already in
the run id), so a build that names no clusterer records none, and its run id is the one it
always had. A build given another clusterer records its class and fields (`describe`): the
run id changes with them, and so does the manifest's config.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, is_dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from explorer.errors import InputError


@runtime_checkable
class Clusterer(Protocol):
    """Labels for reduced vectors: one per row, -1 for a row in no cluster."""

    def fit_predict(self, reduced: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class HDBSCANClusterer:
    """HDBSCAN on the 5-D UMAP reduction: density clusters of any shape, and noise left as
    noise (topics.assign_outliers decides about it explicitly). On one core: the consensus
    runs its fits on every core already (cores.on_cores), and hdbscan's own pool of four for
    core distances above 16,384 points would only crowd them (the distances are exact
    either way, so the labels are the same)."""

    min_cluster_size: int
    min_samples: int
    cluster_selection_method: str = "eom"  # "leaf": finer clusters (levels.py's fallback)
    metric: str = "euclidean"

    def fit_predict(self, reduced: np.ndarray) -> np.ndarray:
        import hdbscan

        model = hdbscan.HDBSCAN(
            min_cluster_size=self.min_cluster_size,
            min_samples=self.min_samples,
            metric=self.metric,
            cluster_selection_method=self.cluster_selection_method,
            core_dist_n_jobs=1,
        )
        return model.fit_predict(reduced.astype(np.float64))


class TopicSizes(Protocol):
    """What sizes the default topic clusterer: topics.TopicParams has both (named here by
    shape, so this module and topics.py do not import each other)."""

    min_topic_size: int
    min_samples: int


def for_topics(params: TopicSizes, chosen: Clusterer | None) -> Clusterer:
    """The clusterer of the topic fit: the one the build was given, else HDBSCAN sized by the
    corpus (min_samples below min_cluster_size keeps fewer abstracts in the noise)."""
    if chosen is not None:
        return chosen
    return HDBSCANClusterer(min_cluster_size=params.min_topic_size, min_samples=params.min_samples)


def for_subtopics(min_size: int, chosen: Clusterer | None) -> tuple[Clusterer, ...]:
    """The clusterers that split one topic's members, tried in order until no part is above
    the leaf target (levels.split_topic). By default HDBSCAN's excess-of-mass selection, then
    its finer leaf selection; a given clusterer splits topics too, alone."""
    if chosen is not None:
        return (chosen,)
    samples = max(1, min_size // 2)
    return (
        HDBSCANClusterer(min_cluster_size=min_size, min_samples=samples),
        HDBSCANClusterer(
            min_cluster_size=min_size, min_samples=samples, cluster_selection_method="leaf"
        ),
    )


def describe(chosen: Clusterer | None) -> dict[str, object] | None:
    """What the run id and the manifest's config record of a clusterer: nothing for the
    default, else its class and parameters (so another choice is another run)."""
    if chosen is None:
        return None
    if not (is_dataclass(chosen) and type(chosen).__dataclass_params__.frozen):
        raise InputError(
            f"clusterer {type(chosen).__name__}: its parameters must be data, a frozen dataclass"
        )
    if not isinstance(chosen, Clusterer):
        raise InputError(f"clusterer {type(chosen).__name__} has no fit_predict(reduced)")
    kind = type(chosen)
    return {"name": f"{kind.__module__}.{kind.__qualname__}", "params": asdict(chosen)}
