"""Every build option as data: its name, flag, default, bounds and help, in one table.

`explorer build`'s parser adds its options from SETTINGS (explorer/cli/build_command.py),
`BuildConfig` takes its defaults from it and checks values against its bounds and choices
(config.py), the modules that use a default read it here (embed.py, sample.py, topics.py,
projection.py), and docs/cli.md shows the table (explorer/cli/reference.py). Datasette
declares its settings the same way. Plain data, standard library only: the command line
reads it without loading the build world.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The fewest papers a topic model is fitted on: the smallest corpus (topics.default_params),
# and so the smallest sample (`--sample-size`).
MIN_DOCUMENTS = 10
# What the embedder computes in (embed.py); `--embedding-precision auto` picks one of them.
# onnx: float32 through onnxruntime over the model's ONNX export (not with --engine ray).
PRECISIONS = ("float32", "bfloat16", "onnx")

# Where a setting goes: a field of BuildConfig, of its ReadOptions, or of its RayOptions
# (whose fields drop the `ray_` of the setting's name).
CONFIG, READ_OPTIONS, RAY = "config", "read_options", "ray"


@dataclass(frozen=True)
class Setting:
    """One build option: `name` is the parser's dest and the field it fills (see `part`);
    a setting without a `flag` is for code and tests only."""

    name: str
    flag: str | None
    default: Any
    type: type
    help: str  # `{default}` stands for the default
    bounds: tuple[int, int | None] | None = None  # (least, most), most None: unbounded
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    part: str = CONFIG

    @property
    def least(self) -> int | None:
        return None if self.bounds is None else self.bounds[0]

    def help_text(self) -> str:
        return self.help.format(default=self.default)


SETTINGS: tuple[Setting, ...] = (
    Setting("add", "--add", False, bool,
            "keep the inputs of the corpus's latest run and add these"),
    Setting("keep_topics", "--keep-topics", False, bool,
            "keep the latest run's topics, levels and map: papers new to the corpus join "
            "their nearest topic, nothing is refitted, curations carry over (refit without it "
            "once many papers are new)"),
    Setting("sample_above", "--sample-above", 50_000, int,
            "above N papers fit topics and map on a stratified sample and assign the rest "
            "(default {default:,}; 0: always fit every paper)", bounds=(0, None), metavar="N"),
    Setting("sample_size", "--sample-size", 20_000, int,
            "papers in that sample (default {default:,})", bounds=(MIN_DOCUMENTS, None),
            metavar="N"),
    Setting("engine", "--engine", "local", str,
            "where reading and embedding run: this process (default) or a Ray cluster "
            "(needs the [ray] extra); the results are the same", choices=("local", "ray")),
    Setting("ray_address", "--ray-address", None, str,
            "Ray cluster to join, e.g. 10.0.0.5:6379 (default: $RAY_ADDRESS, else a local "
            "Ray started for the build)", part=RAY),
    Setting("ray_batch_size", "--ray-batch-size", None, int,
            "abstracts per actor call and cache shard (default: 256, the local engine's "
            "chunk, which keeps vectors bit-identical)", bounds=(1, None), metavar="N",
            part=RAY),
    Setting("ray_actors_per_node", "--ray-actors-per-node", None, int,
            "embedding actors per node, one model each, sharing the node's CPUs as torch "
            "threads (default: one per CPU)", bounds=(1, None), metavar="N", part=RAY),
    Setting("seed", "--seed", 42, int, "random seed for UMAP (default {default})"),
    Setting("min_topic_size", "--min-topic-size", None, int,
            "smallest topic (default: scales with corpus size)"),
    Setting("stability", "--stability", 0, int,
            "retired: every build scores each topic's stability from its consensus fits",
            metavar="K"),
    Setting("embedding_model", "--embedding-model", "all-MiniLM-L6-v2", str,
            "sentence-transformers model: the packaged {default} (default) or a "
            "local model folder"),
    Setting("embedding_precision", "--embedding-precision", "auto", str,
            "what computes the vectors: torch float32, torch bfloat16 (fast on some CPUs with "
            "AVX512-BF16 or AMX) or onnx (float32 in onnxruntime), all within 1e-4 cosine of "
            "float32; auto times each on a new corpus's first build and keeps float32 unless "
            "another is 1.2x faster on this machine (default: auto)",
            choices=("auto", *PRECISIONS)),
    Setting("text_column", "--text-column", None, str,
            "CSV/JSONL/Parquet: column with the abstract (default: abstract)", part=READ_OPTIONS),
    Setting("title_column", "--title-column", None, str,
            "CSV/JSONL/Parquet: column with the title (default: title)", part=READ_OPTIONS),
    Setting("year_column", "--year-column", None, str,
            "CSV/JSONL/Parquet: column with the year (default: year)", part=READ_OPTIONS),
    Setting("class_column", "--class-column", None, str,
            "CSV/JSONL/Parquet: column with oral/spotlight/poster (default: status)",
            part=READ_OPTIONS),
    Setting("venue", "--venue", None, str,
            "venue for every paper (overrides what the files say)", part=READ_OPTIONS),
    Setting("year", "--year", None, int,
            "year for every paper (overrides what the files say)", part=READ_OPTIONS),
    # Above this many papers the neighbour graph is approximate (projection.py); a setting
    # so that tests reach that path on small corpora.
    Setting("exact_neighbours_up_to", None, 50_000, int,
            "above this many papers the neighbour graph is approximate (NN-descent)"),
)  # fmt: skip

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    return _BY_NAME[name]


def default(name: str) -> Any:
    return _BY_NAME[name].default
