"""Each encoder `--embedding-precision` offers, side by side on the same texts (row 2c).

torch float32, torch bfloat16 and onnxruntime float32 (the model's ONNX export, on every
core) encode the same ICML 2019 abstracts through the build's own `encode_chunk` (bucketed
padding, batch 16), alternating, `--repeats` times each; a rate is texts over the median
seconds. Also: each encoder's cosine to float32's vectors (min and mean), whether this CPU
has bfloat16 natively, and what `auto` chooses here (encoder_choice.choose on these rates,
and on its own short probe of the same texts, as a build runs it), and the probe's seconds
as it runs (a hopeless encoder timed once) against every encoder timed REPEATS times,
alternating, each probe loading its models as a build's does, in this process (torch
already imported, the ONNX export already made).

    python -m bench.encoders [--texts 384] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import ICML, require_shared, write_results

ENCODERS = ("float32", "bfloat16", "onnx")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    require_shared(ICML)
    from explorer.build.pipeline import prepare_environment

    cache = Path(tempfile.mkdtemp(prefix="bench-encoders-"))
    prepare_environment(cache)
    from explorer.build import encoder_choice
    from explorer.build.embed import encode_chunk, load_encoder
    from explorer.build.models import Embedder, native_bfloat16
    from explorer.build.sources import ReadOptions, read_inputs

    papers = read_inputs((str(ICML / "icml2019.json"),), ReadOptions()).papers
    texts = [p.text for p in papers][: args.texts]
    embedder = Embedder.of(cache_root=cache)
    models = {name: load_encoder(replace(embedder, precision=name)) for name in ENCODERS}
    for name, model in models.items():  # warm-up: first-call costs are not the rate
        encode_chunk(model, texts[:16], name)
    seconds: dict[str, list[float]] = {name: [] for name in ENCODERS}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        for name, model in models.items():
            start = time.perf_counter()
            vectors[name] = encode_chunk(model, texts, name)
            seconds[name].append(time.perf_counter() - start)
    rates = {n: round(len(texts) / statistics.median(s), 2) for n, s in seconds.items()}
    probed = encoder_choice.probe(embedder, texts)
    probe_seconds = _probe_seconds(embedder, texts, args.repeats)
    write_results(
        "encoders",
        {
            "texts": len(texts),
            "repeats": args.repeats,
            "native_bfloat16": native_bfloat16(),
            "seconds": seconds,
            "rates_per_s": rates,
            "ratio_to_float32": {n: round(r / rates["float32"], 3) for n, r in rates.items()},
            "cosine_to_float32": _cosines(vectors),
            "auto_on_these_rates": encoder_choice.choose(
                {n: r for n, r in rates.items() if n in probed}
            ),
            "probe_rates_per_s": probed,
            "auto_probe_chose": encoder_choice.choose(probed),
            "probe_seconds": probe_seconds,
        },
    )


def _probe_seconds(embedder, texts: list[str], repeats: int) -> dict[str, float]:
    """The median seconds of encoder_choice.probe as a build runs it, and with HOPELESS out
    of play (every encoder timed REPEATS times, as before 2026-12-07), alternating."""
    import math

    from explorer.build import encoder_choice

    hopeless = encoder_choice.HOPELESS
    seconds: dict[str, list[float]] = {"early stop": [], "every timing": []}
    try:
        for _ in range(repeats):
            for how, factor in (("early stop", hopeless), ("every timing", math.inf)):
                encoder_choice.HOPELESS = factor
                start = time.perf_counter()
                encoder_choice.probe(embedder, texts)
                seconds[how].append(time.perf_counter() - start)
    finally:
        encoder_choice.HOPELESS = hopeless
    return {how: round(statistics.median(s), 2) for how, s in seconds.items()}


def _cosines(vectors: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    base = vectors["float32"]
    out = {}
    for name, other in vectors.items():
        cosine = (
            (base * other).sum(1) / np.linalg.norm(base, axis=1) / np.linalg.norm(other, axis=1)
        )
        out[name] = {"min": round(float(cosine.min()), 6), "mean": round(float(cosine.mean()), 6)}
    return out


if __name__ == "__main__":
    main()
