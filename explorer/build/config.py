"""What the user asked a build for (`BuildConfig`) and every check of it; each option's
default, bounds and choices are a row of settings.py, which the CLI's flags come from too.

The CLI turns its flags into a `BuildConfig` and validates nothing itself: `validate` (run
by `pipeline.build` before any work, as scikit-learn's `fit` checks what `__init__`
stored) refuses a value or a combination with one line naming the option. Two checks need
what planning reads, the corpus's size and the run `--keep-topics` keeps; they are here
too (`fits_on_sample`, `check_base`), and plan.py calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer import artifacts
from explorer.build import settings
from explorer.build.cluster import Clusterer
from explorer.build.sample import applies
from explorer.build.sources import ReadOptions
from explorer.errors import InputError

if TYPE_CHECKING:  # ray_engine and keep are imported when a build needs them
    from explorer.build.keep import Base
    from explorer.build.ray_engine import RayOptions

# `--stability K` refitted the topics with K more seeds. Every build now fits several seeds
# and keeps their consensus, scoring each topic from those fits: the flag says so and stops.
STABILITY_RETIRED = (
    "--stability is retired: every build now fits its topics several times and scores each "
    "topic's stability from those fits (explorer info, the Topics table)"
)
ENGINES = settings.setting("engine").choices


@dataclass(frozen=True)
class BuildConfig:
    """What the user asked for; together with the inputs' hashes and the code it names the run."""

    name: str
    inputs: tuple[str, ...]
    embedding_model: str = settings.default("embedding_model")
    embedding_precision: str = settings.default("embedding_precision")  # or a PRECISIONS
    seed: int = settings.default("seed")
    min_topic_size: int | None = settings.default("min_topic_size")
    stability: int = settings.default("stability")  # retired (STABILITY_RETIRED): above 0 refused
    # Keep the inputs of the corpus's latest run and add these (plan.with_latest_inputs).
    add: bool = settings.default("add")
    keep_topics: bool = settings.default("keep_topics")  # the latest run's topics (keep.py)
    # Where the parallel stages run: "local", or "ray" with these options. Never part of
    # the run id: an engine must not change results (explorer/build/ray_engine.py).
    engine: str = settings.default("engine")
    ray: RayOptions | None = None
    # Above `sample_above` papers (0: never) the fit runs on a stratified sample of
    # `sample_size` and the rest are assigned (explorer/build/sample.py).
    sample_above: int = settings.default("sample_above")
    sample_size: int = settings.default("sample_size")
    # Above this many papers the neighbour graph is approximate (explorer/build/projection.py);
    # a parameter so that tests reach that path on small corpora.
    exact_neighbours_up_to: int = settings.default("exact_neighbours_up_to")
    read_options: ReadOptions = field(default_factory=ReadOptions)
    # What groups papers into topics and subtopics (explorer/build/cluster.py); None: HDBSCAN
    # sized by the corpus. In the run id only when given, so default run ids never change.
    clusterer: Clusterer | None = None

    def validate(self) -> None:
        """One line naming the option when a value, or two options together, cannot build."""
        artifacts.check_corpus_name(self.name)
        if self.stability:
            raise InputError(STABILITY_RETIRED)
        above = settings.setting("sample_above").least
        size = settings.setting("sample_size").least
        if self.sample_above < above or self.sample_size < size:
            raise InputError(
                f"--sample-above N: N at least {above}; --sample-size N: N at least {size}"
            )
        precisions = settings.setting("embedding_precision").choices
        if self.embedding_precision not in precisions:
            choices = ", ".join(precisions)
            raise InputError(
                f"--embedding-precision: one of {choices}, not {self.embedding_precision!r}"
            )
        self._validate_engine()

    def _validate_engine(self) -> None:
        """The engine and the Ray options; whether Ray is installed, before any work starts."""
        if self.engine not in ENGINES:
            raise InputError(f"--engine: one of {', '.join(ENGINES)}, not {self.engine!r}")
        if self.engine == "ray" and self.embedding_precision == "onnx":
            raise InputError(
                "--embedding-precision onnx runs on this machine only; with --engine ray use "
                "float32, bfloat16 or auto"
            )
        if self.engine != "ray":
            if self.ray is not None:
                raise InputError("--ray-* options need --engine ray")
            return
        from explorer.build.ray_engine import require_ray

        require_ray()
        if self.ray is None:
            return
        for name, value in (("ray_batch_size", self.ray.batch_size),
                            ("ray_actors_per_node", self.ray.actors_per_node)):  # fmt: skip
            row = settings.setting(name)
            if value is not None and value < row.least:
                raise InputError(f"{row.flag} N: N must be at least {row.least}")

    def fits_on_sample(self, n_papers: int) -> bool:
        """Whether a corpus of `n_papers` is fitted on a sample; one line when an option
        cannot go with that."""
        return applies(n_papers, self.sample_above, self.sample_size)

    def check_base(self, base: Base) -> None:
        """One line when the run `--keep-topics` would keep cannot take these papers."""
        if base.embedding_model != self.embedding_model:
            raise InputError(
                f"--keep-topics: run {base.run_id} was embedded with {base.embedding_model}, "
                f"not {self.embedding_model}; build without --keep-topics"
            )
