"""The run writer: how a build's files become a run on disk, and only whole; its manifest.

A corpus is locked for one build at a time. A new run is written into a temporary sibling
(`.tmp-<run id>-<pid>`), its manifest last; the folder is then renamed into place and
`latest` pointed at it. A killed build leaves only a temporary folder, which the next
build of the corpus removes, and a folder without a manifest is never a run. A complete,
intact run of the same id is reused instead of being written again.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from explorer import __version__, artifacts, node_ids
from explorer.atomic_files import atomic_write_text, file_inventory
from explorer.build.plan import MODEL_PACKAGES, BuildMode, Plan, package_versions
from explorer.errors import ArtifactError, BuildLockedError
from explorer.manifest import SCHEMA_VERSION, Counts, KeptCounts, Manifest, SampleCounts
from explorer.names import LATEST, MANIFEST

if TYPE_CHECKING:  # the stages' result types, for readers
    from explorer.build.stages import Embedded, Summary, Topics

TMP_PREFIX = ".tmp-"
# Recorded in the manifest for the record only.
_RECORDED_PACKAGES = (*MODEL_PACKAGES, "pandas", "pyarrow")


@contextlib.contextmanager
def corpus_lock(corpus_dir: Path) -> Iterator[None]:
    """Exclusive, non-blocking lock on one corpus; released by the OS if the process dies.
    Holding it, the temporary folders of killed builds are removed first."""
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
            _clean_stale(corpus_dir)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _clean_stale(corpus_dir: Path) -> None:
    """Remove temporary directories left by builds that were killed (we hold the lock)."""
    for path in corpus_dir.glob(f"{TMP_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)


def reusable(
    cache_dir: Path, corpus: str, run_id: str, log: Callable[[str], None]
) -> artifacts.Run | None:
    """The complete, intact run of this id, or None; a damaged one is rebuilt, with a line."""
    if not (cache_dir / corpus / run_id / MANIFEST).is_file():
        return None
    try:
        return artifacts.open_run(cache_dir, corpus, run_id)
    except ArtifactError as exc:
        log(f"Rebuilding run {run_id}: {exc}.")
        return None


def point_latest(corpus_dir: Path, run_id: str) -> None:
    """Make `run_id` the corpus's latest run."""
    atomic_write_text(corpus_dir / LATEST, run_id)


@contextlib.contextmanager
def new_run(corpus_dir: Path, run_id: str) -> Iterator[Path]:
    """A temporary folder to write run `run_id` into (under the corpus lock). When the block
    ends with the manifest written, the folder becomes `corpus_dir/run_id` (replacing an
    incomplete run of that id) and the latest run; when it raises, it is removed."""
    tmp = corpus_dir / f"{TMP_PREFIX}{run_id}-{os.getpid()}"
    tmp.mkdir(parents=True)
    try:
        yield tmp
        if not (tmp / MANIFEST).is_file():  # the manifest is what makes a run
            raise RuntimeError(f"run {run_id} was not published: its manifest was not written")
        final = corpus_dir / run_id
        if final.exists():  # an incomplete run of the same id (no manifest): replace it
            shutil.rmtree(final)
        os.replace(tmp, final)
        point_latest(corpus_dir, run_id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def manifest(
    plan: Plan,
    topics: Topics,
    summary: Summary,
    embedded: Embedded,
    timings: dict[str, float],
    directory: Path,
) -> Manifest:
    """The run's manifest, from the plan, the stages' results and the files in `directory`
    (written by the stages: the manifest comes last)."""
    messages = []
    if summary.n_topics < 2:
        messages.append(
            "Only one topic was found: the abstracts are too few or too similar to separate; "
            "add papers or lower --min-topic-size."
        )
    record = {
        "schema_version": SCHEMA_VERSION,
        "pipeline_version": plan.code["pipeline_version"],
        "corpus": plan.config.name,
        "run_id": plan.run_id,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": plan.recorded,
        "inputs": plan.inputs,
        "counts": _counts(plan, topics, summary, embedded),
        "skipped_examples": plan.corpus.skipped[:20],
        "merged_examples": [list(pair) for pair in plan.corpus.merged[:20]],
        "messages": messages,
        "timings": timings,
        "versions": _versions(),
        "files": file_inventory(directory),
    }
    if plan.choice is not None:
        record["encoder_choice"] = plan.choice.record()
    made = Manifest.from_json(record, "", directory / MANIFEST)
    return replace(made, counts=_assigned_counts(plan, topics, made.counts))


def _counts(plan: Plan, topics: Topics, summary: Summary, embedded: Embedded) -> dict:
    """What the build found, as the manifest's `counts` holds it."""
    papers: pd.DataFrame = summary.tables["papers"]
    n_papers = len(papers)
    n_outliers = int((papers["topic_id"] == node_ids.OUTLIER_ID).sum())
    return {
        "papers": n_papers,
        "skipped": len(plan.corpus.skipped),
        "merged": len(plan.corpus.merged),
        "topics": summary.n_topics,
        "outliers": n_outliers,
        "outlier_share": round(n_outliers / n_papers, 4),
        "clustered_share": round(topics.fit.clustered / n_papers, 4),
        "outlier_threshold": round(topics.fit.outlier_threshold, 4),
        "embedded_new": embedded.n_new,
        "embedded_cached": len(set(p.text for p in plan.corpus.papers)) - embedded.n_new,
        "vocabulary": len(summary.tables["vocab"]),
        "levels": level_counts(papers, summary.tables["nodes"]),
        "years": sorted(int(y) for y in papers["year"].dropna().unique()),
        "venues": sorted(v for v in papers["venue"].unique() if v),
        "stability": summary.stability,
    }


def _assigned_counts(plan: Plan, topics: Topics, counts: Counts) -> Counts:
    """`counts` with the papers kept or fitted on a sample and those assigned to them."""
    if plan.mode is BuildMode.KEEP_TOPICS:
        kept = KeptCounts(run_id=plan.base.run_id, kept=topics.kept, added=topics.added)
        return replace(counts, kept_topics=kept)
    if plan.mode is BuildMode.SAMPLE:
        sample = SampleCounts(fitted=topics.kept, assigned=topics.added)
        return replace(counts, sample=sample)
    return counts


def level_counts(papers: pd.DataFrame, nodes: pd.DataFrame) -> dict[str, object]:
    """Nodes per level, whether areas are a level of their own, and the largest leaf's share
    (a leaf: a subtopic, or a topic without subtopics; outliers are no leaf)."""
    from explorer.build.coherence import level_quality

    real = papers["topic_id"] != node_ids.OUTLIER_ID
    sizes = node_ids.leaf_ids(papers)[real].value_counts()
    count = nodes["level"].value_counts()
    has_areas = node_ids.has_area_level(nodes)
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


def _versions() -> dict[str, str]:
    """What the manifest records as "versions": the interpreter, ours, the packages."""
    return {
        "python": platform.python_version(),
        "explorer": __version__,
        **package_versions(_RECORDED_PACKAGES),
    }
