"""What the user asked a build for (`BuildConfig`), its defaults, and every check of it.

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
from explorer.build.cluster import Clusterer
from explorer.build.embed import DEFAULT_MODEL, PRECISIONS
from explorer.build.projection import EXACT_UP_TO
from explorer.build.sample import SAMPLE_ABOVE, SAMPLE_SIZE, applies
from explorer.build.sources import ReadOptions
from explorer.build.topics import DEFAULT_SEED, MIN_DOCUMENTS
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
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class BuildConfig:
    """What the user asked for; together with the inputs' hashes and the code it names the run."""

    name: str
    inputs: tuple[str, ...]
    embedding_model: str = DEFAULT_MODEL
    embedding_precision: str = "auto"  # auto | float32 | bfloat16 (explorer.build.embed)
    seed: int = DEFAULT_SEED
    min_topic_size: int | None = None
    stability: int = 0  # retired (STABILITY_RETIRED): a value above 0 is refused
    keep_topics: bool = False  # keep the latest run's topics and assign new papers (keep.py)
    # Where the parallel stages run: "local", or "ray" with these options. Never part of
    # the run id: an engine must not change results (explorer/build/ray_engine.py).
    engine: str = "local"
    ray: RayOptions | None = None
    # Above `sample_above` papers (0: never) the fit runs on a stratified sample of
    # `sample_size` and the rest are assigned (explorer/build/sample.py).
    sample_above: int = SAMPLE_ABOVE
    sample_size: int = SAMPLE_SIZE
    # Above this many papers the neighbour graph is approximate (explorer/build/projection.py);
    # a parameter so that tests reach that path on small corpora.
    exact_neighbours_up_to: int = EXACT_UP_TO
    read_options: ReadOptions = field(default_factory=ReadOptions)
    # What groups papers into topics and subtopics (explorer/build/cluster.py); None: HDBSCAN
    # sized by the corpus. In the run id only when given, so default run ids never change.
    clusterer: Clusterer | None = None

    def validate(self) -> None:
        """One line naming the option when a value, or two options together, cannot build."""
        artifacts.check_corpus_name(self.name)
        if self.stability:
            raise InputError(STABILITY_RETIRED)
        if self.sample_above < 0 or self.sample_size < MIN_DOCUMENTS:
            raise InputError(
                f"--sample-above N: N at least 0; --sample-size N: N at least {MIN_DOCUMENTS}"
            )
        if self.embedding_precision not in ("auto", *PRECISIONS):
            choices = ", ".join(("auto", *PRECISIONS))
            raise InputError(
                f"--embedding-precision: one of {choices}, not {self.embedding_precision!r}"
            )
        self._validate_engine()

    def _validate_engine(self) -> None:
        """The engine and the Ray options; whether Ray is installed, before any work starts."""
        if self.engine not in ENGINES:
            raise InputError(f"--engine: one of {', '.join(ENGINES)}, not {self.engine!r}")
        if self.engine != "ray":
            if self.ray is not None:
                raise InputError("--ray-* options need --engine ray")
            return
        from explorer.build.ray_engine import require_ray

        require_ray()
        if self.ray is None:
            return
        for option, value in (("--ray-batch-size", self.ray.batch_size),
                              ("--ray-actors-per-node", self.ray.actors_per_node)):  # fmt: skip
            if value is not None and value < 1:
                raise InputError(f"{option} N: N must be at least 1")

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
