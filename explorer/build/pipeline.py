"""build(config) -> a published run: read, embed, fit, project, summarise, write, publish.

Each stage is a function with a typed result. Writes go to a temporary sibling directory;
the manifest is written last and the directory renamed into place, so a killed build
never leaves a run that looks complete. A per-corpus lock keeps two builds of one corpus
from interleaving.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from explorer import __version__, artifacts
from explorer.build.cluster import Clusterer
from explorer.build.cluster import describe as describe_clusterer
from explorer.build.corpus import Corpus
from explorer.build.embed import DEFAULT_MODEL, reproducible_kernels
from explorer.build.memory import release_freed_memory
from explorer.build.projection import EXACT_UP_TO, approximate_method
from explorer.build.sample import SAMPLE_ABOVE, SAMPLE_SIZE, applies, sample_params
from explorer.build.sources import ReadOptions, detect_format, expand_inputs, read_inputs
from explorer.build.topics import DEFAULT_SEED, TopicFit, TopicParams
from explorer.errors import ArtifactError, BuildLockedError, InputError

if TYPE_CHECKING:  # stages is imported when a build runs, not when this module loads
    from explorer.build.keep import Base
    from explorer.build.ray_engine import RayOptions
    from explorer.build.stages import Embedded, Summary

# Bump PIPELINE_VERSION in the same commit as any change to explorer/build/ that changes
# what a build writes for the same inputs and options (topics, labels, coordinates,
# tables, ordering). Every run id includes it, so the next `explorer build` rebuilds runs
# made by older code instead of calling them up to date. Refactors that leave every
# artifact byte-identical keep it.
#   1: canonical paper order, order-free dedupe, TeX text commands dropped, weights in keys
#   2: areas and subtopics, phrase labels
#   3: labels: plural and singular never both, longer phrases replace what they extend
#   4: topic ids stored as text in papers, topics and doc_topics
#   5: the query encoder's ONNX export, named in the manifest (`query_encoder`)
#   6: topics gain a `stability` column (`--stability K`; empty without it)
#   7: labels: whole terms (up to 5 words), one form per term, no boilerplate (venue
#      background), areas by what their topics share, distinct siblings
#   8: nodes gain `top_words` and `coherence` (NPMI), topics `coherence`, the vocabulary
#      `specificity`; the manifest's levels report coherence and diversity
#   9: keywords (vocabulary, keyword statistics, top words) counted from prose: links and
#      math cut out, as for labels
#  10: keywords are verbatim words and adjacent pairs (hyphenated words whole, no pair across
#      a stop word), citations cut; the venue background from 2017 on, kept by its median
#      group; the vocabulary gains `background_share`; top words leave boilerplate out
#      instead of weighting by specificity
#  11: labels: an abbreviation of a term with a hyphenated word is one term with it ("nmf")
PIPELINE_VERSION = 11
# Packages whose upgrade can change topics, labels or vectors (the paper's or, through the
# ONNX export, the query's): their versions are in the run id.
MODEL_PACKAGES = (
    "bertopic", "umap-learn", "hdbscan", "scikit-learn", "sentence-transformers",
    "transformers", "tokenizers", "torch", "numpy", "scipy", "numba", "pynndescent", "onnx",
)  # fmt: skip
# Recorded in the manifest for the record only.
_RECORDED_PACKAGES = (*MODEL_PACKAGES, "pandas", "pyarrow")
TMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class BuildConfig:
    """What the user asked for; together with the inputs' hashes and the code it names the run."""

    name: str
    inputs: tuple[str, ...]
    embedding_model: str = DEFAULT_MODEL
    embedding_precision: str = "auto"  # auto | float32 | bfloat16 (explorer.build.embed)
    seed: int = DEFAULT_SEED
    min_topic_size: int | None = None
    stability: int = 0  # refits with more seeds for per-topic stability (0: none)
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


@dataclass
class BuildResult:
    run: artifacts.Run
    reused: bool


@dataclass(frozen=True)
class Plan:
    """Everything decided before any heavy work: what to build, and under which run id."""

    config: BuildConfig
    corpus: Corpus
    inputs: list[dict[str, object]]
    params: TopicParams
    precision: str
    weights: str  # sha256 prefix of the embedding model's weight files
    recorded: dict  # the manifest's "config": every option that decides the output
    code: dict  # pipeline version and model-package versions
    run_id: str
    cache_dir: Path
    progress: bool
    base: Base | None = None  # the run whose topics are kept (`--keep-topics`)


def prepare_environment(cache_dir: Path) -> None:
    """Settings the modelling stack reads at import time; set before importing it."""
    os.environ.setdefault("NUMBA_CACHE_DIR", str((Path(cache_dir) / "numba").resolve()))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from disk, never a hub
    reproducible_kernels()


@contextlib.contextmanager
def corpus_lock(corpus_dir: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on one corpus; released by the OS if the process dies."""
    import fcntl

    corpus_dir.mkdir(parents=True, exist_ok=True)
    with (corpus_dir / ".lock").open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BuildLockedError(
                f"another build of corpus {corpus_dir.name!r} is running; "
                "wait for it to finish, then build again"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class StageTimer:
    """Wall seconds per stage, reported as each finishes."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.seconds: dict[str, float] = {}
        self.log = log

    @contextlib.contextmanager
    def stage(self, name: str, message: str | None) -> Iterator[None]:
        if message:
            self.log(f"{message}…")
        start = time.perf_counter()
        yield
        release_freed_memory()  # the next stage's peak should not stack on this one's garbage
        self.seconds[name] = round(time.perf_counter() - start, 3)
        if message:  # silent stages still count in the summary
            self.log(f"  {name}: {self.seconds[name]:.1f} s")


def code_versions() -> dict[str, object]:
    """What, besides inputs and options, decides a run's output: part of its id."""
    packages = {}
    for name in MODEL_PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            packages[name] = metadata.version(name)
    return {"pipeline_version": PIPELINE_VERSION, "packages": packages}


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "explorer": __version__}
    for name in _RECORDED_PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def _input_records(inputs: tuple[str, ...]) -> list[dict[str, object]]:
    return [
        {
            "path": str(path),
            "format": detect_format(path),
            "bytes": path.stat().st_size,
            "sha256": artifacts.sha256_file(path),
        }
        for path in expand_inputs(inputs)
    ]


def corpus_fingerprint(corpus: Corpus) -> str:
    """sha256 of every paper as read, in canonical order: it covers what the file contents
    alone do not, such as a venue and year taken from a file or folder name."""
    digest = hashlib.sha256()
    for paper in corpus.papers:
        record = asdict(paper)
        record.pop("source_file")  # where a file lies does not change the result
        digest.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def run_key(recorded: dict, code: dict, inputs: list[dict[str, object]], papers: str) -> str:
    """The run id: a hash of the schema, the code, the options, the inputs' contents and the
    papers read from them (`corpus_fingerprint`).

    Input hashes are sorted: the papers are put in a canonical order before modelling,
    so the order in which files are named does not change the result.
    """
    key = {
        "schema": artifacts.SCHEMA_VERSION,
        "code": code,
        "config": recorded,
        "inputs": sorted(str(i["sha256"]) for i in inputs),
        "papers": papers,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def plan_build(config: BuildConfig, *, cache_dir: Path, progress: bool) -> Plan:
    """Read the inputs and decide the run id; no model is loaded."""
    from explorer.build.embed import model_id, weights_fingerprint
    from explorer.build.topics import default_params

    corpus = _read(config)
    inputs = _input_records(config.inputs)
    params = default_params(len(corpus), min_topic_size=config.min_topic_size, seed=config.seed)
    base = _base(config, cache_dir)
    sampled = base is None and _check_sampled(config, len(corpus))
    if base is not None:  # the kept run's parameters describe its topics
        params = TopicParams(**base.params)
    elif sampled:  # the fit sees the sample: the corpus's topic grain, scaled to it
        params = sample_params(
            len(corpus), config.sample_size, min_topic_size=config.min_topic_size, seed=config.seed
        )
    precision = _precision(config, cache_dir)
    weights = weights_fingerprint(config.embedding_model)
    recorded = {
        "embedding_model": config.embedding_model,
        "embedding_model_id": model_id(config.embedding_model),
        "embedding_weights": weights,
        "embedding_precision": precision,
        "seed": config.seed,
        "min_topic_size": config.min_topic_size,
        "stability": config.stability,
        "params": params.as_dict(),
        "read_options": asdict(config.read_options),
    }
    if base is not None:  # only then, so other run ids do not change
        recorded["keep_topics_of"] = base.run_id
    if sampled:  # likewise: a threshold the corpus is below changes nothing
        recorded["sample"] = {"above": config.sample_above, "size": config.sample_size}
    if method := approximate_method(len(corpus), config.exact_neighbours_up_to):
        recorded["neighbours"] = method  # likewise: exact graphs leave ids as they were
    if (clusterer := describe_clusterer(config.clusterer)) is not None:  # likewise
        recorded["clusterer"] = clusterer
    code = code_versions()
    return Plan(
        config=config,
        corpus=corpus,
        inputs=inputs,
        params=params,
        precision=precision,
        weights=weights,
        recorded=recorded,
        code=code,
        run_id=run_key(recorded, code, inputs, corpus_fingerprint(corpus)),
        cache_dir=Path(cache_dir),
        progress=progress,
        base=base,
    )


def _read(config: BuildConfig) -> Corpus:
    if config.engine == "ray":
        from explorer.build import ray_engine

        return ray_engine.read_inputs(config.inputs, config.read_options)
    return read_inputs(config.inputs, config.read_options)


@contextlib.contextmanager
def engine_session(config: BuildConfig, log: Callable[[str], None]) -> Iterator[None]:
    """The Ray cluster for a `--engine ray` build (joined, or a local Ray started and
    stopped here); nothing for the local engine, which never imports ray."""
    if config.engine != "ray":
        yield
        return
    from explorer.build import ray_engine

    options = config.ray or ray_engine.RayOptions()
    started = ray_engine.connect(options)
    try:
        ray_engine.log_cluster(log)
        yield
    finally:
        if started:
            ray_engine.disconnect()


def _base(config: BuildConfig, cache_dir: Path) -> Base | None:
    """The latest run whose topics `--keep-topics` keeps; one line when it cannot."""
    if not config.keep_topics:
        return None
    from explorer.build.keep import load_base

    base = load_base(Path(cache_dir), config.name)
    if base.embedding_model != config.embedding_model:
        raise InputError(
            f"--keep-topics: run {base.run_id} was embedded with {base.embedding_model}, "
            f"not {config.embedding_model}; build without --keep-topics"
        )
    if config.stability:
        raise InputError("--keep-topics fits nothing, so it has no --stability to score")
    return base


def _check_sampled(config: BuildConfig, n_papers: int) -> bool:
    """Whether this build fits on a sample; one line when an option cannot go with it."""
    if not applies(n_papers, config.sample_above, config.sample_size):
        return False
    if config.stability:
        raise InputError(
            f"--stability refits every paper; with {n_papers:,} papers the fit runs on a sample "
            "(--sample-above 0 fits every paper)"
        )
    return True


def rebuild_reason(previous: artifacts.PriorRun, plan: Plan) -> str | None:
    """Why the corpus's latest run is not reused although it was built from the same
    inputs and options, when that is the reason (older code or another model); else None."""
    if previous.pipeline_version != plan.code["pipeline_version"]:
        return (
            f"its run {previous.run_id} was made by pipeline version "
            f"{previous.pipeline_version}; this is {PIPELINE_VERSION}"
        )
    old = previous.versions
    changed = [
        f"{name} {old.get(name, '?')} -> {version}"
        for name, version in plan.code["packages"].items()
        if old.get(name) != version
    ]
    if changed:
        return f"its run {previous.run_id} was made with " + ", ".join(changed)
    if previous.embedding_weights != plan.weights:
        return f"the embedding model's weights changed since run {previous.run_id}"
    return None


def _clean_stale(corpus_dir: Path) -> None:
    """Remove temporary directories left by builds that were killed (we hold the lock)."""
    for path in corpus_dir.glob(f"{TMP_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)


def build(
    config: BuildConfig,
    *,
    cache_dir: Path,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build (or reuse) the run for `config` and make it the corpus's latest."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    cache_dir = Path(cache_dir)
    artifacts.check_corpus_name(config.name)
    timer = StageTimer(log)
    with engine_session(config, log):
        return _build(config, cache_dir, progress, log, timer)


def _build(
    config: BuildConfig,
    cache_dir: Path,
    progress: bool,
    log: Callable[[str], None],
    timer: StageTimer,
) -> BuildResult:
    corpus_dir = cache_dir / config.name
    # No "starting" line for reading: bad input must leave exactly one line on stderr.
    with timer.stage("read", None):
        plan = plan_build(config, cache_dir=cache_dir, progress=progress)
    run_id = plan.run_id
    with corpus_lock(corpus_dir):
        _clean_stale(corpus_dir)
        reused = _reusable(cache_dir, config.name, run_id, log)
        if reused is not None:
            _restore_encoder(plan, reused, log)
            artifacts.atomic_write_text(corpus_dir / artifacts.LATEST, run_id)
            log(f"Up to date: run {run_id} already built from these inputs, options and code.")
            return BuildResult(run=reused, reused=True)
        previous = artifacts.read_prior_run(cache_dir, config.name)
        if previous is not None and (reason := rebuild_reason(previous, plan)):
            log(f"Rebuilding {config.name!r}: {reason}.")
        prepare_environment(cache_dir)
        tmp = corpus_dir / f"{TMP_PREFIX}{run_id}-{os.getpid()}"
        tmp.mkdir(parents=True)
        try:
            manifest = _compute_and_write(plan, tmp, timer)
            final = corpus_dir / run_id
            if final.exists():  # an incomplete run of the same id (no manifest): replace it
                shutil.rmtree(final)
            os.replace(tmp, final)
            artifacts.atomic_write_text(corpus_dir / artifacts.LATEST, run_id)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    log(f"Published run {run_id} of {config.name!r} in {sum(manifest.timings.values()):.1f} s.")
    return BuildResult(run=artifacts.open_run(cache_dir, config.name, run_id), reused=False)


def _reusable(cache_dir: Path, corpus: str, run_id: str, log: Callable[[str], None]):
    """The complete, intact run of this id, or None; a damaged one is rebuilt, with a line."""
    if not (cache_dir / corpus / run_id / artifacts.MANIFEST).is_file():
        return None
    try:
        return artifacts.open_run(cache_dir, corpus, run_id)
    except ArtifactError as exc:
        log(f"Rebuilding run {run_id}: {exc}.")
        return None


def _restore_encoder(plan: Plan, run: artifacts.Run, log: Callable[[str], None]) -> None:
    """Export again the query encoder a reused run names when it is gone from the cache or
    damaged (the export is deterministic, so the run's record of it still holds)."""
    ref = artifacts.encoder_ref(plan.cache_dir, run.manifest)
    if ref is None:
        return
    try:
        artifacts.read_encoder_facts(ref)
    except ArtifactError:
        from explorer.build import stages

        prepare_environment(plan.cache_dir)
        stages.export_encoder(plan, log)


def _precision(config: BuildConfig, cache_dir: Path) -> str:
    """The precision to embed in.

    'auto' keeps the precision of the corpus's latest run, whose embeddings are cached, so a
    re-fit or an added paper never re-embeds the rest; a new corpus gets bfloat16 where the
    CPU has it natively, else float32.
    """
    from explorer.build.embed import PRECISIONS, resolve_precision

    if config.embedding_precision == "auto":
        previous = artifacts.read_prior_run(cache_dir, config.name)
        if previous is not None:
            kept = previous.embedding_precision
            if kept in PRECISIONS:
                return kept
    return resolve_precision(config.embedding_precision)


def _compute_and_write(plan: Plan, tmp: Path, timer: StageTimer) -> artifacts.Manifest:
    """The stages in order; each result is the next stage's input."""
    from explorer.build import stages

    docs = [p.text for p in plan.corpus.papers]
    with timer.stage(
        "embed",
        f"Embedding {len(docs)} abstracts with {plan.config.embedding_model} ({plan.precision})"
        + (" on the Ray cluster" if plan.config.engine == "ray" else ""),
    ):
        embedded = stages.embed(plan, docs)
    with timer.stage("neighbors", "Finding nearest neighbours"):
        graph = stages.neighbours(plan, embedded)
    if plan.base is not None or "sample" in plan.recorded:
        summary, fit, kept = _assigned_topics(plan, docs, embedded, graph, timer)
    else:
        (summary, fit), kept = _fitted_topics(plan, docs, embedded, graph, timer), None
    with timer.stage("write", "Writing artifacts"):
        stages.write(plan, tmp, summary, fit, embedded)
    with timer.stage("encoder", None):  # says what it does only when it exports
        encoder = stages.export_encoder(plan, timer.log)
    manifest = _manifest(plan, summary, fit, embedded, timer, tmp)
    counts = manifest.counts
    if plan.base is not None:
        kept_topics = artifacts.KeptCounts(
            run_id=plan.base.run_id, kept=kept.kept, added=kept.added
        )
        counts = replace(counts, kept_topics=kept_topics)
    elif kept is not None:
        counts = replace(
            counts, sample=artifacts.SampleCounts(fitted=kept.kept, assigned=kept.added)
        )
    # The encoder lies beside the run: shared by every run of the model.
    manifest = replace(manifest, counts=counts, query_encoder=encoder)
    manifest.write(tmp)
    return manifest


def _fitted_topics(plan: Plan, docs: list[str], embedded, graph, timer: StageTimer):
    """Fit, score stability when asked, project, summarise: a run of its own topics."""
    from explorer.build import stages

    with timer.stage("topics", "Fitting topics (UMAP 5-D, HDBSCAN, c-TF-IDF, KeyBERT keywords)"):
        fit = stages.fit(plan, docs, embedded, graph)
    stability = None
    if plan.config.stability:
        with timer.stage(
            "stability", f"Refitting topics with {plan.config.stability} more seeds (stability)"
        ):
            stability = stages.stability(plan, embedded, graph, fit)
    with timer.stage("projection", "Projecting to 2-D for the map"):
        coords = stages.project(plan, embedded, graph)
    with timer.stage("summaries", "Summarising topics, neighbours and keyword statistics"):
        summary = stages.summarise(plan, docs, embedded, graph, fit, coords, stability)
    return summary, fit


def _assigned_topics(plan: Plan, docs: list[str], embedded, graph, timer: StageTimer):
    """Topics no fit over every paper made: the latest run's (`--keep-topics`) or a
    sample's (sample.py), every other paper assigned to them (assign.py)."""
    from explorer.build import stages

    if plan.base is not None:
        message = f"Keeping the topics of run {plan.base.run_id}, assigning new papers"
        make, done = stages.keep, "{kept} papers kept their topics, {added} new assigned"
    else:
        size = plan.config.sample_size
        message = f"Fitting topics and the map on a sample of {size} papers (by venue and year)"
        make, done = (
            stages.fit_sample,
            "{kept} papers in the sample, {added} assigned to its topics",
        )
    with timer.stage("topics", message):
        fit, kept = make(plan, docs, embedded)
    timer.log("  " + done.format(kept=kept.kept, added=kept.added))
    with timer.stage("summaries", "Summarising topics, neighbours and keyword statistics"):
        summary = stages.summarise(
            plan, docs, embedded, graph, fit, kept.coords, levels=kept.levels
        )
    return summary, fit, kept


def level_counts(papers: pd.DataFrame, nodes: pd.DataFrame) -> dict[str, object]:
    """Nodes per level, whether areas are a level of their own, and the largest leaf's share
    (a leaf: a subtopic, or a topic without subtopics; outliers are no leaf)."""
    real = papers["topic_id"] != artifacts.OUTLIER_ID
    sizes = artifacts.leaf_ids(papers)[real].value_counts()
    count = nodes["level"].value_counts()
    has_areas = artifacts.has_area_level(nodes)
    from explorer.build.coherence import level_quality

    shown = ("area", "topic", "subtopic") if has_areas else ("topic", "subtopic")
    return {
        "areas": int(count.get("area", 0)) if has_areas else 0,
        "topics": int(count.get("topic", 0)),
        "subtopics": int(count.get("subtopic", 0)),
        "has_areas": has_areas,
        "largest_leaf_share": round(float(sizes.max() / len(papers)), 4) if len(sizes) else 0.0,
        # Mean NPMI coherence, topic diversity and low-coherence nodes per level.
        "quality": level_quality(nodes, shown),
    }


def _manifest(
    plan: Plan,
    summary: Summary,
    fit: TopicFit,
    embedded: Embedded,
    timer: StageTimer,
    directory: Path,
) -> artifacts.Manifest:
    papers: pd.DataFrame = summary.tables["papers"]
    n_papers, n_topics = len(papers), summary.n_topics
    n_outliers = int((papers["topic_id"] == artifacts.OUTLIER_ID).sum())
    messages = []
    if n_topics < 2:
        messages.append(
            "Only one topic was found: the abstracts are too few or too similar to separate; "
            "add papers or lower --min-topic-size."
        )
    record = {
        "schema_version": artifacts.SCHEMA_VERSION,
        "pipeline_version": PIPELINE_VERSION,
        "corpus": plan.config.name,
        "run_id": plan.run_id,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": plan.recorded,
        "inputs": plan.inputs,
        "counts": {
            "papers": n_papers,
            "skipped": len(plan.corpus.skipped),
            "merged": len(plan.corpus.merged),
            "topics": n_topics,
            "outliers": n_outliers,
            "outlier_share": round(n_outliers / n_papers, 4),
            "clustered_share": round(fit.clustered / n_papers, 4),
            "outlier_threshold": round(fit.outlier_threshold, 4),
            "embedded_new": embedded.n_new,
            "embedded_cached": len(set(p.text for p in plan.corpus.papers)) - embedded.n_new,
            "vocabulary": len(summary.tables["vocab"]),
            "levels": level_counts(papers, summary.tables["nodes"]),
            "years": sorted(int(y) for y in papers["year"].dropna().unique()),
            "venues": sorted(v for v in papers["venue"].unique() if v),
            "stability": summary.stability,
        },
        "skipped_examples": plan.corpus.skipped[:20],
        "merged_examples": [list(pair) for pair in plan.corpus.merged[:20]],
        "messages": messages,
        "timings": timer.seconds,
        "versions": _versions(),
        "files": artifacts.file_inventory(directory),
    }
    return artifacts.Manifest.from_json(record, "", directory / artifacts.MANIFEST)
