"""What changed: a corpus's nodes between two years, and one corpus's topics against
another's. Pure functions over artifacts (the Compare page caches them per pair of runs).

Years inside one corpus are slices of one fit, so nodes are the same on both sides: each
node's share of the year's papers is compared, and a node is *present* in a year when it
holds at least PRESENT_SHARE of that year's papers. Emerging: absent in the first year,
present in the second; fading: the reverse.

Two corpora are two fits: topics are matched by the cosine of their centroids (the mean of
their papers' unit embeddings, normalised) in the embedding space both share, so both must
be built with the same model, weights and precision. A pair is linked when its cosine is at
least MATCH_COSINE and within MATCH_MARGIN of the best partner of either side: many-to-many
is allowed (a topic split in two in the other corpus links to both halves), but a topic's
merely related neighbours are not linked when a much closer partner exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.manifest import RunConfig
from explorer.node_ids import OUTLIER_ID, id_order
from explorer.vectors import coded_centroids

# Present in a year: at least 0.5% of that year's papers (one paper in 200). Below it a
# node is noise-level in that year, so moving across it reads as appearing or vanishing.
PRESENT_SHARE = 0.005
# Above what distinct topics of one corpus reach: with all-MiniLM-L6-v2, each NeurIPS
# 2008-2018 topic's nearest other topic has a centroid cosine of 0.81 (median), at most 0.87;
# the same subject in NeurIPS and ICML 2013-2019 scores 0.94 (median best partner).
MATCH_COSINE = 0.88
MATCH_MARGIN = 0.03


# --- years -------------------------------------------------------------------------------


def year_shares(papers: pd.DataFrame, groups: pd.Series, year_a: int, year_b: int) -> pd.DataFrame:
    """Each node's papers and share of the papers in `year_a` and in `year_b`, the shift
    between them, and whether it is emerging or fading. `groups` is each paper's node id
    at the compared level (same index as `papers`); outliers are left out."""
    frames = []
    for year, side in ((year_a, "a"), (year_b, "b")):
        in_year = papers["year"] == year
        total = int(in_year.sum())
        counts = groups[in_year.fillna(False).to_numpy(dtype=bool)].value_counts()
        frames.append(
            pd.DataFrame({f"papers_{side}": counts, f"share_{side}": counts / max(total, 1)})
        )
    table = frames[0].join(frames[1], how="outer").fillna(0)
    table = table[table.index != OUTLIER_ID]
    table[["papers_a", "papers_b"]] = table[["papers_a", "papers_b"]].astype(int)
    table["shift"] = table["share_b"] - table["share_a"]
    before, after = table["share_a"] >= PRESENT_SHARE, table["share_b"] >= PRESENT_SHARE
    table["status"] = np.select([~before & after, before & ~after], ["emerging", "fading"], "")
    table = table.rename_axis("node_id").reset_index()
    return table.sort_values("shift", key=abs, ascending=False, kind="stable", ignore_index=True)


# --- corpora -----------------------------------------------------------------------------


def incomparable(config_a: RunConfig, config_b: RunConfig) -> str | None:
    """Why two runs' embeddings do not share a space (model, weights, precision), or None."""
    a, b = _space(config_a), _space(config_b)
    for what in a:
        if a[what] != b[what]:
            return f"built with different {what}: {a[what]!r} and {b[what]!r}"
    return None


def _space(config: RunConfig) -> dict[str, str]:
    """What must agree for two runs' embeddings to share one space."""
    return {
        "embedding model id": config.embedding_model_id,
        "embedding weights": config.embedding_weights,
        "embedding precision": config.embedding_precision,
    }


def topic_centroids(embeddings: np.ndarray, topic_ids: pd.Series) -> tuple[list[str], np.ndarray]:
    """Unit centroid of every real topic's papers (rows of `embeddings` follow `topic_ids`),
    topics in numeric order (`coded_centroids`: a million memory-mapped float16 vectors
    are widened block by block, never all at once)."""
    ids = sorted((t for t in topic_ids.unique() if t != OUTLIER_ID), key=id_order)
    real = topic_ids.where(topic_ids != OUTLIER_ID)  # outliers as missing: code -1
    codes = pd.Categorical(real, categories=ids).codes
    return ids, coded_centroids(embeddings, np.asarray(codes, dtype=np.int64), len(ids))


def match_topics(
    ids_a: list[str], centroids_a: np.ndarray, ids_b: list[str], centroids_b: np.ndarray
) -> pd.DataFrame:
    """Linked pairs (a, b, cosine), best first: cosine >= MATCH_COSINE and within
    MATCH_MARGIN of the best partner of a or of b."""
    if not ids_a or not ids_b:
        return pd.DataFrame({"a": [], "b": [], "cosine": []})
    cos = centroids_a @ centroids_b.T
    near_a = cos >= cos.max(axis=1, keepdims=True) - MATCH_MARGIN
    near_b = cos >= cos.max(axis=0, keepdims=True) - MATCH_MARGIN
    rows, cols = np.nonzero((cos >= MATCH_COSINE) & (near_a | near_b))
    pairs = pd.DataFrame(
        {
            "a": np.asarray(ids_a, dtype=object)[rows],
            "b": np.asarray(ids_b, dtype=object)[cols],
            "cosine": cos[rows, cols].astype(float),
        }
    )
    return pairs.sort_values(["cosine", "a", "b"], ascending=[False, True, True], ignore_index=True)


@dataclass(frozen=True)
class CorporaComparison:
    """Matched topic pairs (with both sides' labels and sizes), and topics with no partner."""

    matches: pd.DataFrame  # a, label_a, size_a, b, label_b, size_b, cosine
    only_a: pd.DataFrame  # topic_id, label, size
    only_b: pd.DataFrame


def compare_corpora(
    papers_a: pd.DataFrame,
    topics_a: pd.DataFrame,
    embeddings_a: np.ndarray,
    papers_b: pd.DataFrame,
    topics_b: pd.DataFrame,
    embeddings_b: np.ndarray,
) -> CorporaComparison:
    """Corpus A's topics against corpus B's (check `incomparable` first)."""
    ids_a, cent_a = topic_centroids(embeddings_a, papers_a["topic_id"])
    ids_b, cent_b = topic_centroids(embeddings_b, papers_b["topic_id"])
    pairs = match_topics(ids_a, cent_a, ids_b, cent_b)
    side_a = _sides(topics_a, "a")
    side_b = _sides(topics_b, "b")
    matches = pairs.merge(side_a, on="a", how="left").merge(side_b, on="b", how="left")
    matches = matches[["a", "label_a", "size_a", "b", "label_b", "size_b", "cosine"]]
    return CorporaComparison(
        matches=matches,
        only_a=_unmatched(topics_a, ids_a, set(pairs["a"])),
        only_b=_unmatched(topics_b, ids_b, set(pairs["b"])),
    )


def _sides(topics: pd.DataFrame, side: str) -> pd.DataFrame:
    return topics[["topic_id", "label", "size"]].rename(
        columns={"topic_id": side, "label": f"label_{side}", "size": f"size_{side}"}
    )


def _unmatched(topics: pd.DataFrame, ids: list[str], matched: set[str]) -> pd.DataFrame:
    alone = [t for t in ids if t not in matched]
    table = topics.set_index("topic_id").loc[alone, ["label", "size"]]
    return table.rename_axis("topic_id").reset_index()
