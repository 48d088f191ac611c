"""How many areas, by which rule, hold still and read well (issue 49; no target)?

The area level is cut from the tree of topic centroids (average linkage, cosine). Until
PIPELINE_VERSION 27 the count was the cut of 5 to 15 areas with the best silhouette; on
row 12's builds it picked 5, 7 and 15 areas for one corpus (AISTATS 2019-2025), so a
reseed redrew the area level even where the topics held still. Here every rule cuts the
same stored topics of row 12's nine builds per side (bench/reproducibility.py's caches:
"now", this checkout, and "before", the code it was run against), so the rules differ in
nothing else:

- `as_built`: the run's own areas;
- `silhouette`: the rule before, replayed;
- `per_4`, `per_5`, `per_6`: one area per 4, 5 or 6 topics, 5 to 15 (the build's rule is
  `per_5`: levels.area_count);
- `fixed_10`, `fixed_12`: the same count for every corpus.

For each rule and corpus: the area count of each build, the mean area NPMI of the three
builds (as `bench/quality.py` scores a level) and the area ARI of the seed pair and the
precision pair.

    python -m bench.area_rules   (after python -m bench.reproducibility --before REF)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.common import WORK, write_results
from bench.reproducibility import BUILDS, CORPORA, PAIRS
from explorer.build.levels import AREA_RANGE, area_count


def silhouette_cut(centroids: np.ndarray, tree: np.ndarray) -> np.ndarray:
    """The rule before PIPELINE_VERSION 27: of the cuts giving 5 to 15 areas, the one with
    the best silhouette of the topic centroids (ties: fewer areas)."""
    from scipy.cluster.hierarchy import fcluster
    from sklearn.metrics import silhouette_score

    best, best_score = None, -np.inf
    for k in range(AREA_RANGE[0], min(AREA_RANGE[1], len(centroids) - 1) + 1):
        cut = fcluster(tree, t=k, criterion="maxclust")
        score = silhouette_score(centroids, cut, metric="cosine")
        if score > best_score + 1e-9:
            best, best_score = cut, score
    return best


def rules() -> dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """Each rule: (topic centroids, their average-linkage tree) -> area of each topic."""
    from scipy.cluster.hierarchy import fcluster

    def per(topics_per_area: int):
        def cut(centroids: np.ndarray, tree: np.ndarray) -> np.ndarray:
            k = area_count(len(centroids), per=topics_per_area)
            return fcluster(tree, t=k, criterion="maxclust")

        return cut

    def fixed(k: int):
        return lambda centroids, tree: fcluster(tree, t=k, criterion="maxclust")

    return {"silhouette": silhouette_cut, "per_4": per(4), "per_5": per(5), "per_6": per(6),
            "fixed_10": fixed(10), "fixed_12": fixed(12)}  # fmt: skip


def paper_areas(labels: np.ndarray, centroids: np.ndarray, topics: np.ndarray) -> dict:
    """Each rule's area per paper (-1 for outliers), from the topics' centroids."""
    from scipy.cluster.hierarchy import linkage

    tree = linkage(centroids, method="average", metric="cosine")
    out = {}
    for name, rule in rules().items():
        of = dict(zip(topics.tolist(), rule(centroids, tree).tolist(), strict=True))
        out[name] = np.array([of.get(t, -1) for t in labels.tolist()])
    return out


def _build(cache: Path, name: str) -> tuple[dict, dict]:
    """One stored build: each rule's areas per paper, and each rule's count and NPMI."""
    from bench.quality import run_terms, run_vectors
    from explorer import artifacts
    from explorer.build.coherence import npmi, ranked_words, word_counts
    from explorer.vectors import centroids, normalise_rows

    run = artifacts.open_run(cache, name, verify=False)
    papers = run.table("papers").sort_values("paper_id", ignore_index=True)
    docs, vectors = run_vectors(run, cache)
    matrix, vocab = run_terms(run, docs)
    column = {str(t): i for i, t in enumerate(vocab)}
    labels = papers["topic_id"].astype(int).to_numpy()
    topics = np.array(sorted(set(labels.tolist()) - {-1}))
    unit = normalise_rows(vectors.astype(np.float32))
    areas = paper_areas(labels, centroids(unit, labels, topics), topics)
    areas["as_built"] = papers["area_id"].astype(str).to_numpy()
    scores = {}
    for rule, per_paper in areas.items():
        groups = {a: np.flatnonzero(per_paper == a) for a in set(per_paper.tolist())}
        groups = {a: g for a, g in groups.items() if a not in (-1, "-1", "")}
        words = ranked_words(word_counts(matrix, vocab, groups))
        values = [npmi(matrix, [column[w] for w in ws]) for ws in words]
        scores[rule] = {"areas": len(groups), "npmi": float(np.nanmean(values))}
    return areas, scores


def _corpus(cache: Path, corpus: str) -> dict:
    from sklearn.metrics import adjusted_rand_score

    builds = {key: _build(cache, f"{corpus}-{key}") for key in BUILDS}
    out = {}
    for rule in builds["f32"][1]:
        out[rule] = {
            "areas": [builds[k][1][rule]["areas"] for k in BUILDS],
            "npmi": round(float(np.mean([builds[k][1][rule]["npmi"] for k in BUILDS])), 4),
            **{
                f"{pair}_area_ari": round(float(adjusted_rand_score(
                    builds[a][0][rule].astype(str), builds[b][0][rule].astype(str))), 4)
                for pair, (a, b) in PAIRS.items()
            },
        }  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.area_rules", description=__doc__)
    parser.parse_args(argv)
    result: dict = {}
    for side in ("now", "before"):
        cache = WORK / f"reproducibility-{side}"
        missing = [c for c in CORPORA if not (cache / f"{c}-bf16").exists()]
        if missing:
            print(f"skip: no row-12 builds of {missing[0]} in {cache} "
                  "(run python -m bench.reproducibility --before REF first)")  # fmt: skip
            continue
        result[side] = {corpus: _corpus(cache, corpus) for corpus in CORPORA}
        for corpus, by_rule in result[side].items():
            for rule, r in by_rule.items():
                print(side, corpus, rule, r, flush=True)
    if result:
        print(write_results("area-rules", result))


if __name__ == "__main__":
    main()
