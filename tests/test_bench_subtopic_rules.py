"""bench/subtopic_rules.py (row 12g) labels the same fits several ways: its replay of the
code's per-fit split and its choice of the steadier consensus, on planted fits."""

import numpy as np

from bench.subtopic_rules import WAYS, _ways, cascade

N = 40


def _fits(eom: list[np.ndarray], leaf: list[np.ndarray]) -> np.ndarray:
    """papers x fits x [excess-of-mass, leaf]."""
    return np.stack([np.stack(eom, axis=1), np.stack(leaf, axis=1)], axis=2)


def test_each_fit_keeps_excess_of_mass_unless_a_part_is_too_large_or_it_found_one():
    halves = np.repeat([0, 1], N // 2)
    one = np.zeros(N, dtype=np.int64)
    lopsided = np.repeat([0, 1], [30, 10])
    quarters = np.repeat([0, 1, 2, 3], N // 4)
    fits = _fits([halves, one, lopsided, lopsided], [quarters, quarters, quarters, one])
    chosen = cascade(fits, max_size=25)
    np.testing.assert_array_equal(chosen[:, 0], halves)  # fits the target: kept
    np.testing.assert_array_equal(chosen[:, 1], quarters)  # one part: the leaf selection
    np.testing.assert_array_equal(chosen[:, 2], quarters)  # a part of 30 > 25: the leaf one
    np.testing.assert_array_equal(chosen[:, 3], lopsided)  # the leaf one found one part


def _halves_cut_at_random(rng) -> np.ndarray:
    """The two halves, each cut in two at a random point: a split no two fits agree on."""
    labels = np.repeat([0, 2], N // 2)
    labels[rng.integers(3, 17) : N // 2] += 1
    labels[rng.integers(23, 37) :] += 1
    return labels


def test_the_steadier_split_is_the_one_its_fits_keep_together():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(N, 8)).astype(np.float32)
    neighbours = np.array([[(i + d) % N for d in range(1, 6)] for i in range(N)])
    halves = np.repeat([0, 1], N // 2)
    fits = _fits([halves] * 48, [_halves_cut_at_random(rng) for _ in range(48)])
    ways = _ways(vectors, fits, neighbours, min_size=3, max_size=N, build_fits=24)
    assert set(ways) == set(WAYS)
    assert len(np.unique(ways["leaf"])) > 2  # the leaf fits agreed on a finer split...
    assert ways["steadier"] is ways["excess_of_mass"]  # ...which they keep less often
    np.testing.assert_array_equal(ways["as_built"], ways["excess_of_mass"])
