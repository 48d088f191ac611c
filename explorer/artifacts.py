"""The contract between pipeline and viewer: file names, schema version, manifest, run discovery.

Light on purpose (json, hashlib, pathlib, pandas/pyarrow, numpy): the viewer imports it.
A run is a directory ``<cache>/<corpus>/<run_id>/`` that exists only once its
``manifest.json`` is in place; ``<cache>/<corpus>/latest`` names the newest one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import pandas as pd

from explorer.errors import ArtifactError, InputError
from explorer.names import LATEST, NAME_RE, RESERVED_NAMES

# 2: unit-length paper embeddings for semantic search; 3: levels (nodes table, paper paths)
SCHEMA_VERSION = 3
# The topic of papers that belong to no topic: OUTLIER inside the build, OUTLIER_ID (text, as
# every id column of the artifacts holds ids) in the tables.
OUTLIER = -1
OUTLIER_ID = "-1"
OUTLIER_LABEL = "Outliers"
LEVELS = ("area", "topic", "subtopic")


def id_order(node_id: str) -> tuple[int, ...]:
    """Sort key of node ids in numeric order: "A2" < "A10", "12.9" < "12.10", "-1" first."""
    return tuple(int(part) for part in str(node_id).lstrip("A").split("."))


MANIFEST = "manifest.json"
# Written by `explorer publish` into a published folder: it lists the files it wrote, and
# its presence makes that folder's dashboard read-only (explorer.curation).
PUBLISH_MARKER = ".explorer-publish.json"
MODEL_DIR = "model"
TABLES = (
    "papers",
    "topics",
    "doc_topics",
    "neighbors",
    "hierarchy",
    "keywords",
    "vocab",
    "nodes",
)
ARRAYS = ("topic_similarity", "doc_terms_indptr", "doc_terms_indices", "embeddings")
# The query encoder: the corpus's embedding model exported to ONNX, once per model and
# weights, in <cache>/models/onnx/<model_slug>/, so a viewer embeds queries without torch.
# The run's manifest names the folder and the facts file's size and sha256 (ENCODER_KEY);
# the facts file, written last, lists the other files with theirs.
ENCODER_KEY = "query_encoder"
ENCODER_ROOT = "models/onnx"
ENCODER_FACTS = "encoder.json"
ENCODER_GRAPH = "model.onnx"
# The graph's weights, beside it as ONNX external data: onnxruntime maps the file instead of
# copying it, so a viewer holds 56 MB more after loading the encoder rather than 126 MB (the
# word-embedding table is paged in only for the tokens queries use), and worker processes
# share the pages.
ENCODER_WEIGHTS = "model.onnx.data"
ENCODER_TOKENIZER = "tokenizer.json"


def default_cache_dir() -> Path:
    """`EXPLORER_CACHE_DIR` when set (tests, hosting), else ./cache."""
    return Path(os.environ.get("EXPLORER_CACHE_DIR", "cache"))


def check_corpus_name(name: str) -> str:
    """Refuse names that could escape the cache folder or confuse a shell."""
    if not NAME_RE.fullmatch(name) or ".." in name or name in RESERVED_NAMES:
        raise InputError(
            f"corpus name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (not 'embeddings', 'models', 'numba' or 'reductions')"
        )
    return name


def suggest_corpus_name(text: str) -> str:
    """A valid corpus name derived from a file name (for the hint printed after a fetch)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:64] or "corpus"
    name = name if name[0].isalnum() else f"c{name}"[:64]
    return name if name not in RESERVED_NAMES else f"{name}-corpus"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Call `write(handle)` on a temporary sibling, then rename it to `path`: readers see the
    old file or the new one, never half of one, and a failed write leaves nothing behind."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """`atomic_write` of a UTF-8 text."""
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_save_array(path: Path, array: np.ndarray) -> None:
    """`atomic_write` of one .npy array (never pickled)."""
    atomic_write(path, lambda handle: np.save(handle, array, allow_pickle=False))


def write_table(directory: Path, name: str, frame: pd.DataFrame) -> None:
    frame.to_parquet(directory / f"{name}.parquet", index=False)


def write_array(directory: Path, name: str, array: np.ndarray) -> None:
    np.save(directory / f"{name}.npy", array, allow_pickle=False)


def file_inventory(directory: Path) -> dict[str, dict[str, object]]:
    """Size and sha256 of every file in a run, for the manifest's integrity check."""
    out = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != MANIFEST):
        out[path.relative_to(directory).as_posix()] = {
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
        }
    return out


@dataclass(frozen=True)
class Run:
    """A complete build on disk."""

    corpus: str
    run_id: str
    path: Path
    manifest: dict

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        return pd.read_parquet(self._parquet(name), columns=columns)

    def arrow(self, name: str, columns: list[str] | None = None):  # -> pyarrow.Table
        """A table as Arrow, for a reader that never needs it as a DataFrame."""
        import pyarrow.parquet as pq

        return pq.read_table(self._parquet(name), columns=columns)

    def _parquet(self, name: str) -> Path:
        return self.path / f"{name}.parquet"

    def array(self, name: str, *, mapped: bool = False) -> np.ndarray:
        """`mapped`: memory-mapped read-only, so a large array (a million papers' vectors,
        768 MB) costs memory only for the pages a query touches, and the OS may drop them."""
        return np.load(
            self.path / f"{name}.npy", allow_pickle=False, mmap_mode="r" if mapped else None
        )


def _rebuild_hint(corpus: str) -> str:
    return f"rebuild it with: explorer build <inputs> --name {corpus}"


def read_manifest(path: Path) -> dict:
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict):
        raise ArtifactError(f"{path}: manifest is not a JSON object")
    return manifest


def open_run(
    cache_dir: Path, corpus: str, run_id: str | None = None, *, verify: bool = True
) -> Run:
    """The named run, or the corpus's latest; checks schema version and file integrity."""
    check_corpus_name(corpus)
    corpus_dir = Path(cache_dir) / corpus
    if run_id is None:
        run_id = latest_run_id(cache_dir, corpus)
        if run_id is None:
            raise ArtifactError(f"corpus {corpus!r} has no complete build; {_rebuild_hint(corpus)}")
    path = corpus_dir / run_id
    if not (path / MANIFEST).is_file():
        raise ArtifactError(f"run {run_id} of {corpus!r} is incomplete; {_rebuild_hint(corpus)}")
    manifest = read_manifest(path)
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise ArtifactError(
            f"corpus {corpus!r} was built with artifact schema {manifest.get('schema_version')}, "
            f"this version reads {SCHEMA_VERSION}; {_rebuild_hint(corpus)}"
        )
    if verify:
        verify_files(path, manifest, corpus)
    return Run(corpus=corpus, run_id=run_id, path=path, manifest=manifest)


def verify_files(path: Path, manifest: dict, corpus: str) -> None:
    """Refuse a run whose files were truncated, edited or removed after publishing."""
    for name, meta in manifest.get("files", {}).items():
        _check_file(path / name, meta, corpus)


def _check_file(file: Path, meta: dict, corpus: str) -> None:
    hint = _rebuild_hint(corpus)
    if not file.is_file():
        raise ArtifactError(f"{file}: missing; {hint}")
    if file.stat().st_size != meta.get("bytes") or sha256_file(file) != meta.get("sha256"):
        raise ArtifactError(f"{file}: changed since it was built; {hint}")


def model_slug(model_id: str, weights: str) -> str:
    """Folder name of what is cached per model and weights: its embeddings, its ONNX export."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_id) + f"-{weights}"


class EncoderRef(NamedTuple):
    """A run's query encoder export: its folder and the facts file the run recorded. Plain
    values, so a viewer can key its caches by it."""

    folder: Path
    facts_bytes: int
    facts_sha256: str
    corpus: str


def encoder_ref(cache_dir: Path, manifest: dict) -> EncoderRef | None:
    """The run's query encoder export when its manifest names one (the folder itself may be
    gone: `read_encoder_facts` says so), else None."""
    record = manifest.get(ENCODER_KEY)
    if not isinstance(record, dict) or not isinstance(name := record.get("folder"), str):
        return None
    path = Path(name)
    if not name.startswith(f"{ENCODER_ROOT}/") or ".." in path.parts or path.is_absolute():
        return None  # a manifest never points outside the cache
    corpus = str(manifest.get("corpus", "<name>"))
    return EncoderRef(Path(cache_dir) / path, record.get("bytes"), record.get("sha256"), corpus)


def read_encoder_facts(ref: EncoderRef) -> dict:
    """The export's facts (inputs, pooling, normalisation, length), once the facts file is the
    one the run recorded and every file it lists is intact; raises ArtifactError if not."""
    facts_file = ref.folder / ENCODER_FACTS
    _check_file(facts_file, {"bytes": ref.facts_bytes, "sha256": ref.facts_sha256}, ref.corpus)
    try:
        facts = json.loads(facts_file.read_text(encoding="utf-8"))
        files = dict(facts["files"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(f"{facts_file}: unreadable ({type(exc).__name__})") from None
    for name, meta in files.items():
        _check_file(ref.folder / name, meta, ref.corpus)
    return facts


def latest_run_id(cache_dir: Path, corpus: str) -> str | None:
    """The run named by `latest` if complete, else the newest complete run, else None."""
    corpus_dir = Path(cache_dir) / corpus
    pointer = corpus_dir / LATEST
    if pointer.is_file():
        run_id = pointer.read_text(encoding="utf-8").strip()
        if NAME_RE.fullmatch(run_id) and (corpus_dir / run_id / MANIFEST).is_file():
            return run_id
    complete = [p for p in corpus_dir.glob("*") if p.is_dir() and (p / MANIFEST).is_file()]
    if not complete:
        return None
    return max(complete, key=lambda p: (p / MANIFEST).stat().st_mtime).name


def list_corpora(cache_dir: Path) -> list[str]:
    """Corpora with at least one complete run, by name."""
    root = Path(cache_dir)
    if not root.is_dir():
        return []
    names = []
    for path in sorted(root.iterdir()):
        is_corpus = (
            path.is_dir() and NAME_RE.fullmatch(path.name) and path.name not in RESERVED_NAMES
        )
        if is_corpus and latest_run_id(root, path.name) is not None:
            names.append(path.name)
    return names
