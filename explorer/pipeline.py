"""build(config) -> a published run: read, embed, fit, project, summarise, write, publish.

Writes go to a temporary sibling directory; the manifest is written last and the
directory renamed into place, so a killed build never leaves a run that looks complete.
A per-corpus lock keeps two builds of one corpus from interleaving.
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
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from explorer import __version__, artifacts
from explorer.errors import ArtifactError, BuildLockedError
from explorer.memory import release_freed_memory
from explorer.sources import ReadOptions, detect_format, expand_inputs, read_inputs

TMP_PREFIX = ".tmp-"
_VERSIONED = (
    "bertopic", "umap-learn", "hdbscan", "sentence-transformers", "torch",
    "scikit-learn", "numpy", "pandas", "pyarrow",
)  # fmt: skip


@dataclass(frozen=True)
class BuildConfig:
    """What the user asked for; together with the inputs' hashes it names the run."""

    name: str
    inputs: tuple[str, ...]
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_precision: str = "auto"  # auto | float32 | bfloat16 (explorer.embed.PRECISIONS)
    seed: int = 42
    min_topic_size: int | None = None
    read_options: ReadOptions = field(default_factory=ReadOptions)


@dataclass
class BuildResult:
    run: artifacts.Run
    reused: bool


def prepare_environment(cache_dir: Path) -> None:
    """Settings the modelling stack reads at import time; set before importing it."""
    os.environ.setdefault("NUMBA_CACHE_DIR", str((Path(cache_dir) / "numba").resolve()))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


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


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "explorer": __version__}
    for name in _VERSIONED:
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


def _run_id(config: dict, inputs: list[dict[str, object]]) -> str:
    key = {
        "schema": artifacts.SCHEMA_VERSION,
        "config": config,
        "inputs": sorted(str(i["sha256"]) for i in inputs),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


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
    corpus_dir = cache_dir / config.name
    timer = StageTimer(log)

    # No "starting" line for reading: bad input must leave exactly one line on stderr.
    with timer.stage("read", None):
        corpus = read_inputs(config.inputs, config.read_options)
        inputs = _input_records(config.inputs)
    from explorer.topics import default_params

    params = default_params(len(corpus), min_topic_size=config.min_topic_size, seed=config.seed)
    precision = _precision(config, cache_dir)
    recorded = {
        "embedding_model": config.embedding_model,
        "seed": config.seed,
        "min_topic_size": config.min_topic_size,
        "params": params.as_dict(),
        "read_options": asdict(config.read_options),
    }
    if precision != "float32":  # float32 runs keep the ids they had before precision existed
        recorded["embedding_precision"] = precision
    run_id = _run_id(recorded, inputs)

    with corpus_lock(corpus_dir):
        _clean_stale(corpus_dir)
        if (corpus_dir / run_id / artifacts.MANIFEST).is_file():
            artifacts.atomic_write_text(corpus_dir / artifacts.LATEST, run_id)
            log(f"Up to date: run {run_id} already built from these inputs and options.")
            return BuildResult(run=artifacts.open_run(cache_dir, config.name, run_id), reused=True)
        prepare_environment(cache_dir)
        tmp = corpus_dir / f"{TMP_PREFIX}{run_id}-{os.getpid()}"
        tmp.mkdir(parents=True)
        try:
            manifest = _compute_and_write(
                corpus, config, params, recorded, inputs, run_id, tmp, cache_dir, timer, progress
            )
            final = corpus_dir / run_id
            if final.exists():  # an incomplete run of the same id (no manifest): replace it
                shutil.rmtree(final)
            os.replace(tmp, final)
            artifacts.atomic_write_text(corpus_dir / artifacts.LATEST, run_id)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    log(f"Published run {run_id} of {config.name!r} in {sum(manifest['timings'].values()):.1f} s.")
    return BuildResult(run=artifacts.open_run(cache_dir, config.name, run_id), reused=False)


def _precision(config: BuildConfig, cache_dir: Path) -> str:
    """The precision to embed in.

    'auto' keeps the precision of the corpus's latest run, whose embeddings are cached, so a
    re-fit or an added paper never re-embeds the rest; a new corpus gets bfloat16 where the
    CPU has it natively, else float32.
    """
    from explorer.embed import PRECISIONS, resolve_precision

    if config.embedding_precision == "auto":
        run_id = artifacts.latest_run_id(cache_dir, config.name)
        if run_id is not None:
            with contextlib.suppress(ArtifactError):
                run = artifacts.read_manifest(cache_dir / config.name / run_id)
                kept = run.get("config", {}).get("embedding_precision", "float32")
                if kept in PRECISIONS:
                    return kept
    return resolve_precision(config.embedding_precision)


def _compute_and_write(
    corpus, config, params, recorded, inputs, run_id, tmp, cache_dir, timer, progress
) -> dict:
    from explorer import summarise as S
    from explorer.embed import embed_texts, model_id
    from explorer.project import knn_graph, project_2d
    from explorer.topics import OUTLIER, fit_topics

    papers = pd.DataFrame([asdict(p) for p in corpus.papers])
    papers["year"] = papers["year"].astype("Int64")
    docs = [p.text for p in corpus.papers]
    ids = papers["paper_id"].tolist()

    precision = recorded.get("embedding_precision", "float32")
    with timer.stage(
        "embed", f"Embedding {len(docs)} abstracts with {config.embedding_model} ({precision})"
    ):
        embeddings, n_new = embed_texts(
            docs,
            model_name=config.embedding_model,
            cache_root=cache_dir,
            progress=progress,
            precision=precision,
        )
    with timer.stage("neighbors", "Finding nearest neighbours"):
        graph = knn_graph(embeddings, max(params.n_neighbors, S.N_SIMILAR + 1))
    with timer.stage("topics", "Fitting topics (UMAP 5-D, HDBSCAN, c-TF-IDF, KeyBERT keywords)"):
        fit = fit_topics(
            docs,
            embeddings,
            graph,
            params,
            model_name=config.embedding_model,
            cache_root=cache_dir,
            precision=precision,
        )
    with timer.stage("projection", "Projecting to 2-D for the map"):
        coords = project_2d(
            embeddings,
            graph,
            n_neighbors=params.n_neighbors,
            seed=params.seed,
            cache_root=cache_dir,
        )
    with timer.stage("summaries", "Summarising topics, neighbours and keyword statistics"):
        labels = fit.labels
        topic_ids = np.array(sorted(t for t in set(labels.tolist()) if t != OUTLIER))
        centroids = S.topic_centroids(embeddings, labels, topic_ids)
        doc_topics, assigned = S.doc_topic_distribution(embeddings, labels, centroids, topic_ids)
        doc_topics.insert(0, "paper_id", np.asarray(ids, dtype=object)[doc_topics.pop("doc")])
        hierarchy = S.hierarchy_table(fit.model, docs, len(topic_ids), progress=progress)
        parents = S.direct_parents(hierarchy)
        representatives = S.representative_papers(embeddings, labels, centroids, topic_ids, ids)
        similarity = (centroids @ centroids.T).astype(np.float32)
        positions = S.classical_mds(similarity)

        position = {int(t): i for i, t in enumerate(topic_ids)}
        topic_rows = []
        for topic in [*topic_ids.tolist(), *([OUTLIER] if (labels == OUTLIER).any() else [])]:
            words = fit.model.get_topic(topic) or []
            members = labels == topic
            row = {
                "topic_id": topic,
                "label": "Outliers" if topic == OUTLIER else S.topic_label([w for w, _ in words]),
                "size": int(members.sum()),
                "share": float(members.mean()),
                "keywords": [w for w, _ in words],
                "keyword_weights": [float(s) for _, s in words],
                "representative_ids": representatives.get(topic, []),
                "parent_id": parents.get(topic),
                "map_x": float(np.median(coords[members, 0])),
                "map_y": float(np.median(coords[members, 1])),
                "dist_x": float(positions[position[topic], 0]) if topic != OUTLIER else None,
                "dist_y": float(positions[position[topic], 1]) if topic != OUTLIER else None,
            }
            topic_rows.append(row)
        topics = pd.DataFrame(topic_rows)
        topics["parent_id"] = topics["parent_id"].astype("Int64")
        label_of = dict(zip(topics["topic_id"], topics["label"], strict=True))

        papers["topic_id"] = labels
        papers["topic_label"] = [label_of[t] for t in labels]
        papers["probability"] = assigned
        papers["x"] = coords[:, 0]
        papers["y"] = coords[:, 1]
        matrix, vocabulary = S.document_terms(docs, min_df=params.min_df)
        keywords = S.keyword_stats(matrix, vocabulary, papers)
        vocab = pd.DataFrame(
            {
                "term_id": np.arange(len(vocabulary), dtype=np.int32),
                "term": vocabulary,
                "df": np.asarray(matrix.sum(axis=0)).ravel().astype(np.int32),
            }
        )
        neighbors = S.similar_papers(graph, ids)
        per_topic = S.topic_stats(papers)

    with timer.stage("write", "Writing artifacts"):
        for name, frame in {
            "papers": papers,
            "topics": topics,
            "doc_topics": doc_topics,
            "neighbors": neighbors,
            "hierarchy": hierarchy,
            "keywords": keywords,
            "topic_stats": per_topic,
            "vocab": vocab,
        }.items():
            artifacts.write_table(tmp, name, frame)
        artifacts.write_array(tmp, "topic_similarity", similarity)
        artifacts.write_array(tmp, "doc_terms_indptr", matrix.indptr.astype(np.int64))
        artifacts.write_array(tmp, "doc_terms_indices", matrix.indices.astype(np.int32))
        # Unit-length float16: semantic search needs only cosines, at half the bytes.
        artifacts.write_array(tmp, "embeddings", S.unit_float16(embeddings))
        fit.model.save(
            tmp / artifacts.MODEL_DIR,
            serialization="safetensors",
            save_ctfidf=True,
            save_embedding_model=model_id(config.embedding_model),
        )

    n_outliers = int((labels == OUTLIER).sum())
    messages = []
    if len(topic_ids) < 2:
        messages.append(
            "Only one topic was found: the abstracts are too few or too similar to separate; "
            "add papers or lower --min-topic-size."
        )
    years = sorted(int(y) for y in papers["year"].dropna().unique())
    manifest = {
        "schema_version": artifacts.SCHEMA_VERSION,
        "corpus": config.name,
        "run_id": run_id,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": {
            **recorded,
            "embedding_model_id": model_id(config.embedding_model),
            "embedding_precision": precision,
        },
        "inputs": inputs,
        "counts": {
            "papers": len(papers),
            "skipped": len(corpus.skipped),
            "merged": len(corpus.merged),
            "topics": len(topic_ids),
            "outliers": n_outliers,
            "outlier_share": round(n_outliers / len(papers), 4),
            "clustered_share": round(fit.clustered / len(papers), 4),
            "outlier_threshold": round(fit.outlier_threshold, 4),
            "embedded_new": n_new,
            "embedded_cached": len(set(docs)) - n_new,
            "vocabulary": len(vocabulary),
            "years": years,
            "venues": sorted(v for v in papers["venue"].unique() if v),
        },
        "skipped_examples": corpus.skipped[:20],
        "merged_examples": [list(pair) for pair in corpus.merged[:20]],
        "messages": messages,
        "timings": timer.seconds,
        "versions": _versions(),
        "files": artifacts.file_inventory(tmp),
    }
    artifacts.atomic_write_text(tmp / artifacts.MANIFEST, json.dumps(manifest, indent=2))
    return manifest
