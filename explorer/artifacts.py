"""The run on disk: file and table names, the `Run` handle, opening and verifying a run,
the query encoder's files, and the facts a new build reads from the previous run.

Light on purpose (json, pathlib, pandas/pyarrow, numpy): the viewer imports it. A run is a
directory ``<cache>/<corpus>/<run_id>/`` that exists only once its ``manifest.json`` is in
place (explorer/manifest.py); ``<cache>/<corpus>/latest`` names the newest one
(explorer/names.py). Node ids are explorer/node_ids.py, crash-safe writes
explorer/atomic_files.py.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from explorer.atomic_files import sha256_file
from explorer.errors import ArtifactError, InputError
from explorer.manifest import Manifest, rebuild_hint
from explorer.names import MANIFEST, NAME_RE, RESERVED_NAMES, latest_run_id

if TYPE_CHECKING:
    import pyarrow as pa

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
            "starting with a letter or digit, no '..' (not 'embeddings', 'models', 'numba', "
            "'reductions' or 'latest')"
        )
    return name


def suggest_corpus_name(text: str) -> str:
    """A valid corpus name derived from a file name (for the hint printed after a fetch)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:64] or "corpus"
    name = name if name[0].isalnum() else f"c{name}"[:64]
    return name if name not in RESERVED_NAMES else f"{name}-corpus"


def write_table(directory: Path, name: str, frame: pd.DataFrame) -> None:
    frame.to_parquet(directory / f"{name}.parquet", index=False)


def write_array(directory: Path, name: str, array: np.ndarray) -> None:
    np.save(directory / f"{name}.npy", array, allow_pickle=False)


@dataclass(frozen=True)
class Run:
    """A complete build on disk."""

    corpus: str
    run_id: str
    path: Path
    manifest: Manifest

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        return pd.read_parquet(self._parquet(name), columns=columns)

    def arrow(self, name: str, columns: list[str] | None = None) -> pa.Table:
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


def open_run(
    cache_dir: Path, corpus: str, run_id: str | None = None, *, verify: bool = True
) -> Run:
    """The named run, or the corpus's latest; checks schema version and file integrity."""
    check_corpus_name(corpus)
    corpus_dir = Path(cache_dir) / corpus
    if run_id is None:
        run_id = latest_run_id(cache_dir, corpus)
        if run_id is None:
            raise ArtifactError(f"corpus {corpus!r} has no complete build; {rebuild_hint(corpus)}")
    path = corpus_dir / run_id
    if not (path / MANIFEST).is_file():
        raise ArtifactError(f"run {run_id} of {corpus!r} is incomplete; {rebuild_hint(corpus)}")
    manifest = Manifest.read(path)
    if verify:
        verify_files(path, manifest, corpus)
    return Run(corpus=corpus, run_id=run_id, path=path, manifest=manifest)


def verify_files(path: Path, manifest: Manifest, corpus: str) -> None:
    """Refuse a run whose files were truncated, edited or removed after publishing."""
    for name, meta in manifest.files.items():
        _check_file(path / name, meta, corpus)


def _check_file(file: Path, meta: dict, corpus: str) -> None:
    hint = rebuild_hint(corpus)
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


def encoder_ref(cache_dir: Path, manifest: Manifest) -> EncoderRef | None:
    """The run's query encoder export when its manifest names one (the folder itself may be
    gone: `read_encoder_facts` says so), else None."""
    record = manifest.query_encoder
    if not isinstance(record, dict) or not isinstance(name := record.get("folder"), str):
        return None
    path = Path(name)
    if not name.startswith(f"{ENCODER_ROOT}/") or ".." in path.parts or path.is_absolute():
        return None  # a manifest never points outside the cache
    corpus = manifest.corpus
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


@dataclass(frozen=True)
class PriorRun:
    """What a new build needs from the corpus's latest run, read leniently.

    `Manifest.read` refuses a run of another schema, but that is exactly the run whose
    precision a re-fit keeps and whose pipeline version explains a rebuild, so these few
    facts are read from any manifest that is a JSON object, with defaults for keys it lacks
    (a run made before precisions existed embedded in float32).
    """

    run_id: str
    pipeline_version: Any = None
    versions: dict[str, str] = field(default_factory=dict)
    embedding_weights: str | None = None
    embedding_precision: str = "float32"


def read_prior_run(cache_dir: Path, corpus: str) -> PriorRun | None:
    """The corpus's latest complete run as a PriorRun, or None when there is none or its
    manifest is not a JSON object."""
    run_id = latest_run_id(cache_dir, corpus)
    if run_id is None:
        return None
    try:
        data = json.loads((Path(cache_dir) / corpus / run_id / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
    return PriorRun(
        run_id=run_id,
        pipeline_version=data.get("pipeline_version", "unknown"),
        versions={str(k): str(v) for k, v in versions.items()},
        embedding_weights=config.get("embedding_weights"),
        embedding_precision=str(config.get("embedding_precision", "float32")),
    )
