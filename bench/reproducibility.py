"""How far another machine's run may differ: ICML 2013-2019 in float32 and in bfloat16.

On one machine with the same packages a run is reproduced bit for bit, whatever the cache
held before (tests/test_cache_history.py). Another machine computes the same vectors with
other instructions (another BLAS kernel, bfloat16 native or emulated), which moves them by
about 1e-4 in cosine, and UMAP amplifies such differences into another grouping. This
measures the two scales of that difference side by side, on one machine:

- seed to seed: `--stability 4`'s mean adjusted Rand index over the five fits, per precision;
- float32 against bfloat16 (the same seed): vectors that differ by rounding only, as
  another host's do; ARI of their topics and of their leaves.

    python -m bench.reproducibility
"""

from __future__ import annotations

import json
import shutil

import numpy as np

from bench.common import ICML, WORK, require_shared, write_results

STABILITY = 4


def _leaves(papers) -> np.ndarray:
    """Each paper's leaf: its subtopic where its topic is split, else its topic."""
    sub = papers["subtopic_id"].astype(str)
    return np.where(sub != "", sub, papers["topic_id"].astype(str))


def main() -> None:
    require_shared(ICML)
    from sklearn.metrics import adjusted_rand_score

    from explorer.build.config import BuildConfig
    from explorer.build.pipeline import build

    inputs = tuple(str(p) for p in sorted(ICML.glob("icml20*.json")))
    cache = WORK / "reproducibility"
    shutil.rmtree(cache, ignore_errors=True)
    runs, result = {}, {"corpus": "ICML 2013-2019", "stability_refits": STABILITY}
    for precision in ("float32", "bfloat16"):
        config = BuildConfig(
            name=f"icml-{precision}", inputs=inputs, embedding_precision=precision,
            stability=STABILITY,
        )  # fmt: skip
        run = build(config, cache_dir=cache, progress=False, log=lambda m: None).run
        runs[precision] = run.table("papers").sort_values("paper_id", ignore_index=True)
        counts = run.manifest.counts
        result[precision] = {
            "papers": counts.papers,
            "topics": counts.topics,
            "seed_to_seed_ari": counts.stability.mean_ari,
        }
    a, b = runs["float32"], runs["bfloat16"]
    assert a["paper_id"].tolist() == b["paper_id"].tolist()
    result["float32_vs_bfloat16_topic_ari"] = round(
        float(adjusted_rand_score(a["topic_id"], b["topic_id"])), 4
    )
    result["float32_vs_bfloat16_leaf_ari"] = round(
        float(adjusted_rand_score(_leaves(a), _leaves(b))), 4
    )
    shutil.rmtree(cache, ignore_errors=True)
    write_results("reproducibility", result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
