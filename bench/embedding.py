"""Embedding throughput: our cached, chunked embed_texts against a raw encode call.

All run in this one process on the same texts with the same loaded model, alternating,
so the ratio is not skewed by the machine's load drifting. Ours starts from an empty
cache each time (it must compute every vector, and pays for writing the shards). Ours
runs twice: at the precision a build uses by default on this CPU (`auto`), which is what
a user gets, and in float32, which isolates the cost of our caching and chunking.

It also prices bucketed padding (each text padded to its own length bucket, so its vector
never depends on its batch: explorer/build/embed.py) against the batching it replaced
(each batch padded to its longest text), on the same chunks in both precisions, without
the cache, so only the batching differs.

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
    from explorer.build.embed import BATCH_SIZE, embed_texts
    from explorer.build.models import Embedder, load_model, resolve_precision
    from explorer.build.sources import ReadOptions, read_inputs

    papers = read_inputs((str(ICML / "icml2019.json"),), ReadOptions()).papers
    texts = [p.text for p in papers][: args.texts]
    model = load_model()
    model.encode(texts[:32], batch_size=BATCH_SIZE, show_progress_bar=False)  # warm-up
    precision = resolve_precision("auto")
    raw: list[float] = []
    ours: dict[str, list[float]] = {precision: [], "float32": []}
    for _ in range(args.repeats):
        start = time.perf_counter()
        model.encode(texts, show_progress_bar=False)  # library defaults, as a user calls it
        raw.append(time.perf_counter() - start)
        for how, times in ours.items():
            root = Path(tempfile.mkdtemp(prefix="bench-embed-"))
            try:
                start = time.perf_counter()
                embedder = Embedder.of(cache_root=root, precision=how)
                _, new = embed_texts(texts, embedder, progress=False, model=model)
                times.append(time.perf_counter() - start)
                assert new == len(set(texts))
            finally:
                shutil.rmtree(root)
    result = {"texts": len(texts), "precision": precision, "raw_s": raw, "ours_s": ours[precision]}
    result["ours_float32_s"] = ours["float32"]
    result["padding"] = _padding(model, texts, args.repeats)
    print(json.dumps(result))


def _padding(model, texts: list[str], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Seconds per pass over `texts` in CHUNK_SIZE chunks, longest first: bucketed padding
    (`encode_chunk`) and batch padding (sentence-transformers' own), alternating."""
    from explorer.build.embed import BATCH_SIZE, CHUNK_SIZE, _autocast, encode_chunk

    ordered = sorted(texts, key=len, reverse=True)
    chunks = [ordered[i : i + CHUNK_SIZE] for i in range(0, len(ordered), CHUNK_SIZE)]

    def batch_padded(chunk: list[str], precision: str) -> None:
        with _autocast(precision):
            model.encode(chunk, batch_size=BATCH_SIZE, show_progress_bar=False)

    ways = {
        "bucketed_s": lambda chunk, precision: encode_chunk(model, chunk, precision),
        "batch_padded_s": batch_padded,
    }
    times: dict[str, dict[str, list[float]]] = {}
    for precision in ("float32", "bfloat16"):
        runs = times[precision] = {name: [] for name in ways}
        for _ in range(repeats):
            for name, encode in ways.items():
                start = time.perf_counter()
                for chunk in chunks:
                    encode(chunk, precision)
                runs[name].append(time.perf_counter() - start)
    return times


if __name__ == "__main__":
    main()
