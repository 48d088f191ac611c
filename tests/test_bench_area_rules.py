"""bench/area_rules.py (bench/README.md, "Areas by the topic count") replays area rules on stored topics: its replay of the
build's rule is the build's, and its replay of the rule before finds planted fields."""

import numpy as np
from sklearn.metrics import adjusted_rand_score

from bench.area_rules import paper_areas
from explorer.build.levels import cut_areas


def _fields(rng, fields: int, per_field: int) -> np.ndarray:
    centres = rng.normal(size=(fields, 16))
    return np.vstack([c + rng.normal(scale=0.05, size=(per_field, 16)) for c in centres])


def test_the_replayed_rule_is_the_builds():
    rng = np.random.default_rng(5)
    centroids = rng.normal(size=(52, 16))
    topics = np.arange(52)
    areas = paper_areas(topics, centroids, topics)
    built = cut_areas(centroids, np.ones(52, dtype=int))
    assert adjusted_rand_score(areas["per_5"], built) == 1.0
    assert len(set(areas["per_5"].tolist())) == 10


def test_the_silhouette_replay_finds_planted_fields_and_outliers_have_no_area():
    rng = np.random.default_rng(2)
    centroids = _fields(rng, 7, 4)
    labels = np.array([-1, *range(28)])
    areas = paper_areas(labels, centroids, np.arange(28))
    assert areas["silhouette"][0] == -1
    cut = areas["silhouette"][1:]
    assert len(set(cut.tolist())) == 7
    assert all(len(set(cut[i * 4 : i * 4 + 4].tolist())) == 1 for i in range(7))
    assert len(set(areas["fixed_12"][1:].tolist())) == 12
