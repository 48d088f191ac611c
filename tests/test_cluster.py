"""The clusterer seam: HDBSCAN by default, any frozen-dataclass clusterer through the same
calls (topics and levels), and run ids that name a clusterer only when it is not the default."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from explorer import artifacts
from explorer.build import cluster, consensus
from explorer.build.levels import build_levels
from explorer.build.pipeline import build, plan_build
from explorer.build.plan import corpus_fingerprint, run_key
from explorer.build.topics import default_params, partition
from explorer.errors import InputError
from tests.conftest import SEED_DIR, build_config
from tests.test_levels import planted


@dataclass(frozen=True)
class KMeansClusterer:
    """A second clusterer for the seam: k-means, which leaves no noise."""

    n_clusters: int
    seed: int = 0

    def fit_predict(self, reduced: np.ndarray) -> np.ndarray:
        from sklearn.cluster import KMeans

        model = KMeans(n_clusters=self.n_clusters, n_init=4, random_state=self.seed)
        return model.fit_predict(reduced)


def _blobs(n: int = 60, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=8, size=(3, 5))
    return np.vstack([c + rng.normal(size=(n, 5)) for c in centres])


def test_the_default_is_hdbscan_sized_by_the_corpus_as_before():
    """What topics.py ran before the seam, called directly, labels the same rows alike."""
    import hdbscan

    reduced, params = _blobs(), default_params(180)
    chosen = cluster.for_topics(params, None)
    assert chosen == cluster.HDBSCANClusterer(params.min_topic_size, params.min_samples)
    before = hdbscan.HDBSCAN(
        min_cluster_size=params.min_topic_size, min_samples=params.min_samples,
        metric="euclidean", cluster_selection_method="eom",
    ).fit_predict(reduced.astype(np.float64))  # fmt: skip
    np.testing.assert_array_equal(chosen.fit_predict(reduced), before)


def test_subtopics_try_hdbscan_then_its_leaf_selection_unless_given_one():
    first, finer = cluster.for_subtopics(12, None)
    assert (first.min_cluster_size, first.min_samples) == (12, 6)
    assert (first.cluster_selection_method, finer.cluster_selection_method) == ("eom", "leaf")
    assert cluster.for_subtopics(12, KMeansClusterer(3)) == (KMeansClusterer(3),)


@dataclass(frozen=True)
class CountingKMeans:
    """3-means that notes how many rows each call grouped, one line per call in `log`: the
    consensus fits run in worker processes, so a list kept in this one would see none."""

    log: Path

    def fit_predict(self, reduced: np.ndarray) -> np.ndarray:
        with self.log.open("a") as out:
            out.write(f"{len(reduced)}\n")
        return KMeansClusterer(3).fit_predict(reduced)

    def calls(self) -> list[int]:
        return sorted(int(line) for line in self.log.read_text().split())


def test_a_given_clusterer_is_what_both_topics_and_levels_call(tmp_path):
    counting = CountingKMeans(tmp_path / "calls")
    vectors, topics, _ = planted()
    levels = build_levels(vectors, topics, min_topic_size=10, seed=42, clusterer=counting)
    # The one large topic, split by the given clusterer alone, once per consensus fit.
    assert counting.calls() == [240] * consensus.FITS
    assert sorted(set(levels.subtopic[:240])) == ["0.0", "0.1", "0.2"]


def test_partition_agrees_on_the_clusterers_labels_numbered_by_size(tmp_path):
    """Every consensus fit groups its reduction with the given clusterer (here k-means,
    which leaves no noise); the fits agree on the planted blobs, the largest numbered 0."""
    from explorer.build.projection import knn_graph

    counting = CountingKMeans(tmp_path / "calls")
    sizes = (110, 80, 60)
    vectors = np.vstack([_blobs(n, seed=0)[i * n : (i + 1) * n] for i, n in enumerate(sizes)])
    truth = np.repeat([0, 1, 2], sizes)
    params = default_params(len(vectors), seed=42)
    graph = knn_graph(vectors.astype(np.float32), 2 * params.n_neighbors)
    part = partition(vectors.astype(np.float32), graph, params, tmp_path, counting)
    assert counting.calls() == [len(vectors)] * consensus.FITS
    np.testing.assert_array_equal(part.labels, truth)  # 0 is the largest
    assert part.clustered == len(vectors)  # no noise: nothing for outlier assignment


def test_a_clusterers_parameters_must_be_frozen_data():
    @dataclass
    class Loose:
        k: int = 2

        def fit_predict(self, reduced):
            return np.zeros(len(reduced), dtype=np.int64)

    class Opaque:
        def fit_predict(self, reduced):
            return np.zeros(len(reduced), dtype=np.int64)

    for bad in (Loose(), Opaque()):
        with pytest.raises(InputError, match="frozen dataclass"):
            cluster.describe(bad)
    assert cluster.describe(None) is None
    assert cluster.describe(KMeansClusterer(4)) == {
        "name": "tests.test_cluster.KMeansClusterer",
        "params": {"n_clusters": 4, "seed": 0},
    }


# The options a default build recorded before the clusterer seam: its run id hashes exactly
# these (with the code, inputs and papers), so no run id changed when the seam came.
RECORDED_BEFORE_THE_SEAM = (
    "embedding_model", "embedding_model_id", "embedding_weights", "embedding_precision",
    "seed", "min_topic_size", "stability", "params", "read_options",
)  # fmt: skip


def test_a_default_builds_run_key_is_what_it_was_before_the_seam(tmp_path):
    plan = plan_build(build_config("seed", [SEED_DIR]), cache_dir=tmp_path, progress=False)
    assert tuple(plan.recorded) == RECORDED_BEFORE_THE_SEAM
    before = {key: plan.recorded[key] for key in RECORDED_BEFORE_THE_SEAM}
    papers = corpus_fingerprint(plan.corpus)
    assert plan.run_id == run_key(before, plan.code, plan.inputs, papers)
    # The key itself is the hash it always was (a fixed input, a fixed answer).
    assert run_key({"a": 1}, {"pipeline_version": 0}, [{"sha256": "x"}], "p") == "9dad671ff51c"


def test_another_clusterer_is_another_run_and_is_recorded(tmp_path):
    default = plan_build(build_config("seed", [SEED_DIR]), cache_dir=tmp_path, progress=False)
    plans = {
        k: plan_build(
            build_config("seed", [SEED_DIR], clusterer=KMeansClusterer(k)),
            cache_dir=tmp_path,
            progress=False,
        )  # fmt: skip
        for k in (3, 4)
    }
    assert len({default.run_id, plans[3].run_id, plans[4].run_id}) == 3
    assert plans[3].recorded["clusterer"] == cluster.describe(KMeansClusterer(3))


@pytest.mark.realbuild
def test_a_run_built_with_a_toy_clusterer_through_the_seam(seed_cache, seed_run, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")  # vectors only
    config = build_config("seed", [SEED_DIR], clusterer=KMeansClusterer(3))
    run = build(config, cache_dir=cache, progress=False, log=lambda m: None).run
    assert run.run_id != seed_run.run_id
    assert run.manifest.config.clusterer == cluster.describe(KMeansClusterer(3))
    # Every consensus fit grouped the papers with 3-means (no short-list Ward cut for a
    # given clusterer): what the fits agree on is a few groups, each near one of theirs.
    topics = run.manifest.counts.topics
    assert 2 <= topics <= 6, topics
    assert run.manifest.counts.clustered_share >= 0.8
    assert artifacts.open_run(cache, "seed").run_id == run.run_id  # a complete, intact run


def test_hdbscan_starts_no_pool_of_its_own_above_16384_points(monkeypatch):
    """The consensus's fits fill every core (cores.on_cores): hdbscan's core distances run
    in the fit's own process, where by default it asks joblib for four more above 16,384."""
    import hdbscan._hdbscan_boruvka as boruvka

    pools = []

    class Recorded(boruvka.Parallel):
        def __call__(self, *args, **kwargs):
            pools.append(self.n_jobs)
            return super().__call__(*args, **kwargs)

    monkeypatch.setattr(boruvka, "Parallel", Recorded)
    points = np.random.default_rng(0).normal(size=(16_500, 5))
    labels = cluster.HDBSCANClusterer(min_cluster_size=50, min_samples=10).fit_predict(points)
    assert len(labels) == len(points) and pools == []
