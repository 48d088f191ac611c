"""The synthetic corpus generator of bench/ (issue 31) on a planted manifold."""

from __future__ import annotations

import numpy as np
import pytest

from bench import synthetic_corpus as sc
from explorer.build.corpus import Paper
from explorer.build.projection import knn_graph

N_REAL = 1500
WIDE = 40  # the fixture's clusters hold ~50 papers: the default 200 would span four


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
    graph = knn_graph(vectors, WIDE)
    return papers, vectors, sentences, graph


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setattr(sc, "NEIGHBOURHOOD", WIDE)


def _make(real, n: int, seed: int):
    _, vectors, sentences, graph = real
    counts = np.array([len(s) for s in sentences])
    return sc.generate(vectors, graph.indices[:, 1:], counts, n, seed)


def test_the_corpus_is_the_same_for_a_seed_and_another_for_another(real):
    recipe, vectors = _make(real, 3000, seed=1)
    again, same = _make(real, 3000, seed=1)
    assert all(
        np.array_equal(a, b)
        for a, b in zip(vars(recipe).values(), vars(again).values(), strict=True)
    )
    assert np.array_equal(vectors, same)
    assert not np.array_equal(_make(real, 3000, seed=2)[1], vectors)


def test_papers_are_unit_vectors_of_their_sources_neighbourhood_with_both_parents_text(real):
    papers, real_vectors, sentences, graph = real
    recipe, vectors = _make(real, 3000, seed=1)
    assert vectors.dtype == np.float32 and np.allclose(
        np.linalg.norm(vectors, axis=1), 1, atol=1e-5
    )
    near = graph.indices[recipe.source, 1:WIDE]
    assert (near == recipe.partner[:, None]).any(axis=1).all()
    # Drawn around the neighbourhood's mean: nearer it than to a random real paper.
    mean = real_vectors[graph.indices[recipe.source, :WIDE]].mean(axis=1)
    toward = np.einsum("rd,rd->r", vectors, mean / np.linalg.norm(mean, axis=1, keepdims=True))
    elsewhere = np.einsum("rd,rd->r", vectors, real_vectors[np.roll(recipe.source, 1)])
    assert np.median(toward) > np.median(elsewhere) + 0.3
    records = sc.synthetic_records(papers, sentences, recipe)
    texts = [r["abstract"] for r in records]
    assert len(set(texts)) == len(texts)  # a build would merge equal texts
    assert not set(texts) & {p.abstract for p in papers}
    counts = np.array([len(s) for s in sentences])
    assert (recipe.from_source == (counts[recipe.source] + 1) // 2).all()  # halves
    assert (recipe.from_partner == counts[recipe.partner] // 2).all()
    for j, record in enumerate(records[:500]):
        s, t = int(recipe.source[j]), int(recipe.partner[j])
        assert record["abstract"].startswith(f"Paper {s} says 0.")  # the source's first
        assert record["abstract"].endswith(sentences[t][-1])  # the partner's last
        assert (record["venue"], record["year"]) == (papers[s].venue, papers[s].year)


def _checks(real, n: int = 6000) -> dict:
    _, vectors, _, graph = real
    recipe, synthetic = _make(real, n, seed=1)
    together = knn_graph(np.concatenate([vectors, synthetic]), 2)
    nearest, sims = together.indices[N_REAL:, 1], 1 - together.distances[N_REAL:, 1]
    rows = np.arange(len(recipe))
    to_real = sc.nearest_real(synthetic, vectors)
    return sc.checks(recipe, rows, nearest, sims, 1 - graph.distances[:, 1], to_real)


def test_a_wide_neighbourhood_keeps_papers_off_their_sources_and_on_the_manifold(real, monkeypatch):
    """Four synthetic papers per real one. Drawn around a narrow neighbourhood, one source's
    papers pile on it and on each other; around a wide one, at most half as often, and
    rarely. Either way they sit as near their nearest real paper as real papers sit to
    theirs, give or take 0.1 of cosine."""
    wide = _checks(real)
    monkeypatch.setattr(sc, "NEIGHBOURHOOD", 10)
    narrow = _checks(real)
    assert wide["source_pile_share"] <= 0.5 * narrow["source_pile_share"], (wide, narrow)
    assert wide["source_pile_share"] < 0.15, wide
    for result in (wide, narrow):
        median = {k: v["q50"] for k, v in result["nn_similarity"].items()}
        gap = median["synthetic to the nearest real"] - median["real (real corpus alone)"]
        assert abs(gap) < 0.1, result


def test_a_pair_is_drawn_once_so_no_two_texts_are_alike(real, monkeypatch):
    """With a neighbourhood of three, each source has two possible partners: 1,500 papers
    take distinct pairs, and more than half of all pairs are refused, not drawn forever;
    so are a negative count and neighbour lists shorter than the neighbourhood."""
    monkeypatch.setattr(sc, "NEIGHBOURHOOD", 3)
    recipe, _ = _make(real, N_REAL, seed=3)
    pairs = recipe.source.astype(np.int64) * N_REAL + recipe.partner
    assert len(np.unique(pairs)) == N_REAL
    with pytest.raises(ValueError, match="pairs"):
        _make(real, N_REAL + 1, seed=3)
    assert len(_make(real, 0, seed=3)[0]) == 0
    with pytest.raises(ValueError, match="n >= 0"):
        _make(real, -1, seed=3)
    monkeypatch.setattr(sc, "NEIGHBOURHOOD", WIDE + 1)
    with pytest.raises(ValueError, match="at least"):
        _make(real, 10, seed=3)
