"""The synthetic corpus generator of bench/ (issue 31) on a planted manifold."""

from __future__ import annotations

import numpy as np
import pytest

from bench import synthetic_corpus as sc
from explorer.build.corpus import Paper
from explorer.build.projection import knn_graph

N_REAL = 1500


@pytest.fixture(scope="module")
def real():
    """Papers on a planted manifold (30 clusters of varied spread in 32 dims), 2-6 sentences
    each, every sentence its paper's own."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(30, 32))
    x = centres[rng.integers(30, size=N_REAL)] + rng.normal(size=(N_REAL, 32)) * rng.uniform(
        0.4, 1.0, size=(N_REAL, 1)
    )
    vectors = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    papers = [
        Paper(paper_id=f"p{i}", title=f"Title {i}", venue=f"V{i % 3}", year=2000 + i % 7,
              abstract=" ".join(f"Paper {i} says {k}." for k in range(2 + i % 5)))
        for i in range(N_REAL)
    ]  # fmt: skip
    sentences = [sc.split_sentences(p.abstract) for p in papers]
    graph = knn_graph(vectors, sc.PARTNERS + 1)
    return papers, vectors, sentences, graph


def _make(real, n: int, seed: int):
    papers, vectors, sentences, graph = real
    counts = np.array([len(s) for s in sentences])
    neighbours, nearest_sim = graph.indices[:, 1:], 1 - graph.distances[:, 1]
    recipe = sc.make_recipe(neighbours, nearest_sim, counts, n, seed)
    return recipe, sc.synthetic_vectors(vectors, neighbours, recipe)


def test_the_corpus_is_the_same_for_a_seed_and_another_for_another(real):
    recipe, vectors = _make(real, 3000, seed=1)
    again, same = _make(real, 3000, seed=1)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(vars(recipe).values(), vars(again).values(), strict=True)
    )
    assert np.array_equal(vectors, same)
    assert not np.array_equal(_make(real, 3000, seed=2)[1], vectors)


def test_papers_are_unit_vectors_mixed_from_a_source_and_one_of_its_neighbours(real):
    papers, _, sentences, graph = real
    recipe, vectors = _make(real, 3000, seed=1)
    assert vectors.dtype == np.float32 and np.allclose(
        np.linalg.norm(vectors, axis=1), 1, atol=1e-5
    )
    near = graph.indices[recipe.source, 1 : sc.PARTNERS + 1]
    assert (near == recipe.partner[:, None]).any(axis=1).all()
    assert ((recipe.weight >= sc.WEIGHT[0]) & (recipe.weight <= sc.WEIGHT[1])).all()
    records = sc.synthetic_records(papers, sentences, recipe)
    texts = [r["abstract"] for r in records]
    assert len(set(texts)) == len(texts)  # a build would merge equal texts
    assert not set(texts) & {p.abstract for p in papers}
    for j, record in enumerate(records[:500]):
        s, t = int(recipe.source[j]), int(recipe.partner[j])
        assert record["abstract"].startswith(f"Paper {s} says 0.")  # the source's first
        assert record["abstract"].endswith(sentences[t][-1])  # the partner's last
        assert (record["venue"], record["year"]) == (papers[s].venue, papers[s].year)


def _checks(real, seed: int = 1) -> dict:
    _, vectors, _, graph = real
    recipe, synthetic = _make(real, 3000, seed=seed)
    together = knn_graph(np.concatenate([vectors, synthetic]), 2)
    nearest, sims = together.indices[N_REAL:, 1], 1 - together.distances[N_REAL:, 1]
    rows = np.arange(len(recipe))
    return sc.checks(recipe, rows, nearest, sims, 1 - graph.distances[:, 1])


def test_the_turn_keeps_synthetic_papers_off_their_sources(real, monkeypatch):
    """A mix of two neighbours alone sits nearly on its parents (as copies with noise did):
    its nearest paper is always a parent or made from one. Turned away from the mix, a
    synthetic paper is so at most 60% as often, nearest its source or a sibling less often,
    rarely nearest a sibling, and no closer to its nearest paper than real papers are to
    theirs, give or take 0.1 of cosine."""
    ours = _checks(real)
    monkeypatch.setattr(sc, "SCALE", 0.0)
    mix = _checks(real)
    assert ours["parent_pile_share"] <= 0.6 * mix["parent_pile_share"], (ours, mix)
    assert ours["source_pile_share"] < 0.75 * mix["source_pile_share"], (ours, mix)
    assert ours["nearest_is_sibling"] < 0.1, ours
    median = {k: v["q50"] for k, v in ours["nn_similarity"].items()}
    assert median["synthetic"] <= median["real (real corpus alone)"] + 0.1, ours
    assert mix["nn_similarity"]["synthetic"]["q50"] > median["synthetic"], mix
