"""Why ICML's subtopic NPMI fell with the consensus (row 12f, for row 12e's miss): the way a
topic is split, or which topics there are to split?

Row 12 builds ICML 2013-2019 three ways (float32 seeds 42 and 7, bfloat16 seed 42) by this
checkout's code (consensus topics, consensus splits) and by the code before (`--before`,
d06f0fe: one fit for the topics, one for each split). Here each side's three builds are
made again in row 12's caches (the same runs, reused when there), and every topic a build
split is split once more both ways, on the same members: by one seeded fit as the code
before split (UMAP 5-D on the members' own graph, then HDBSCAN, its leaf selection when a
part is over 5%; seeds 42, 7 and 2026) and by this checkout's consensus split
(`levels.split_topic`). Every set of subtopics gets its top words ranked by this
checkout's ranking (`coherence.ranked_words`) and scored by NPMI over the corpus, so the
four cells (topics of either side x either split) differ only in what they name. If the
split made the difference, the columns would differ; if the topics did, the rows would.
A topic a way cannot divide counts as one node of that way's set; `subtopics` counts the
nodes with an NPMI (a node of fewer than two top words has none).

    python -m bench.subtopic_npmi [--before d06f0fe]
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.common import PAPERLISTS, ROOT, require_shared, write_results
from bench.reproducibility import BUILDS, icml_runs, worktree

SINGLE_SEEDS = (42, 7, 2026)


def _single_split(vectors: np.ndarray, min_size: int, max_size: int, seed: int):
    """The code before's split (d06f0fe's levels.split_topic): one seeded fit."""
    from explorer.build.cluster import for_subtopics
    from explorer.build.levels import first_fitting
    from explorer.build.projection import UmapParams, knn_graph, reduce_umap

    k = int(min(15, len(vectors) - 1))
    umap = UmapParams(5, k, min_dist=0.0, seed=seed)
    reduced = reduce_umap(vectors, knn_graph(vectors, k, seed=seed), umap, cache_root=None)
    return first_fitting(vectors, reduced, for_subtopics(min_size, None), max_size)


def _consensus_split(vectors: np.ndarray, min_size: int, max_size: int, seed: int):
    """This checkout's split: the consensus of seeded fits (levels.split_topic)."""
    from explorer.build.levels import split_topic

    split = split_topic(vectors, min_size=min_size, max_size=max_size, seed=seed, cache_root=None)
    return None if split is None else split.parts


def _scored(run, cache) -> dict:
    """One build's split topics, split again each way, and each way's subtopic NPMI."""
    from bench.quality import run_terms, run_vectors
    from explorer.build.coherence import npmi, ranked_words, word_counts
    from explorer.build.levels import subtopic_sizes
    from explorer.node_ids import topic_of

    papers = run.table("papers")
    docs, vectors = run_vectors(run, cache)
    matrix, vocabulary = run_terms(run, docs)
    column = {str(t): i for i, t in enumerate(vocabulary)}
    subtopics = papers["subtopic_id"].astype(str).to_numpy()
    topics = papers["topic_id"].astype(str).to_numpy()
    split = sorted({topic_of(s) for s in subtopics if s})
    params = run.manifest.config.params
    min_size, max_size = subtopic_sizes(int(params["min_topic_size"]), len(papers))

    def npmi_of(members: dict[str, np.ndarray]) -> dict:
        words = ranked_words(word_counts(matrix, vocabulary, members))
        values = [npmi(matrix, [column[w] for w in ws]) for ws in words]
        values = [v for v in values if v == v]
        return {"subtopics": len(values), "mean_npmi": round(float(np.mean(values)), 4),
                "sd": round(float(np.std(values)), 4)}  # fmt: skip

    def split_each(how, seed: int) -> dict:
        members = {}
        for topic in split:
            rows = np.flatnonzero(topics == topic)
            parts = how(vectors[rows], min_size, max_size, seed)
            parts = np.zeros(len(rows), np.int64) if parts is None else parts
            members.update({f"{topic}/{p}": rows[parts == p] for p in np.unique(parts)})
        return npmi_of(members)

    seed = int(params["seed"])
    return {
        "split_topics": len(split),
        "as_built": npmi_of({s: np.flatnonzero(subtopics == s) for s in set(subtopics) - {""}}),
        "consensus_split": split_each(_consensus_split, seed),
        "single_split": {str(s): split_each(_single_split, s) for s in SINGLE_SEEDS},
    }


def _side(code, label: str) -> dict:
    """Row 12's three ICML builds by one side's code, each scored by `_scored`."""
    out = {}
    for key, run, cache in icml_runs(code, label, BUILDS):
        out[key] = _scored(run, cache)
        print(f"  {label} {key}: {out[key]}", flush=True)
    out["mean"] = {
        "consensus_split": _mean(out[k]["consensus_split"] for k in BUILDS),
        "single_split": _mean(s for k in BUILDS for s in out[k]["single_split"].values()),
        "as_built": _mean(out[k]["as_built"] for k in BUILDS),
    }
    return out


def _mean(cells) -> float:
    return round(float(np.mean([c["mean_npmi"] for c in cells])), 4)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REF", default="d06f0fe",
                        help="the code before the consensus (default: d06f0fe)")  # fmt: skip
    args = parser.parse_args(argv)
    require_shared(PAPERLISTS / "icml")
    result: dict = {"before_ref": args.before, "single_seeds": list(SINGLE_SEEDS)}
    for label, code in (("now", ROOT), ("before", worktree(args.before))):
        print(f"ICML 2013-2019, topics of {label}…", flush=True)
        result[label] = _side(code, label)
    write_results("subtopic-npmi", result)


if __name__ == "__main__":
    main()
