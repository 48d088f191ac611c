"""build(config) -> a published run: plan, run the stages of the build's mode, publish.

This module orchestrates only. What was asked and whether it can build: config.py (each
option's default and bounds: settings.py). What the build will do, with which inputs
(`--add`) and under which run id: plan.py. The stages and their typed results: stages.py;
the topic stage of each mode: topic_stages.py. The lock, the temporary folder, the
manifest and the publish on disk: runs.py.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from explorer import artifacts
from explorer.build import runs, stages, topic_stages
from explorer.build.config import BuildConfig
from explorer.build.memory import release_freed_memory
from explorer.build.models import reproducible_kernels
from explorer.build.plan import BuildMode, Plan, plan_build, rebuild_reason, with_latest_inputs
from explorer.build.projection import KnnGraph
from explorer.errors import ArtifactError
from explorer.manifest import Manifest

Log = Callable[[str], None]


@dataclass
class BuildResult:
    run: artifacts.Run
    reused: bool


def prepare_environment(cache_dir: Path) -> None:
    """Settings the modelling stack reads at import time; set before importing it."""
    os.environ.setdefault("NUMBA_CACHE_DIR", str((Path(cache_dir) / "numba").resolve()))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from disk, never a hub
    # numba's default OpenMP layer loads the system's libgomp; torch brings its own, and
    # when numba's came first (UMAP fitted before torch ran, as in a build that embeds in a
    # child process: isolated.py) the two pools' spinning threads shared two cores: 500
    # keywords took 42.9 s to embed instead of 0.8 s. workqueue has no spinning pool; UMAP
    # fits as fast (11.5 s either way on a 2,000-point test).
    os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
    reproducible_kernels()


class StageTimer:
    """Wall seconds per stage, reported as each finishes."""

    def __init__(self, log: Log) -> None:
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


def build(
    config: BuildConfig, *, cache_dir: Path, progress: bool = True, log: Log | None = None
) -> BuildResult:
    """Build (or reuse) the run for `config` and make it the corpus's latest."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    prepare_environment(cache_dir)  # before a Ray cluster is joined: its workers inherit it
    config.validate()  # before a Ray cluster is joined or anything is read
    config = with_latest_inputs(config, Path(cache_dir))
    timer = StageTimer(log)
    with engine_session(config, log):
        return _build(config, Path(cache_dir), progress, timer)


@contextlib.contextmanager
def engine_session(config: BuildConfig, log: Log) -> Iterator[None]:
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


def _build(config: BuildConfig, cache_dir: Path, progress: bool, timer: StageTimer) -> BuildResult:
    # No "starting" line for reading: bad input must leave exactly one line on stderr.
    with timer.stage("read", None):
        plan = plan_build(config, cache_dir=cache_dir, progress=progress, log=timer.log)
    if plan.choice is not None and plan.choice.rates:  # measured: say what and why
        from explorer.build.encoder_choice import describe

        timer.log(f"  Encoder: {describe(plan.choice)}.")
    run_id, corpus_dir = plan.run_id, cache_dir / config.name
    with runs.corpus_lock(corpus_dir):
        reused = runs.reusable(cache_dir, config.name, run_id, timer.log)
        if reused is not None:
            _restore_encoder(plan, reused, timer.log)
            runs.point_latest(corpus_dir, run_id)
            timer.log(
                f"Up to date: run {run_id} already built from these inputs, options and code."
            )
            return BuildResult(run=reused, reused=True)
        previous = artifacts.read_prior_run(cache_dir, config.name)
        if previous is not None and (reason := rebuild_reason(previous, plan)):
            timer.log(f"Rebuilding {config.name!r}: {reason}.")
        with runs.new_run(corpus_dir, run_id) as tmp:
            manifest = _compute_and_write(plan, tmp, timer)
    seconds = sum(manifest.timings.values())
    timer.log(f"Published run {run_id} of {config.name!r} in {seconds:.1f} s.")
    return BuildResult(run=artifacts.open_run(cache_dir, config.name, run_id), reused=False)


def _restore_encoder(plan: Plan, run: artifacts.Run, log: Log) -> None:
    """Export again the query encoder a reused run names when it is gone from the cache or
    damaged (the export is deterministic, so the run's record of it still holds)."""
    ref = artifacts.encoder_ref(plan.cache_dir, run.manifest)
    if ref is None:
        return
    try:
        artifacts.read_encoder_facts(ref)
    except ArtifactError:
        stages.export_encoder(plan, log)


def _compute_and_write(plan: Plan, tmp: Path, timer: StageTimer) -> Manifest:
    """The stages in order, each result the next stage's input; the manifest last."""
    docs = [p.text for p in plan.corpus.papers]
    ray = " on the Ray cluster" if plan.config.engine == "ray" else ""
    with timer.stage(
        "embed",
        f"Embedding {len(docs)} abstracts with {plan.embedder.model_name} "
        f"({plan.embedder.precision}){ray}",
    ):
        embedded = stages.embed(plan, docs, timer.log)
    with timer.stage("neighbors", "Finding nearest neighbours"):
        graph = stages.neighbours(plan, embedded)
    if plan.mode is BuildMode.FULL:
        topics = _fitted_topics(plan, docs, embedded, graph, timer)
    else:
        topics = _assigned_topics(plan, docs, embedded, timer)
    with timer.stage("summaries", "Summarising topics, neighbours and keyword statistics"):
        summary = stages.summarise(plan, docs, embedded, graph, topics)
    with timer.stage("write", "Writing artifacts"):
        stages.write(plan, tmp, summary, topics.fit, embedded)
    with timer.stage("encoder", None):  # says what it does only when it exports
        encoder = stages.export_encoder(plan, timer.log)
    manifest = runs.manifest(plan, topics, summary, embedded, timer.seconds, tmp)
    # The encoder lies beside the run: shared by every run of the model.
    manifest = replace(manifest, query_encoder=encoder)
    manifest.write(tmp)
    return manifest


def _fitted_topics(
    plan: Plan, docs: list[str], embedded: stages.Embedded, graph: KnnGraph, timer: StageTimer
) -> stages.Topics:
    """BuildMode.FULL: the consensus topics of every paper, then the 2-D map."""
    from explorer.build.consensus import FITS
    from explorer.build.topics import SHORT_LIST, is_short_list

    short = is_short_list(len(docs), plan.config.clusterer)
    how = f"the consensus of {FITS} seeded fits (UMAP 5-D, HDBSCAN)"
    if short:
        how = f"a short list's Ward cut (under {SHORT_LIST} papers)"
    with timer.stage(
        "topics", f"Fitting topics: {how}, areas and subtopics, c-TF-IDF, KeyBERT keywords"
    ):
        topics = topic_stages.fit(plan, docs, embedded, graph)
    with timer.stage("projection", "Projecting to 2-D for the map"):
        coords = topic_stages.project(plan, embedded, graph, topics.fit.labels if short else None)
    return replace(topics, coords=coords)


def _assigned_topics(
    plan: Plan, docs: list[str], embedded: stages.Embedded, timer: StageTimer
) -> stages.Topics:
    """BuildMode.KEEP_TOPICS or SAMPLE: topics no fit over every paper made, the latest
    run's (keep.py) or a sample's (sample.py), every other paper assigned to them."""
    if plan.mode is BuildMode.KEEP_TOPICS:
        message = f"Keeping the topics of run {plan.base.run_id}, assigning new papers"
        make, done = topic_stages.keep, "{kept} papers kept their topics, {added} new assigned"
    else:
        size = plan.config.sample_size
        message = f"Fitting topics and the map on a sample of {size} papers (by venue and year)"
        make, done = (
            topic_stages.fit_sample,
            "{kept} papers in the sample, {added} assigned to its topics",
        )
    with timer.stage("topics", message):
        topics = make(plan, docs, embedded)
    timer.log("  " + done.format(kept=topics.kept, added=topics.added))
    return topics
