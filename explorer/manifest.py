"""manifest.json as typed, frozen values: the one place a manifest key is spelled.

`Manifest.read` loads and checks it (a missing or mistyped field is one line naming the
file and the field), `write` writes it atomically, and every reader uses attributes
(`run.manifest.counts.papers`). Standard library only.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Self

from explorer.atomic_files import atomic_write_text
from explorer.errors import ArtifactError
from explorer.names import MANIFEST

# 2: unit-length paper embeddings for semantic search; 3: levels (nodes table, paper paths)
SCHEMA_VERSION = 3


def rebuild_hint(corpus: str) -> str:
    """The command that replaces a corpus's unreadable run (ends every refusal to read one)."""
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
    # How `--embedding-precision auto` chose (build/encoder_choice.py): precision, each
    # encoder's measured rate, how; absent when the user forced a precision.
    encoder_choice: dict[str, Any] | None = _omitted()

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
                f"this version reads {SCHEMA_VERSION}; {rebuild_hint(corpus)}"
            )
        return cls.from_json(data, "", source)

    def write(self, run_dir: Path) -> None:
        """manifest.json into `run_dir`, atomically (a build writes it last)."""
        atomic_write_text(Path(run_dir) / MANIFEST, json.dumps(self.to_json(), indent=2))
