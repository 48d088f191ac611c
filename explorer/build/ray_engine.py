"""`explorer build --engine ray`: the build's embarrassingly parallel stages on a Ray cluster.

Two stages are a Ray Data pipeline; the rest of the build is the local engine's:

- **Read and normalise:** one task per input file runs the file's reader
  (`sources.read_file`, the local engine's); the driver then puts the papers in canonical
  order and merges duplicates, which needs every paper at once.
- **Embed:** the texts missing from the embedding cache, longest first as the local engine
  orders them, cut into chunks of `batch_size`; `map_batches` hands one chunk at a time to
  an actor pool (one model per actor; each actor's CPUs are its torch threads). The driver
  writes each finished chunk into the same content-addressed cache, so the fit, and any
  later build, reads the vectors from there exactly as after a local embedding.

Results never depend on the engine, so it is not part of the run id: with the local
engine's chunk size (the default) each chunk is encoded by the same model with the same
batches, and the vectors are bit-identical (checked in tests/test_ray_engine.py).

Without an address (`--ray-address` or `RAY_ADDRESS`) a local Ray is started for the build
and stopped after it; with one, the build joins that cluster as a driver.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from explorer.build.corpus import Corpus, Paper, dedupe
from explorer.build.embed import CHUNK_SIZE, EmbeddingCache, text_key
from explorer.build.models import Embedder
from explorer.build.sources import ReadOptions, expand_inputs, read_file
from explorer.errors import ExplorerError, InputError

# A test hook (tests/test_ray_engine.py): an actor whose node was started with this
# variable naming an existing folder exits after encoding its first chunk, before
# returning it, once per folder (it leaves a file there), as a node failing mid-build.
FAULT_ENV = "EXPLORER_RAY_FAULT"


@dataclass(frozen=True)
class RayOptions:
    """How the build uses the cluster; none of it changes the result."""

    address: str | None = None  # None: RAY_ADDRESS, else a local Ray for this build
    batch_size: int = CHUNK_SIZE  # texts per actor call (and per cache shard)
    actors_per_node: int | None = None  # None: one per CPU of a node


def require_ray() -> None:
    """One line when the optional extra is missing, before any work starts."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise ExplorerError("--engine ray needs Ray: pip install '.[ray]' (or make test)")


def connect(options: RayOptions) -> bool:
    """Join the cluster (or start a local Ray); True when this call started it."""
    # Ray would report usage to its makers; a build never phones home unless asked.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    if ray.is_initialized():
        return False
    address = options.address or os.environ.get("RAY_ADDRESS") or None
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        else:
            ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError by Ray version
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise ExplorerError(f"--engine ray: could not start or join {where} ({first})") from None
    import ray.data  # configures its loggers on import: quieten them after

    logging.getLogger("ray.data").setLevel(logging.WARNING)  # no per-dataset INFO lines
    return True


def disconnect() -> None:
    import ray

    ray.shutdown()


# --- read and normalise ------------------------------------------------------------------


def _read_rows(row: dict, options: ReadOptions) -> list[dict]:
    """One input file's papers and skipped lines as rows (a Ray Data `flat_map`); a bad
    file becomes one error row, raised by the driver with the local engine's message."""
    try:
        papers, skipped = read_file(Path(row["path"]), options)
    except InputError as exc:
        return [{"kind": "error", "value": str(exc)}]
    rows = [{"kind": "paper", "value": _paper_json(p)} for p in papers]
    return rows + [{"kind": "skipped", "value": s} for s in skipped]


def _paper_json(paper: Paper) -> str:
    import json

    return json.dumps(asdict(paper), ensure_ascii=False)


def read_inputs(inputs: Sequence[str | Path], options: ReadOptions) -> Corpus:
    """The corpus `sources.read_inputs` reads, each file read by a Ray task."""
    import json

    import ray

    paths = expand_inputs(inputs)
    items = [{"path": str(p)} for p in paths]
    # In the files' order, as the local engine reads them: the same skipped lines in the
    # same order, and the same file named when several are bad.
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    dataset = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    papers, skipped = [], []
    for row in dataset.flat_map(_read_rows, fn_kwargs={"options": options}).iter_rows():
        if row["kind"] == "error":
            raise InputError(row["value"])
        if row["kind"] == "skipped":
            skipped.append(row["value"])
        else:
            papers.append(Paper(**json.loads(row["value"])))
    return dedupe(papers, skipped)


# --- embed ----------------------------------------------------------------------------------


class _Embedder:
    """One model per actor, its torch threads the actor's CPUs; encodes one chunk per call
    exactly as `embed.embed_texts` encodes a chunk."""

    def __init__(self, model_name: str, precision: str, threads: int) -> None:
        import torch

        from explorer.build.models import load_model, reproducible_kernels

        reproducible_kernels()  # the actor's process: before its first matrix product
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        torch.set_num_threads(threads)
        self.model = load_model(model_name, progress=False)
        self.precision = precision

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from explorer.build.embed import encode_chunk

        (keys,), (texts,) = batch["keys"], batch["texts"]
        vectors = encode_chunk(self.model, list(texts), self.precision)
        self._fault()
        return {"keys": np.asarray(keys, dtype=object), "vectors": vectors}

    def _fault(self) -> None:
        """The test hook (FAULT_ENV): the first actor to finish a chunk on a node started
        with it exits before returning the chunk, once per marker folder (it leaves a
        file there); the chunk is lost, as when a node dies mid-build."""
        folder = os.environ.get(FAULT_ENV)
        if not folder:
            return
        try:
            with (Path(folder) / "fault").open("x") as handle:
                handle.write(f"{os.getpid()}\n")
        except (FileExistsError, FileNotFoundError):  # fired already, or not armed
            return
        os._exit(1)


def _pool(options: RayOptions) -> tuple[int, float, int]:
    """(actors, CPUs per actor, torch threads per actor) for the cluster as it is now."""
    import ray

    cpus = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")]
    cpus = [c for c in cpus if c >= 1]
    if not cpus:
        raise ExplorerError("--engine ray: the Ray cluster has no node with a whole CPU")
    # Sized on the smallest node, so `actors_per_node` fit on every node; larger nodes
    # take as many more as their CPUs hold.
    per_actor = min(cpus) / (options.actors_per_node or int(min(cpus)))
    actors = sum(int(c // per_actor) for c in cpus)
    return actors, per_actor, max(1, int(per_actor))


def embed_missing(
    texts: Sequence[str], embedder: Embedder, *, options: RayOptions, progress: bool
) -> int:
    """Embed on the cluster every text `embedder`'s cache lacks and write it there; how many."""
    import ray
    from tqdm.auto import tqdm

    cache = EmbeddingCache.of(embedder)
    known = cache.load()
    missing: dict[str, str] = {}
    for text in texts:
        key = text_key(text)
        if key not in known:
            missing.setdefault(key, text)
    if not missing:
        return 0
    order = sorted(missing, key=lambda k: -len(missing[k]))
    step = options.batch_size
    chunks = [
        {"keys": order[i : i + step], "texts": [missing[k] for k in order[i : i + step]]}
        for i in range(0, len(order), step)
    ]
    actors, cpus, threads = _pool(options)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # shards in the local engine's order
    context.enable_progress_bars = False  # the build's own bar counts abstracts
    dataset = ray.data.from_items(chunks, override_num_blocks=len(chunks)).map_batches(
        _Embedder,
        fn_constructor_kwargs={
            "model_name": embedder.model_name,
            "precision": embedder.precision,
            "threads": threads,
        },
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=min(actors, len(chunks))),
        num_cpus=cpus,
    )
    with tqdm(
        total=len(order), desc="Embedding (ray)", unit="abstract", disable=not progress
    ) as bar:
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            keys = [str(k) for k in batch["keys"]]
            vectors = np.asarray(batch["vectors"], dtype=np.float32)
            known.update(zip(keys, vectors, strict=True))  # this process's copy of the cache
            cache.save(keys, vectors)
            bar.update(len(keys))
    cache.compact()
    return len(missing)


def log_cluster(log) -> None:
    """One line: what the build runs on."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n["Resources"].get("CPU", 0) for n in nodes)
    log(f"Ray: {len(nodes)} node(s), {cpus:g} CPUs")
