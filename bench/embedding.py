"""Embedding throughput: our cached, chunked embed_texts against a raw encode call.

Both run in this one process on the same texts with the same loaded model, alternating,
so the ratio is not skewed by the machine's load drifting. Ours starts from an empty
cache each time (it must compute every vector, and pays for writing the shards).

    python -m bench.embedding [--texts 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import ICML, require_shared


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    require_shared(ICML)
    from explorer.embed import BATCH_SIZE, embed_texts, load_model
    from explorer.sources import ReadOptions, read_inputs

    papers = read_inputs((str(ICML / "icml2019.json"),), ReadOptions()).papers
    texts = [p.text for p in papers][: args.texts]
    model = load_model()
    model.encode(texts[:32], batch_size=BATCH_SIZE, show_progress_bar=False)  # warm-up
    raw, ours = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        model.encode(texts, show_progress_bar=False)  # library defaults, as a user calls it
        raw.append(time.perf_counter() - start)
        root = Path(tempfile.mkdtemp(prefix="bench-embed-"))
        try:
            start = time.perf_counter()
            _, new = embed_texts(texts, cache_root=root, progress=False, model=model)
            ours.append(time.perf_counter() - start)
            assert new == len(set(texts))
        finally:
            shutil.rmtree(root)
    print(json.dumps({"texts": len(texts), "raw_s": raw, "ours_s": ours}))


if __name__ == "__main__":
    main()
