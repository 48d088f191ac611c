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
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, Self

import numpy as np
import pandas as pd

from explorer.errors import ArtifactError, InputError, NodeIdError

# Names and run discovery are stdlib only, for the serving supervisor; re-exported here.
from explorer.names import LATEST as LATEST
from explorer.names import MANIFEST, NAME_RE, RESERVED_NAMES, latest_run_id
from explorer.names import list_corpora as list_corpora

# 2: unit-length paper embeddings for semantic search; 3: levels (nodes table, paper paths)
SCHEMA_VERSION = 3
# The topic of papers that belong to no topic: OUTLIER inside the build, OUTLIER_ID (text, as
# every id column of the artifacts holds ids) in the tables.
OUTLIER = -1
OUTLIER_ID = "-1"
OUTLIER_LABEL = "Outliers"
LEVELS = ("area", "topic", "subtopic")

# --- node ids ------------------------------------------------------------------------------
# Every node of a run has a text id whose form says its level: areas "A0", "A1"... (largest
# first), topics "0", "1"..., subtopics "12.0", "12.1"... (the topic, then the part), and the
# outliers "-1" at every level (a topic, as far as level_of is concerned). Both worlds parse
# and make ids only through these functions, so the grammar has one home.
AREA_PREFIX = "A"
_NODE_ID = re.compile(r"A(0|[1-9]\d*)|(-1)|(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?")


def _parse(node_id: str) -> re.Match[str]:
    """The id's parts; a one-line NodeIdError when it is not one of the four forms."""
    match = _NODE_ID.fullmatch(node_id) if isinstance(node_id, str) else None
    if match is None:
        raise NodeIdError(
            f"{node_id!r} is not a node id: an area is A<n>, a topic <n>, a subtopic <n>.<m>, "
            f"the outliers {OUTLIER_ID}"
        )
    return match


def level_of(node_id: str) -> str:
    """ "area", "topic" or "subtopic", from the id's form (the outliers count as a topic)."""
    area, _, _, part = _parse(node_id).groups()
    if area is not None:
        return "area"
    return "topic" if part is None else "subtopic"


def topic_of(node_id: str) -> str:
    """The topic a topic or subtopic id belongs to ("12.3" -> "12", "12" -> "12"); an area
    holds several topics, so asking for its topic is an error."""
    area, outlier, topic, _ = _parse(node_id).groups()
    if area is not None:
        raise NodeIdError(f"{node_id!r} is an area: it holds several topics, not one")
    return outlier or topic


def parent_of(node_id: str) -> str | None:
    """The parent the id itself names: a subtopic's topic. None for topics, areas and the
    outliers (a topic's area is data, in the nodes table's parent_id, not part of its id)."""
    _, _, topic, part = _parse(node_id).groups()
    return topic if part is not None else None


def subtopic_index(node_id: str) -> int:
    """The part of a subtopic id after its topic ("12.3" -> 3; 0 is the topic's largest)."""
    part = _parse(node_id).group(4)
    if part is None:
        raise NodeIdError(f"{node_id!r} is not a subtopic id")
    return int(part)


def area_id(index: int) -> str:
    """The id of area number `index` (0 is the largest)."""
    return _checked(f"{AREA_PREFIX}{int(index)}")


def topic_id(topic: int) -> str:
    """The id of topic `topic` (OUTLIER gives OUTLIER_ID)."""
    return _checked(str(int(topic)))


def subtopic_id(topic: int | str, index: int) -> str:
    """The id of part `index` of topic `topic` (0 is its largest)."""
    return _checked(f"{int(topic)}.{int(index)}")


def _checked(node_id: str) -> str:
    _parse(node_id)
    return node_id


def id_order(node_id: str) -> tuple[int, ...]:
    """Sort key of node ids in numeric order: "A2" < "A10", "12.9" < "12.10", "-1" first."""
    return tuple(int(part) for part in _parse(str(node_id)).groups() if part is not None)


def has_area_level(nodes: pd.DataFrame) -> bool:
    """Whether areas are a level of their own: with too few topics each topic stands in as
    its own area, and that is no area level (the build's counts and the view agree here)."""
    count = nodes["level"].value_counts()
    return bool(count.get("area", 0) < count.get("topic", 0))


def leaf_ids(papers: pd.DataFrame) -> pd.Series:
    """Each paper's leaf: its subtopic, or its topic where the topic has no subtopics."""
    sub = papers["subtopic_id"].astype(str)
    return sub.where(sub != "", papers["topic_id"].astype(str))


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
        out[path.relative_to(directory).as_posix()] = file_record(path)
    return out


def file_record(path: Path) -> dict[str, object]:
    """One file's size and sha256, as the manifest records it."""
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


@dataclass(frozen=True)
class Run:
    """A complete build on disk."""

    corpus: str
    run_id: str
    path: Path
    manifest: Manifest

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


# --- the manifest --------------------------------------------------------------------------
# manifest.json as typed, frozen values: read and checked in `Manifest.read`, written by
# `Manifest.write`, and read by attribute everywhere else, so a key is spelled only here.
# Fields are in the order the file holds them; a field with a default is one older runs of
# this schema may lack, and `omit_none` marks what a build writes only when it applies.
# Keys this version does not know are kept (`extra`) and written back unchanged.


def _key(name: str, *, omit_none: bool = False) -> dict[str, object]:
    """Field metadata: the JSON key (when it is no Python name) and whether None is left out."""
    return {"key": name, "omit_none": omit_none}


def _omitted() -> object:
    return field(default=None, metadata=_key("", omit_none=True))


@dataclass(frozen=True, kw_only=True)
class _Section:
    """One JSON object of the manifest; subclasses declare its keys as typed fields."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: object, where: str, source: Path) -> Self:
        if not isinstance(data, dict):
            raise _bad(source, where, "an object", data)
        values, known = {}, set()
        for spec, hint in _fields(cls):
            key = spec.metadata.get("key") or spec.name
            known.add(key)
            inner = f"{where}.{key}" if where else key
            if key in data:
                values[spec.name] = _convert(data[key], hint, inner, source)
            elif spec.default is MISSING and spec.default_factory is MISSING:
                raise ArtifactError(f"{source}: field {inner!r} is missing")
        extra = {k: v for k, v in data.items() if k not in known}
        return cls(**values, extra=extra)

    def to_json(self) -> dict[str, Any]:
        out = {}
        for spec, _ in _fields(type(self)):
            value = getattr(self, spec.name)
            if value is None and spec.metadata.get("omit_none"):
                continue
            out[spec.metadata.get("key") or spec.name] = _plain(value)
        return {**out, **self.extra}


def _fields(cls: type) -> list[tuple[Any, Any]]:
    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in fields(cls) if f.name != "extra"]


_KINDS = {str: "a text", int: "an integer", float: "a number", bool: "true or false"}


def _bad(source: Path, where: str, kind: str, value: object) -> ArtifactError:
    found = "null" if value is None else type(value).__name__
    return ArtifactError(f"{source}: field {where!r} should be {kind}, not {found}")


def _convert(value: object, hint: Any, where: str, source: Path) -> object:
    """`value` as `hint` says, or a one-line ArtifactError naming the file and the field."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(value, inner, where, source)
    if isinstance(hint, type) and issubclass(hint, _Section):
        return hint.from_json(value, where, source)
    if origin is dict:
        if not isinstance(value, dict):
            raise _bad(source, where, "an object", value)
        return {k: _convert(v, args[1], f"{where}.{k}", source) for k, v in value.items()}
    if origin is tuple:
        if not isinstance(value, list):
            raise _bad(source, where, "a list", value)
        return tuple(_convert(v, args[0], f"{where}[{i}]", source) for i, v in enumerate(value))
    if hint is Any:
        return value
    wanted = (int, float) if hint is float else hint
    if not isinstance(value, wanted) or (hint is not bool and isinstance(value, bool)):
        raise _bad(source, where, _KINDS[hint], value)
    return value


def _plain(value: object) -> object:
    """A field's value as JSON holds it (sections as objects, tuples as lists)."""
    if isinstance(value, _Section):
        return value.to_json()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, kw_only=True)
class InputRecord(_Section):
    """One input file as the build read it."""

    path: str
    format: str
    bytes: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class RunConfig(_Section):
    """The manifest's "config": every option that decides the run's output."""

    embedding_model: str
    embedding_model_id: str
    embedding_weights: str
    embedding_precision: str
    seed: int
    min_topic_size: int | None
    stability: int = 0  # refits for per-topic stability (explorer build --stability)
    params: dict[str, Any]  # explorer.build.topics.TopicParams
    read_options: dict[str, Any]  # explorer.build.sources.ReadOptions
    keep_topics_of: str | None = _omitted()  # --keep-topics: the run whose topics were kept
    sample: dict[str, int] | None = _omitted()  # fitted on a sample: above, size
    clusterer: dict[str, Any] | None = _omitted()  # another clusterer than HDBSCAN: name, params
    neighbours: dict[str, Any] | None = _omitted()  # above EXACT_UP_TO: the approximate method


@dataclass(frozen=True, kw_only=True)
class LevelQuality(_Section):
    """A level's mean NPMI coherence, topic diversity and low-coherence nodes."""

    coherence: float | None
    diversity: float
    low_coherence: int


@dataclass(frozen=True, kw_only=True)
class LevelCounts(_Section):
    """Nodes per level and the largest leaf's share of the papers."""

    areas: int
    topics: int
    subtopics: int
    has_areas: bool
    largest_leaf_share: float
    quality: dict[str, LevelQuality] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StabilityCounts(_Section):
    """`--stability K`: refits, mean ARI, median topic stability, topics below 0.5."""

    refits: int
    mean_ari: float
    median: float | None
    below_half: int = field(metadata=_key("below_0.5"))


@dataclass(frozen=True, kw_only=True)
class KeptCounts(_Section):
    """`--keep-topics`: the run whose topics were kept, papers kept and added."""

    run_id: str
    kept: int
    added: int


@dataclass(frozen=True, kw_only=True)
class SampleCounts(_Section):
    """A fit on a sample: papers fitted and papers assigned to its topics."""

    fitted: int
    assigned: int


@dataclass(frozen=True, kw_only=True)
class Counts(_Section):
    """What the build found: papers, topics, outliers, levels, embeddings reused."""

    papers: int
    skipped: int
    merged: int
    topics: int
    outliers: int
    outlier_share: float
    clustered_share: float
    outlier_threshold: float
    embedded_new: int
    embedded_cached: int
    vocabulary: int
    levels: LevelCounts
    years: tuple[int, ...]
    venues: tuple[str, ...]
    stability: StabilityCounts | None = None
    kept_topics: KeptCounts | None = field(default=None, metadata=_key("", omit_none=True))
    sample: SampleCounts | None = field(default=None, metadata=_key("", omit_none=True))


@dataclass(frozen=True, kw_only=True)
class Manifest(_Section):
    """A run's manifest.json: what was built, from what, with what, and every file's hash."""

    schema_version: int
    pipeline_version: int
    corpus: str
    run_id: str
    created_at: str
    config: RunConfig
    inputs: tuple[InputRecord, ...]
    counts: Counts
    skipped_examples: tuple[Any, ...]
    merged_examples: tuple[Any, ...]
    messages: tuple[str, ...]
    timings: dict[str, float]
    versions: dict[str, str]
    files: dict[str, dict[str, Any]]  # name -> bytes, sha256 (file_inventory)
    query_encoder: dict[str, Any] | None = None  # ENCODER_KEY: the export's folder and facts

    @classmethod
    def read(cls, run_dir: Path) -> Manifest:
        """The run's manifest, checked: a one-line ArtifactError names the file and what is
        wrong (unreadable, another schema, a field missing or of the wrong type)."""
        source = Path(run_dir) / MANIFEST
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArtifactError(f"{source}: unreadable manifest ({exc})") from None
        if not isinstance(data, dict):
            raise ArtifactError(f"{source}: manifest is not a JSON object")
        if (schema := data.get("schema_version")) != SCHEMA_VERSION:
            corpus = Path(run_dir).parent.name
            raise ArtifactError(
                f"corpus {corpus!r} was built with artifact schema {schema}, "
                f"this version reads {SCHEMA_VERSION}; {_rebuild_hint(corpus)}"
            )
        return cls.from_json(data, "", source)

    def write(self, run_dir: Path) -> None:
        """manifest.json into `run_dir`, atomically (a build writes it last)."""
        atomic_write_text(Path(run_dir) / MANIFEST, json.dumps(self.to_json(), indent=2))


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
    manifest = Manifest.read(path)
    if verify:
        verify_files(path, manifest, corpus)
    return Run(corpus=corpus, run_id=run_id, path=path, manifest=manifest)


def verify_files(path: Path, manifest: Manifest, corpus: str) -> None:
    """Refuse a run whose files were truncated, edited or removed after publishing."""
    for name, meta in manifest.files.items():
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
