"""A realistic synthetic corpus: new papers made from real ones (issue 31).

Copies of real papers with noise (row 11 until 2026-12-02) sat at cosine ~0.98
from their source, so a build found piles of copies as topics. Here every synthetic paper is
drawn from the neighbourhood of a real one, as a local Gaussian of that neighbourhood:

- its **source** s is a real paper drawn uniformly; s's **neighbourhood** is s and its
  NEIGHBOURHOOD - 1 nearest real papers, with mean mu;
- its vector is ``unit(mu + sum_k g_k (h_k - mu))`` over the neighbourhood's papers h_k, the
  g_k independent normal with standard deviation SPREAD / sqrt(NEIGHBOURHOOD): at SPREAD 1
  the synthetic papers of one neighbourhood spread as its real papers do around their mean,
  along the directions the real papers span there (the corpus's manifold), not at random;
- its **partner** t is the neighbour (not s) with the largest g_k, the paper it leans to;
  its text is s's first half of sentences (rounded up) followed by t's second half (at least
  one sentence each); its title, authors, venue, year and status are s's; its id ``syn-<j>``.

Why a neighbourhood and not a mix of two papers (the first version): a mix of s and one
neighbour, even turned away from the segment, sits nearer its parents than real papers sit
to theirs, and at 1,000,000 papers (43 per real one) the ~43 papers of one source piled
together: the nearest paper was the source or a sibling for 24.5% of synthetic papers at
100,000 and 42.1% at 1,000,000. Drawn around a wide neighbourhood, one source's papers
mingle with those of the ~NEIGHBOURHOOD sources around it; bench/README.md row 16 has the
measured trade-off (a wider neighbourhood piles less and smooths more).

    python -m bench.synthetic_corpus --papers 100000 --out DIR

writes the real papers plus synthetic ones to that count as DIR/synthetic.parquet, their
vectors pre-seeded in DIR/cache's embedding cache (as bench/scale.py does before a build),
and prints the `explorer build` that then embeds nothing.

Deterministic: the same real papers, neighbour graph and seed give the same corpus. Two
papers of one (source, partner) would have the same text, which a build merges as a
duplicate, so a drawn paper whose pair was drawn before is dropped (and drawn again).
`checks` measures what bench/README.md reports: the share of synthetic papers whose nearest
paper is their source or another paper made from the same source, and the nearest-neighbour
similarities of synthetic and real papers.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.vectors import normalise_rows

# A synthetic paper is drawn around its source and this many - 1 nearest real papers.
# Measured side by side on the 23,304 real abstracts (SPREAD 1.25; 1,000 random synthetic
# papers each; the share whose nearest paper is the source or a sibling at 100,000 and at
# 1,000,000, then the median cosine to the nearest real paper, 0.717 for real papers among
# the others): 50: 4.6% and 17.9%, 0.716; 100: 2.0% and 6.9%, 0.681; 200: 1.2% and 2.6%,
# 0.655 (bench/README.md row 16, on other random papers: 1.6% and 2.0%, 0.655 and 0.657).
NEIGHBOURHOOD = 200
# The coefficients' spread, in units of the neighbourhood's own (1 / sqrt(NEIGHBOURHOOD)).
# At neighbourhood 50: 1.0 put the median nearest-real cosine at 0.755 (nearer its real
# papers than they are to each other) and piled 8.1% at 100,000; 1.5 put it at 0.681.
SPREAD = 1.25
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
_BLOCK = 1_024  # papers drawn at a time (their neighbourhoods: 315 MB at 200 x 384 dims)


@dataclass(frozen=True)
class Recipe:
    """How each synthetic paper is made: indices into the real papers, sentence counts."""

    source: np.ndarray  # int32: s
    partner: np.ndarray  # int32: t, the neighbour with the largest coefficient
    from_source: np.ndarray  # int16: s's first sentences in the text
    from_partner: np.ndarray  # int16: t's last sentences in the text

    def __len__(self) -> int:
        return len(self.source)

    def take(self, rows: np.ndarray) -> Recipe:
        return Recipe(**{k: v[rows] for k, v in vars(self).items()})


def split_sentences(text: str) -> list[str]:
    """Sentences as the corpus module splits them for titles."""
    from explorer.build.corpus import _SENTENCE_END_RE

    return [s for s in _SENTENCE_END_RE.split(text.strip()) if s]


def generate(
    real: np.ndarray, neighbours: np.ndarray, sentences: np.ndarray, n: int, seed: int
) -> tuple[Recipe, np.ndarray]:
    """`n` synthetic papers: their recipe and unit float32 vectors. `real` holds unit rows,
    `neighbours` (real x >= NEIGHBOURHOOD - 1, self excluded, nearest first) each real
    paper's nearest real papers, `sentences` each one's sentence count."""
    if n < 0 or neighbours.shape[1] < NEIGHBOURHOOD - 1:
        raise ValueError(
            f"{n:,} papers from neighbour lists of {neighbours.shape[1]}: need n >= 0 and "
            f"lists of at least {NEIGHBOURHOOD - 1}"
        )
    pairs = len(real) * (NEIGHBOURHOOD - 1)
    if n > pairs // 2:  # drawing nearly every pair would take a coupon collector's time
        raise ValueError(f"{n:,} papers need more than {pairs:,} (source, partner) pairs / 2")
    rng = np.random.default_rng(seed)
    hoods = np.concatenate(
        [np.arange(len(real))[:, None], neighbours[:, : NEIGHBOURHOOD - 1]], axis=1
    )
    vectors = np.empty((n, real.shape[1]), dtype=np.float32)
    parts: list[Recipe] = [_recipe(np.zeros(0, np.int64), np.zeros(0, np.int64), sentences)]
    seen: set[int] = set()
    total = 0
    while total < n:
        source = rng.integers(len(real), size=min(_BLOCK, n - total))
        scale = SPREAD / np.sqrt(hoods.shape[1])
        weights = rng.normal(scale=scale, size=(len(source), hoods.shape[1])).astype(np.float32)
        partner = hoods[source, 1 + weights[:, 1:].argmax(axis=1)]
        keep = _first_pairs(source, partner, len(real), seen)
        drawn = _around(real, hoods[source[keep]], weights[keep])
        vectors[total : total + len(drawn)] = drawn
        parts.append(_recipe(source[keep], partner[keep], sentences))
        total += len(drawn)
    recipe = Recipe(**{k: np.concatenate([vars(p)[k] for p in parts]) for k in vars(parts[0])})
    return recipe, vectors


def _first_pairs(
    source: np.ndarray, partner: np.ndarray, n_real: int, seen: set[int]
) -> np.ndarray:
    """Rows whose (source, partner) was not drawn before (`seen` grows), in draw order."""
    keep = np.zeros(len(source), dtype=bool)
    for row, key in enumerate((source.astype(np.int64) * n_real + partner).tolist()):
        if key not in seen:
            seen.add(key)
            keep[row] = True
    return keep


def _around(real: np.ndarray, hoods: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """unit(mu + sum_k g_k (h_k - mu)) per row: `hoods` (rows, k) indices, `weights` the g."""
    members = real[hoods]  # (rows, k, dims)
    mean = members.mean(axis=1)
    moved = mean * (1 - weights.sum(axis=1, keepdims=True)) + np.einsum(
        "rk,rkd->rd", weights, members
    )
    return normalise_rows(moved).astype(np.float32)


def _recipe(source: np.ndarray, partner: np.ndarray, sentences: np.ndarray) -> Recipe:
    n_s, n_t = sentences[source], sentences[partner]
    return Recipe(
        source=source.astype(np.int32), partner=partner.astype(np.int32),
        from_source=np.where(n_s > 1, (n_s + 1) // 2, 1).astype(np.int16),
        from_partner=np.where(n_t > 1, n_t // 2, 1).astype(np.int16),
    )  # fmt: skip


def synthetic_records(
    papers: Sequence, sentences: Sequence[list[str]], recipe: Recipe
) -> list[dict]:
    """One record per recipe (a paperlists-like table's columns), texts from both parents."""
    rows = []
    for j in range(len(recipe)):
        s = papers[recipe.source[j]]
        own, other = sentences[recipe.source[j]], sentences[recipe.partner[j]]
        text = own[: recipe.from_source[j]] + other[len(other) - recipe.from_partner[j] :]
        rows.append({
            "paper_id": f"syn-{j}", "title": s.title, "abstract": " ".join(text),
            "authors": s.authors, "venue": s.venue, "year": s.year, "status": s.status,
        })  # fmt: skip
    return rows


def checks(
    recipe: Recipe,
    rows: np.ndarray,
    nearest: np.ndarray,
    nearest_sim: np.ndarray,
    real_sim: np.ndarray,
    nearest_real_sim: np.ndarray,
) -> dict:
    """What bench/README.md reports about a synthetic corpus, from synthetic papers `rows`:
    `nearest` and `nearest_sim` are each one's nearest other paper (an index into real +
    synthetic, real first) and its cosine, `nearest_real_sim` its cosine to the nearest real
    paper; `real_sim` each real paper's nearest-neighbour cosine in the real corpus alone.
    A paper drawn as real ones are would be as near its nearest real paper as real papers
    are to theirs, whatever the corpus's size: the gap between those two distributions is how
    much smoother than the real corpus the synthetic one is."""
    n_real = len(real_sim)
    synthetic = nearest >= n_real
    other = np.where(synthetic, nearest - n_real, 0)
    source, partner = recipe.source[rows], recipe.partner[rows]
    is_source = nearest == source
    sibling = synthetic & (recipe.source[other] == source)
    parents = np.stack([source, partner], axis=1)
    theirs = np.stack([recipe.source[other], recipe.partner[other]], axis=1)
    is_parent = (nearest[:, None] == parents).any(axis=1)
    shares_parent = synthetic & (theirs[:, :, None] == parents[:, None, :]).any(axis=(1, 2))
    return {
        "source_pile_share": round(float((is_source | sibling).mean()), 4),  # the target
        "nearest_is_source": round(float(is_source.mean()), 4),
        "nearest_is_sibling": round(float(sibling.mean()), 4),
        # Stricter: the nearest is either parent, or made from either.
        "parent_pile_share": round(float((is_parent | shares_parent).mean()), 4),
        "nearest_is_real_share": round(float((~synthetic).mean()), 4),
        "nn_similarity": {
            "synthetic": quantiles(nearest_sim),
            "synthetic to the nearest real": quantiles(nearest_real_sim),
            "real (real corpus alone)": quantiles(real_sim),
        },
    }


def nearest_real(vectors: np.ndarray, real: np.ndarray) -> np.ndarray:
    """Each unit row of `vectors`' cosine to its nearest row of `real` (1,000 at a time)."""
    return np.concatenate(
        [(vectors[a : a + 1_000] @ real.T).max(axis=1) for a in range(0, len(vectors), 1_000)]
    )


def corpus(
    papers: Sequence, vectors: np.ndarray, n: int, seed: int
) -> tuple[np.ndarray, Recipe, list[list[str]]]:
    """The real papers' unit `vectors` followed by synthetic ones to `n` (float32), the
    synthetic papers' recipe, and every real paper's sentences."""
    from explorer.build.projection import knn_graph

    real = normalise_rows(vectors).astype(np.float32)
    neighbours = knn_graph(real, NEIGHBOURHOOD).indices[:, 1:]
    sentences = [split_sentences(p.text) for p in papers]
    counts = np.array([len(s) for s in sentences])
    recipe, synthetic = generate(real, neighbours, counts, n - len(papers), seed)
    return np.concatenate([real, synthetic]), recipe, sentences


def prepare(cache: Path, n: int, seed: int = 42) -> tuple[Path, str]:
    """The real papers and synthetic ones to `n` as `<cache>/../synthetic.parquet`, every
    vector in `cache`'s embedding cache; returns the file and the precision to build in."""
    from bench.common import real_corpus

    papers, vectors = real_corpus()
    together, recipe, sentences = corpus(papers, vectors, n, seed)
    return write(cache, papers, sentences, recipe, together)


def write(
    cache: Path, papers: Sequence, sentences: Sequence[list[str]], recipe: Recipe, vectors
) -> tuple[Path, str]:
    """`corpus`'s papers (real, then synthetic) as `<cache>/../synthetic.parquet` and their
    `vectors` in `cache`'s embedding cache; returns the file and the precision to build in."""
    from bench.common import seed_embedding_cache

    columns = ("paper_id", "title", "abstract", "authors", "venue", "year", "status")
    records = [{c: getattr(p, c) for c in columns} for p in papers]
    records += synthetic_records(papers, sentences, recipe)
    return seed_embedding_cache(cache, records, vectors, "synthetic")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cache = args.out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    source, precision = prepare(cache, args.papers, args.seed)
    print(f"explorer --cache-dir {cache} build {source} --name synthetic "
          f"--embedding-precision {precision}")  # fmt: skip


def quantiles(values: np.ndarray) -> dict[str, float]:
    return {f"q{round(q * 100):02d}": round(float(np.quantile(values, q)), 4) for q in QUANTILES}


if __name__ == "__main__":
    main()
