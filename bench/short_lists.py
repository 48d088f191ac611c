"""A short list gets a reader's grouping (row 12c): 20 random 40-paper samples of the CVPR +
ICML + ACL mix, about a third from each venue, grouped as a build groups a list that short
(topics.partition, which hands it to topics.short_list). Target: mean venue homogeneity of
the topics (sklearn's homogeneity_score of venue given topic) at least 0.8, and no topic
over 40% of a sample. Beside it, for the record, the consensus of UMAP + HDBSCAN fits on the
same samples (what a list that short would get without the short-list rule), and what the
vectors allow at all (`_ceiling`: other groupings at 4, 6 and 8 groups, and how often a
paper's nearest neighbour in its sample shares its venue).

    python -m bench.short_lists
"""

from __future__ import annotations

import contextlib
import json

import numpy as np

from bench.common import PAPERLISTS, WORK, require_shared, write_results

SAMPLES, SIZE, SEED = 20, 40, 42
VENUES = {
    "CVPR": ("cvpr", range(2013, 2020)),
    "ICML": ("icml", range(2013, 2020)),
    "ACL": ("acl", range(2021, 2023)),
}
TARGET_HOMOGENEITY, TARGET_LARGEST = 0.8, 0.4


def _vectors() -> tuple[np.ndarray, np.ndarray]:
    """Every paper of the three venues embedded (float32, cached beside row 12's), and each
    paper's venue."""
    from bench.reproducibility import shared_embeddings
    from explorer.build.embed import embed_texts
    from explorer.build.models import Embedder
    from explorer.build.pipeline import prepare_environment
    from explorer.build.sources import ReadOptions, read_inputs

    cache = shared_embeddings(WORK / "short-lists")
    prepare_environment(cache)
    texts, venues = [], []
    for venue, (folder, years) in VENUES.items():
        files = [str(PAPERLISTS / folder / f"{folder}{y}.json") for y in years]
        papers = read_inputs(files, ReadOptions()).papers
        texts += [p.text for p in papers]
        venues += [venue] * len(papers)
    embedder = Embedder.of(
        "sentence-transformers/all-MiniLM-L6-v2", cache_root=cache, precision="float32"
    )
    vectors, _ = embed_texts(texts, embedder, progress=False)
    return vectors, np.array(venues)


def _samples(venues: np.ndarray) -> list[np.ndarray]:
    """SAMPLES row sets of SIZE papers, SIZE // 3 (one more for the first venues) from each."""
    rng = np.random.default_rng(SEED)
    names = list(VENUES)
    counts = [SIZE // 3 + (i < SIZE % 3) for i in range(len(names))]
    out = []
    for _ in range(SAMPLES):
        rows = [rng.choice(np.flatnonzero(venues == v), c, replace=False) for v, c in zip(names, counts, strict=True)]  # fmt: skip
        out.append(np.sort(np.concatenate(rows)))
    return out


def _judge(labels: np.ndarray, venues: np.ndarray) -> dict:
    from sklearn.metrics import homogeneity_score

    topics = labels[labels >= 0]
    return {
        "topics": int(len(np.unique(topics))),
        "largest_share": round(float(np.bincount(topics).max() / len(labels)), 3),
        "outlier_share": round(float((labels < 0).mean()), 3),
        "homogeneity": round(float(homogeneity_score(venues, labels)), 4),
    }


def _ceiling(vectors: np.ndarray, venues: np.ndarray, rows: list[np.ndarray]) -> dict:
    """What these vectors allow, on the same samples: the mean venue homogeneity of other
    groupings at 4, 6 and 8 groups, and how often a paper's nearest other paper in its
    sample is of its venue (no grouping of the sample can be purer than its neighbours)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from sklearn.cluster import KMeans
    from sklearn.metrics import homogeneity_score

    from explorer.vectors import normalise_rows

    ways = {
        "ward": lambda u, k: fcluster(linkage(u, "ward"), k, "maxclust"),
        "average_cosine": lambda u, k: fcluster(linkage(u, "average", "cosine"), k, "maxclust"),
        "complete_cosine": lambda u, k: fcluster(linkage(u, "complete", "cosine"), k, "maxclust"),
        "kmeans": lambda u, k: KMeans(k, n_init=10, random_state=SEED).fit_predict(u),
    }
    out: dict = {}
    for name, group in ways.items():
        for k in (4, 6, 8):
            scores = []
            for sample in rows:
                unit = normalise_rows(vectors[sample].astype(np.float64))
                scores.append(homogeneity_score(venues[sample], group(unit, k)))
            out[f"{name}_{k}"] = round(float(np.mean(scores)), 4)
    same = []
    for sample in rows:
        unit = normalise_rows(vectors[sample])
        sims = unit @ unit.T
        np.fill_diagonal(sims, -np.inf)
        same.append(float((venues[sample][sims.argmax(axis=1)] == venues[sample]).mean()))
    out["nearest_same_venue"] = round(float(np.mean(same)), 4)
    return out


@contextlib.contextmanager
def _no_short_lists(topics):
    """topics.partition with the short-list rule off: the consensus at any size."""
    before = topics.SHORT_LIST
    topics.SHORT_LIST = 0
    try:
        yield
    finally:
        topics.SHORT_LIST = before


def main() -> None:
    require_shared(*(PAPERLISTS / folder for folder, _ in VENUES.values()))
    from explorer.build import topics as T
    from explorer.build.projection import knn_graph

    vectors, venues = _vectors()
    rows = _samples(venues)
    result: dict = {"samples": SAMPLES, "size": SIZE, "venues": list(VENUES)}
    for name, short in (("short_list", True), ("consensus_only", False)):
        judged = []
        for sample in rows:
            v = vectors[sample]
            params = T.default_params(len(v), seed=SEED)
            if short:
                part = T.short_list(v, params)
            else:  # the consensus path, as a list of SHORT_LIST papers or more takes it
                graph = knn_graph(v, 2 * params.n_neighbors)
                with _no_short_lists(T):
                    part = T.partition(v, graph, params, None)
            judged.append(_judge(part.labels, venues[sample]))
        result[name] = {
            "mean_homogeneity": round(float(np.mean([j["homogeneity"] for j in judged])), 4),
            "max_largest_share": max(j["largest_share"] for j in judged),
            "topics": [j["topics"] for j in judged],
            "mean_outlier_share": round(float(np.mean([j["outlier_share"] for j in judged])), 3),
        }
    result["ceiling"] = _ceiling(vectors, venues, rows)
    ours = result["short_list"]
    result["ok"] = bool(
        ours["mean_homogeneity"] >= TARGET_HOMOGENEITY
        and ours["max_largest_share"] <= TARGET_LARGEST
    )
    write_results("short-lists", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
