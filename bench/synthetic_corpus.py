"""A realistic synthetic corpus: new papers made from real ones (issue 31).

Copies of real papers with noise (bench/scale100k.py, row 11) sit at cosine ~0.98
from their source, so a build finds piles of copies as topics. Here every synthetic paper j
is made from two real papers and lies near them on the real corpus's manifold, as far from
them as real papers are from their nearest neighbours:

- its **source** s is a real paper drawn uniformly; its **partner** t one of s's PARTNERS
  nearest real papers, drawn uniformly; its **mixing weight** w ~ U(WEIGHT);
- its vector starts at the mix ``m = unit((1 - w) v_s + w v_t)`` and turns from it by an
  angle of SCALE times the angle between s and s's nearest real paper, towards a random
  direction (Gaussian weights) in the span of s's PARTNERS neighbours' offsets from m, a
  direction the real papers span there. A mix alone sits far closer to its parents than
  real papers sit to their nearest (a median cosine of 0.72 among the real abstracts),
  and its nearest paper is always a parent or a paper made from one;
- its text is s's first sentences followed by t's last ones, in the proportion (1 - w) : w
  (at least one of each when both have two or more); its title, authors, venue, year and
  status are s's; its id is ``syn-<j>``.

    python -m bench.synthetic_corpus --papers 100000 --out DIR

writes the real papers plus synthetic ones to that count as DIR/synthetic.parquet, their
vectors pre-seeded in DIR/cache's embedding cache (as bench/scale100k.py seeds its copies),
and prints the `explorer build` that then embeds nothing.

Deterministic: the same real papers, neighbour graph and seed give the same corpus. Two
papers of the same recipe (source, partner, sentences) would have the same text, which a
build merges as a duplicate, so recipes are unique. `checks` measures what bench/README.md
reports: the share of synthetic papers whose nearest paper is their source or another paper
made from the same source, and the nearest-neighbour similarities of synthetic and real papers.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.vectors import normalise_rows

PARTNERS = 20  # a partner is one of the source's this many nearest real papers
WEIGHT = (0.2, 0.8)  # the partner's share of the mix
# The turn from the mix, in angles between the source and its nearest real paper. Measured
# at 100,000 (bench/README.md row 16; 2,000 synthetic papers): 1.0 puts the synthetic papers'
# median nearest-neighbour cosine (0.76) between the real papers' alone (0.72) and among the
# mix (0.80); 1.3 put it at 0.67, below the real corpus's though 4x denser; PARTNERS 10 at
# 1.0 doubled the share of synthetic papers nearest a sibling (10% against 6%).
SCALE = 1.0
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
_BLOCK = 4_096  # synthetic vectors made at a time (neighbours: 126 MB at 20 x 384 dims)


@dataclass(frozen=True)
class Recipe:
    """How each synthetic paper is made: indices into the real papers, weights, counts."""

    source: np.ndarray  # int32: s
    partner: np.ndarray  # int32: t
    weight: np.ndarray  # float32: w, the partner's share
    angle: np.ndarray  # float32: the turn from the mix, radians
    direction: np.ndarray  # float32 (n, PARTNERS): the turn's weights on s's neighbours
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


def make_recipe(
    neighbours: np.ndarray, nearest_sim: np.ndarray, sentences: np.ndarray, n: int, seed: int
) -> Recipe:
    """`n` unique recipes. `neighbours` (real x >= PARTNERS, self excluded, nearest first)
    names each real paper's nearest real papers, `nearest_sim` its cosine to the nearest,
    `sentences` counts its sentences."""
    rng = np.random.default_rng(seed)
    near = neighbours[:, :PARTNERS]
    turn = SCALE * np.arccos(np.clip(nearest_sim, -1.0, 1.0)).astype(np.float32)
    parts, seen, total = [], np.zeros(0, dtype=np.int64), 0
    while total < n:
        drawn = _draw(rng, near, turn, sentences, n - total + n // 20 + 16)
        keys = _keys(drawn, len(near))
        fresh = ~np.isin(keys, seen)
        _, first = np.unique(keys, return_index=True)
        keep = np.zeros(len(keys), dtype=bool)
        keep[first] = True
        keep &= fresh
        rows = np.flatnonzero(keep)[: n - total]  # in draw order: deterministic
        parts.append(drawn.take(rows))
        seen = np.concatenate([seen, keys[rows]])
        total += len(rows)
    return Recipe(**{k: np.concatenate([vars(p)[k] for p in parts]) for k in vars(parts[0])})


def _draw(
    rng: np.random.Generator, near: np.ndarray, turn: np.ndarray, sentences: np.ndarray, n: int
) -> Recipe:
    source = rng.integers(len(near), size=n)
    partner = near[source, rng.integers(near.shape[1], size=n)]
    weight = rng.uniform(*WEIGHT, size=n).astype(np.float32)
    direction = rng.normal(size=(n, near.shape[1])).astype(np.float32)
    n_s, n_t = sentences[source], sentences[partner]
    from_source = np.where(n_s > 1, np.clip(np.rint((1 - weight) * n_s), 1, n_s - 1), n_s)
    from_partner = np.where(n_t > 1, np.clip(np.rint(weight * n_t), 1, n_t - 1), n_t)
    return Recipe(
        source=source.astype(np.int32), partner=partner.astype(np.int32), weight=weight,
        angle=turn[source], direction=direction,
        from_source=from_source.astype(np.int16), from_partner=from_partner.astype(np.int16),
    )  # fmt: skip


def _keys(recipe: Recipe, n_real: int) -> np.ndarray:
    """One integer per text: (source, partner, sentence counts)."""
    pair = recipe.source.astype(np.int64) * n_real + recipe.partner
    return (pair * 512 + recipe.from_source) * 512 + recipe.from_partner


def synthetic_vectors(real: np.ndarray, neighbours: np.ndarray, recipe: Recipe) -> np.ndarray:
    """Unit float32 vectors of the recipe (`real`: unit rows; `neighbours` as given to
    `make_recipe`), block by block (no corpus-sized temporaries)."""
    out = np.empty((len(recipe), real.shape[1]), dtype=np.float32)
    for start in range(0, len(recipe), _BLOCK):
        r = recipe.take(np.arange(start, min(start + _BLOCK, len(recipe))))
        w = r.weight[:, None]
        mix = normalise_rows((1 - w) * real[r.source] + w * real[r.partner])
        around = real[neighbours[r.source, :PARTNERS]]  # (rows, PARTNERS, dims)
        offsets = around - (around @ mix[:, :, None]) * mix[:, None, :]  # across m
        towards = normalise_rows(np.einsum("rp,rpd->rd", r.direction, offsets))
        turn = r.angle[:, None]
        out[start : start + len(r)] = normalise_rows(np.cos(turn) * mix + np.sin(turn) * towards)
    return out


def synthetic_records(
    papers: Sequence, sentences: Sequence[list[str]], recipe: Recipe
) -> list[dict]:
    """One record per recipe (the columns bench/scale100k.py writes), texts from both parents."""
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
) -> dict:
    """What bench/README.md reports about a synthetic corpus, from synthetic papers `rows`:
    `nearest` and `nearest_sim` are each one's nearest other paper (an index into real +
    synthetic, real first) and its cosine; `real_sim` each real paper's nearest-neighbour
    cosine in the real corpus alone."""
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
            "real (real corpus alone)": quantiles(real_sim),
        },
    }


def prepare(cache: Path, n: int, seed: int = 42) -> tuple[Path, str]:
    """The real papers and synthetic ones to `n` as `<cache>/../synthetic.parquet`, every
    vector in `cache`'s embedding cache; returns the file and the precision to build in."""
    from bench.common import real_corpus, seed_embedding_cache
    from explorer.build.projection import knn_graph

    papers, vectors = real_corpus()
    real = normalise_rows(vectors).astype(np.float32)
    graph = knn_graph(real, PARTNERS + 1)
    sentences = [split_sentences(p.text) for p in papers]
    counts = np.array([len(s) for s in sentences])
    neighbours = graph.indices[:, 1:]
    recipe = make_recipe(neighbours, 1 - graph.distances[:, 1], counts, n - len(papers), seed)
    columns = ("paper_id", "title", "abstract", "authors", "venue", "year", "status")
    records = [{c: getattr(p, c) for c in columns} for p in papers]
    records += synthetic_records(papers, sentences, recipe)
    together = np.concatenate([vectors, synthetic_vectors(real, neighbours, recipe)])
    return seed_embedding_cache(cache, records, together, "synthetic")


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
