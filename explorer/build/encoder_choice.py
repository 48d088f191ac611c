"""`--embedding-precision auto`: the encoder this host runs fastest, chosen by measurement.

A cold build is mostly embedding, and CPU flags do not predict which encoder is fastest: on
one AMD EPYC with AVX512-BF16 bfloat16 ran 1.6x float32's rate, on another 2.4x; on a Xeon
with AMX 0.76x through AVX512-BF16 and 2.4x through AMX (bench row 2c). So a corpus's first
build times each encoder the host can run on a short fixed sample of the corpus's own texts
(`probe`) and keeps torch float32 unless another is at least MARGIN times faster
(`choose`), so that timing noise cannot flip the choice between two builds; an encoder
other than float32 far slower than the best one so far stops after one timing (HOPELESS).
The verdict is kept per machine, model and package versions under
``<cache>/encoders/choices/`` (`decide`): later corpora on the same host read it instead
of probing. A re-fit or `--add` keeps its corpus's precision (plan._precision), so it never
re-embeds.

The encoders: torch float32 (the reference), torch bfloat16 (autocast; offered only where
the CPU has bfloat16 natively, else it is emulated and several times slower) and onnxruntime
float32 over the model's ONNX export (when onnxruntime is installed and the model exports;
not on `--engine ray`, whose actors run torch). Each keeps the guarantees of
tests/test_embed.py: a vector is bit-identical whatever shares its batch and at any thread
count, and within 1e-4 cosine of torch float32's.
"""

from __future__ import annotations

import hashlib
import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.atomic_files import atomic_write_text

if TYPE_CHECKING:
    from explorer.build.models import Embedder

Log = Callable[[str], None]
Clock = Callable[[], float]

BASELINE = "float32"
# Another encoder replaces float32 only when at least this much faster: the rates of two
# probes on one host differ by a few percent, so a near tie never flips between builds.
MARGIN = 1.2
# Each encoder is timed on one full batch (embed.BATCH_SIZE texts) per core, REPEATS times
# (the median kept), after WARMUP texts that pay for first-call costs (allocations,
# oneDNN's kernel selection). All are padded to the sample's longest (at least 128 tokens,
# `probe_width`), one shape for every encoder: a build's chunks fill their batches and keep
# every core busy, while 16 texts in 16 length buckets would time bfloat16's filled batches
# (embed._full_batch), and one batch would leave a core idle (bfloat16 runs a batch per
# core), not its speed. 32 abstracts take ~1 s per timing on 2 cores (float32, 30-45/s):
# with 3 encoders, their loading and the ONNX export the probe takes 10-15 s, once per machine.
WARMUP = 8
REPEATS = 3
# An encoder other than float32 whose first timing is this many times slower than the best
# median so far is not timed again: it cannot be chosen unless that timing ran over 1.44x
# slower than its median would have (MARGIN covers the noise between two probes' medians;
# its square, one timing's). float32 is always timed REPEATS times: its rate is what
# `choose` divides by, so one slow timing of it could turn a near tie into a switch. Timed
# likeliest fastest first (PROBE_ORDER), so slow ones stop early: on an AMX Xeon (bfloat16
# 2.8x float32, onnx 0.6x) onnx is timed once (row 2c has the probe's seconds).
HOPELESS = MARGIN**2
PROBE_ORDER = ("bfloat16", "onnx", BASELINE)  # every name encoders() can return
# Verdicts kept per machine (`machine`): cache/encoders/choices/<key>.json.
CHOICES = Path("encoders") / "choices"
# Bump when the probe, the rule or an encoder changes: older verdicts are measured again.
# 2: bfloat16 runs on AMX where the CPU has it (it was capped below AMX, and slower there).
# 3: the probe pads to at least 128 tokens (`probe_width`): short texts' bfloat16 batches grew.
# 4: likeliest fastest first, a hopeless encoder timed once (HOPELESS).
CHOICE_VERSION = 4
_PACKAGES = ("torch", "onnxruntime", "transformers", "tokenizers", "sentence-transformers")


@dataclass(frozen=True)
class Choice:
    """What `auto` chose and why: the precision, each encoder's rate (abstracts per second
    on the probe's texts), and how the verdict was reached ("measured", "measured earlier
    on this machine", or "kept from run <id>")."""

    precision: str
    rates: dict[str, float]
    how: str

    def record(self) -> dict:
        """The manifest's `encoder_choice`."""
        return asdict(self)


def describe(choice: Choice) -> str:
    """One line for the build's log, the build summary and `explorer info`."""
    order = sorted(choice.rates, key=lambda name: (name != BASELINE, name))
    parts = [f"{name} {choice.rates[name]:.1f}/s" for name in order]
    base, chosen = choice.rates.get(BASELINE), choice.rates.get(choice.precision)
    if base and chosen and choice.precision != BASELINE:
        parts.insert(0, f"{chosen / base:.2f}x {BASELINE}")
    return f"auto chose {choice.precision} ({'; '.join([*parts, choice.how])})"


def choose(rates: dict[str, float], margin: float = MARGIN) -> str:
    """float32 unless the fastest other encoder is at least `margin` times its rate."""
    best = max(rates, key=lambda name: rates[name])
    if best != BASELINE and rates[best] >= margin * rates[BASELINE]:
        return best
    return BASELINE


def timed_texts() -> int:
    """How many texts each timing encodes: one full batch per core."""
    from explorer.build.embed import BATCH_SIZE
    from explorer.build.models import usable_cores

    return BATCH_SIZE * usable_cores()


def probe_sample(texts: Sequence[str], n: int | None = None) -> list[str]:
    """A fixed sample of the corpus's own texts: the first `n` (default: WARMUP and
    `timed_texts`) by content hash, so the same corpus gives the same sample whatever the
    order of its files."""
    from explorer.build.embed import text_key

    n = n or WARMUP + timed_texts()
    unique = {text_key(t): t for t in texts}
    return [unique[k] for k in sorted(unique)[:n]]


def measure(
    encode: Callable[[list[str]], object],
    sample: list[str],
    *,
    clock: Clock = time.perf_counter,
    best: float = 0.0,
) -> float:
    """Texts per second: the median of REPEATS timings of `sample[WARMUP:]`, after one
    untimed pass over `sample[:WARMUP]`; the first timing alone when it is HOPELESS times
    slower than `best` (the best rate measured so far)."""
    warm, timed = sample[:WARMUP], sample[WARMUP:] or sample
    if warm:
        encode(warm)
    seconds = []
    for _ in range(REPEATS):
        start = clock()
        encode(timed)
        seconds.append(clock() - start)
        if len(timed) / max(seconds[0], 1e-9) * HOPELESS < best:
            break
    return len(timed) / max(statistics.median(seconds), 1e-9)


def encoders(embedder: Embedder, engine: str = "local") -> list[str]:
    """The encoders this host can run for `embedder`'s model, float32 first."""
    from explorer.build.models import native_bfloat16
    from explorer.onnx_encoder import runtime_available

    names = [BASELINE]
    if native_bfloat16():
        names.append("bfloat16")
    if engine == "local" and runtime_available():
        names.append("onnx")
    return names


def probe(
    embedder: Embedder,
    texts: Sequence[str],
    engine: str = "local",
    clock: Clock = time.perf_counter,
) -> dict[str, float]:
    """Each encoder's rate on the corpus's probe sample; an encoder that cannot load (a
    model with no faithful ONNX export) is left out."""
    from dataclasses import replace

    from explorer.build.embed import load_encoder
    from explorer.build.models import unload_models
    from explorer.errors import ExplorerError

    sample = probe_sample(texts)
    width = None  # every encoder times the same shape: the sample padded to `probe_width`
    rates = {}
    for name in sorted(encoders(embedder, engine), key=PROBE_ORDER.index):
        try:
            model = load_encoder(replace(embedder, precision=name), progress=False)
        except ExplorerError:
            continue
        width = width or probe_width(model, sample)
        best = 0.0 if name == BASELINE else max(rates.values(), default=0.0)
        rates[name] = round(
            measure(_encoding(model, name, width), sample, clock=clock, best=best), 2
        )
        del model  # an onnxruntime session's arena is not kept for the build
    unload_models()
    return dict(sorted(rates.items(), key=lambda item: item[0] != BASELINE))


def probe_width(model, sample: Sequence[str]) -> int:
    """The one width every encoder is timed at: the sample's longest, and at least the width
    whose bfloat16 batches have BFLOAT16_ROWS rows (within the model's maximum). Shorter
    texts' bfloat16 batches have more rows (embed.bfloat16_rows): 32 keywords of 16 tokens
    would fill half of one 64-row batch on one core, timing filler, not bfloat16's speed."""
    from explorer.build.embed import BFLOAT16_ROWS, BFLOAT16_TOKENS, bucket_widths

    floor = BFLOAT16_TOKENS // BFLOAT16_ROWS
    cap = model.max_seq_length
    return max([*bucket_widths(model, sample), floor if cap is None else min(floor, int(cap))])


def _encoding(model, precision: str, width: int) -> Callable[[list[str]], object]:
    """`model` encoding a batch of texts as the probe times it: padded to `width`."""
    from explorer.build.embed import encode_chunk

    return lambda batch: encode_chunk(model, batch, precision, width=width)


def decide(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    engine: str = "local",
    log: Log,
    clock: Clock = time.perf_counter,
) -> Choice:
    """The choice for a new corpus: this machine's kept verdict, else a probe (kept)."""
    path = Path(embedder.cache_root) / CHOICES / f"{machine_key(embedder, engine)}.json"
    kept = _read(path)
    if kept is not None:
        return Choice(kept["precision"], kept["rates"], "measured earlier on this machine")
    log(f"Timing each encoder on {timed_texts()} of the corpus's abstracts (once per machine)…")
    from explorer.build.isolated import in_child

    # In a child process: the build's own process should not hold torch (isolated.py).
    rates = in_child(probe, embedder, probe_sample(texts), engine, clock)
    precision = choose(rates)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"precision": precision, "rates": rates, "machine": machine(embedder, engine)}
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True))
    return Choice(precision, rates, "measured")


def _read(path: Path) -> dict | None:
    """A kept verdict, or None when there is none or it is unreadable (probed again)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        precision, rates = record["precision"], record["rates"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    from explorer.build.settings import PRECISIONS

    valid = isinstance(rates, dict) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in rates.values()
    )
    return record if precision in PRECISIONS and valid else None


def machine(embedder: Embedder, engine: str = "local") -> dict:
    """What decides the encoders' speeds: the CPU (model, core count, vector instructions),
    the packages that run the model, the model's weights and the probe's version."""
    from explorer.build.models import bfloat16_kernels, cpu_flags, package_version, usable_cores

    return {
        "cpu": _cpu_model(),
        "arch": platform.machine(),
        "cores": usable_cores(),
        "flags": cpu_flags(),
        "bfloat16_kernels": bfloat16_kernels(),
        "packages": {p: package_version(p) for p in _PACKAGES},
        "weights": embedder.weights,
        "engine": engine,
        "choice_version": CHOICE_VERSION,
    }


def machine_key(embedder: Embedder, engine: str = "local") -> str:
    text = json.dumps(machine(embedder, engine), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
