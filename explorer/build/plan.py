"""The plan of a build: the inputs (with `--add`'s), the build's mode, the embedder, the run id.

Everything here is decided before any model loads. The run id hashes what decides a run's
output: the schema, the code (`PIPELINE_VERSION` and the modelling packages' versions),
the options (`Plan.recorded`, the manifest's `config`), the inputs' contents and the
papers read from them. Same inputs, options and code: same id, and the build answers "up to
date"; `rebuild_reason` says why a run that matches on inputs and options is not reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from explorer import artifacts
from explorer.atomic_files import sha256_file
from explorer.build.cluster import describe as describe_clusterer
from explorer.build.config import BuildConfig
from explorer.build.corpus import Corpus
from explorer.build.models import Embedder
from explorer.build.projection import approximate_method
from explorer.build.sample import sample_params
from explorer.build.sources import detect_format, expand_inputs, read_inputs
from explorer.build.topics import TopicParams
from explorer.manifest import SCHEMA_VERSION

if TYPE_CHECKING:  # keep.py is imported only by a `--keep-topics` build
    from explorer.build.encoder_choice import Choice
    from explorer.build.keep import Base

Log = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default log: planning says nothing."""


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
#  12: labels of a corpus above 100,000 papers read from a stratified sample of about that
#      many (labels.nodes.LABEL_SAMPLE)
#  13: a sample fit's default smallest topic at least 0.04% of the sample; per-paper topic
#      mixes scored in blocks of papers
#  14: BERTopic's keywords and merge tree from each paper's words counted once (every term
#      at least min_df papers use, where it was min_df topics; no punctuation stripped
#      first), not from each topic's abstracts joined and analysed again
#  15: the merge tree's parents named by their topics' top words together (boilerplate out),
#      not by BERTopic's four best c-TF-IDF words
#  16: the vocabulary gains `form` (each word singular): top keywords show one inflection
#  17: topics are the consensus of 16 seeded fits on jittered graphs, subtopics too
#      (consensus.py); a list under 200 papers is grouped by Ward (topics.short_list);
#      nodes gain `stability` (topics and subtopics, from those fits)
#  18: a short list's map keeps each topic together (projection.TARGET_WEIGHT)
#  19: 24 consensus fits, were 16 (consensus.FITS); keyword candidates sorted
#      (topics.sorted_keybert: their set order followed the hash seed)
#  20: areas and subtopics cut from the consensus's own topic ids, before BERTopic numbers
#      the topics (levels.renamed: equal sizes may order areas otherwise); a sample's
#      subtopics keep their stability
#  21: source markup turned into text at ingest (markup.py: HTML, TeX escapes and accents,
#      fused commands, case-protecting braces, citations), so texts and their vectors change
#  22: what is said in passing weighs less (background.REPEATED: the venues' repeat share of a
#      phrase scales its specificity, so vocabulary, top words and labels change); label
#      phrases with a verb, participle or adverb at an end are left out unless the corpus
#      repeats them as a term (labels.ranking.reads_as_term)
#  23: a modifier names nothing alone (background.ALONE: the venues' share of a phrase's uses
#      not right before another word scales its keyword weight, so the vocabulary's
#      specificity changes; a label shows a modifier only inside its whole term)
#  24: bfloat16 runs on AMX where the CPU has it, every batch full and on one thread
#      (embed._bfloat16_batches): on such hosts its vectors, and all after them, change
#  25: on AMX, a bfloat16 batch of short texts has more rows (embed.bfloat16_rows): keyword
#      and short abstracts' vectors there, and all after them, change
#  26: only a topic over 5% of the corpus splits into subtopics (levels.split_decisions); the
#      heterogeneous ones of at least 60 papers stay whole, so their leaves change
#  27: the area count follows the topic count (levels.area_count: one area per five topics,
#      5 to 15), not the best silhouette, so areas change
PIPELINE_VERSION = 27
# Packages whose upgrade can change topics, labels or vectors (the paper's or, through the
# ONNX export, the query's): their versions are in the run id.
MODEL_PACKAGES = (
    "bertopic", "umap-learn", "hdbscan", "scikit-learn", "sentence-transformers",
    "transformers", "tokenizers", "torch", "numpy", "scipy", "numba", "pynndescent", "onnx",
)  # fmt: skip


class BuildMode(Enum):
    """Where a build's topics come from; chosen once, by `choose_mode`."""

    FULL = "full"  # a fit over every paper
    KEEP_TOPICS = "keep-topics"  # the latest run's topics, new papers assigned (keep.py)
    SAMPLE = "sample"  # a fit on a stratified sample, the rest assigned (sample.py)


@dataclass(frozen=True)
class Plan:
    """Everything decided before any heavy work: what to build, and under which run id."""

    config: BuildConfig
    corpus: Corpus
    inputs: list[dict[str, object]]
    mode: BuildMode
    params: TopicParams
    embedder: Embedder
    recorded: dict  # the manifest's "config": every option that decides the output
    code: dict  # pipeline version and model-package versions
    run_id: str
    cache_dir: Path
    progress: bool
    base: Base | None = None  # the run whose topics are kept (BuildMode.KEEP_TOPICS)
    choice: Choice | None = None  # how `auto` chose the precision (None: the user did)


def plan_build(config: BuildConfig, *, cache_dir: Path, progress: bool, log: Log = _quiet) -> Plan:
    """Read the inputs and decide the mode, the encoder and the run id. No model is loaded,
    except by `auto` on a new corpus when this machine has no verdict yet (a probe of a few
    seconds, which `log` announces: encoder_choice.py)."""
    from explorer.build.topics import default_params

    config.validate()
    cache_dir = Path(cache_dir)
    corpus = _read(config)
    inputs = _input_records(config.inputs)
    n_papers = len(corpus)
    # Sized by the corpus (and a corpus too small to model refused) before anything else.
    params = default_params(n_papers, min_topic_size=config.min_topic_size, seed=config.seed)
    mode, base = choose_mode(config, n_papers, cache_dir)
    if base is not None:  # the kept run's parameters describe its topics
        params = TopicParams(**base.params)
    elif mode is BuildMode.SAMPLE:  # the fit sees the sample: the corpus's grain, scaled to it
        params = sample_params(
            n_papers, config.sample_size, min_topic_size=config.min_topic_size, seed=config.seed
        )
    embedder = Embedder.of(config.embedding_model, cache_root=cache_dir)
    precision, choice = _precision(config, embedder, corpus, log)
    embedder = replace(embedder, precision=precision)
    recorded = _recorded(config, params, embedder, mode, base, n_papers)
    code = code_versions()
    return Plan(
        config=config,
        corpus=corpus,
        inputs=inputs,
        mode=mode,
        params=params,
        embedder=embedder,
        recorded=recorded,
        code=code,
        run_id=run_key(recorded, code, inputs, corpus_fingerprint(corpus)),
        cache_dir=cache_dir,
        progress=progress,
        base=base,
        choice=choice,
    )


def with_latest_inputs(config: BuildConfig, cache_dir: Path) -> BuildConfig:
    """`--add`: the inputs of the corpus's latest run, then those given that it lacks; the
    config as it is without `--add`. Run after `validate`, before anything is read."""
    if not config.add:
        return config
    previous = artifacts.open_run(cache_dir, config.name, verify=False)
    known = [i.path for i in previous.manifest.inputs]
    inputs = known + [p for p in config.inputs if p not in known]
    return replace(config, inputs=tuple(inputs))


def choose_mode(
    config: BuildConfig, n_papers: int, cache_dir: Path
) -> tuple[BuildMode, Base | None]:
    """The build's mode, and for `--keep-topics` the run it keeps; one line when an option
    cannot go with it."""
    if config.keep_topics:
        from explorer.build.keep import load_base

        base = load_base(cache_dir, config.name)
        config.check_base(base)
        return BuildMode.KEEP_TOPICS, base
    if config.fits_on_sample(n_papers):
        return BuildMode.SAMPLE, None
    return BuildMode.FULL, None


def _recorded(
    config: BuildConfig,
    params: TopicParams,
    embedder: Embedder,
    mode: BuildMode,
    base: Base | None,
    n_papers: int,
) -> dict:
    """The manifest's `config`: every option that decides the output, hashed into the run id.
    Keys that came with later options are there only when those apply, so that the run ids
    of builds without them never change."""
    from explorer.build.models import model_id

    recorded = {
        "embedding_model": config.embedding_model,
        "embedding_model_id": model_id(config.embedding_model),
        "embedding_weights": embedder.weights,
        "embedding_precision": embedder.precision,
        "seed": config.seed,
        "min_topic_size": config.min_topic_size,
        "stability": config.stability,
        "params": params.as_dict(),
        "read_options": asdict(config.read_options),
    }
    if mode is BuildMode.KEEP_TOPICS:
        recorded["keep_topics_of"] = base.run_id
    elif mode is BuildMode.SAMPLE:  # a threshold the corpus is below changes nothing
        recorded["sample"] = {"above": config.sample_above, "size": config.sample_size}
    if method := approximate_method(n_papers, config.exact_neighbours_up_to):
        recorded["neighbours"] = method  # exact graphs leave ids as they were
    if (clusterer := describe_clusterer(config.clusterer)) is not None:
        recorded["clusterer"] = clusterer
    return recorded


def _read(config: BuildConfig) -> Corpus:
    if config.engine == "ray":
        from explorer.build import ray_engine

        return ray_engine.read_inputs(config.inputs, config.read_options)
    return read_inputs(config.inputs, config.read_options)


def _input_records(inputs: tuple[str, ...]) -> list[dict[str, object]]:
    return [
        {
            "path": str(path),
            "format": detect_format(path),
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
        }
        for path in expand_inputs(inputs)
    ]


def _precision(
    config: BuildConfig, embedder: Embedder, corpus: Corpus, log: Log
) -> tuple[str, Choice | None]:
    """The precision to embed in, and how `auto` chose it (None when the user forced one).

    'auto' keeps the precision of the corpus's latest run, whose embeddings are cached, so a
    re-fit or an added paper never re-embeds the rest; a new corpus gets the encoder this
    machine measured fastest (encoder_choice.decide).
    """
    from explorer.build.encoder_choice import Choice, decide
    from explorer.build.models import resolve_precision
    from explorer.build.settings import PRECISIONS

    if config.embedding_precision != "auto":
        return resolve_precision(config.embedding_precision), None
    previous = artifacts.read_prior_run(embedder.cache_root, config.name)
    if previous is not None and previous.embedding_precision in PRECISIONS:
        kept = previous.embedding_precision
        return kept, Choice(kept, {}, f"kept from run {previous.run_id}")
    texts = [paper.text for paper in corpus.papers]
    choice = decide(embedder, texts, engine=config.engine, log=log)
    return choice.precision, choice


def package_versions(names: tuple[str, ...]) -> dict[str, str]:
    """The installed version of each of `names` (those not installed left out)."""
    versions = {}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def code_versions() -> dict[str, object]:
    """What, besides inputs and options, decides a run's output: part of its id."""
    return {"pipeline_version": PIPELINE_VERSION, "packages": package_versions(MODEL_PACKAGES)}


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
        "schema": SCHEMA_VERSION,
        "code": code,
        "config": recorded,
        "inputs": sorted(str(i["sha256"]) for i in inputs),
        "papers": papers,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def rebuild_reason(previous: artifacts.PriorRun, plan: Plan) -> str | None:
    """Why the corpus's latest run is not reused although it was built from the same
    inputs and options, when that is the reason (older code or another model); else None."""
    version = plan.code["pipeline_version"]
    if previous.pipeline_version != version:
        return (
            f"its run {previous.run_id} was made by pipeline version "
            f"{previous.pipeline_version}; this is {version}"
        )
    old = previous.versions
    changed = [
        f"{name} {old.get(name, '?')} -> {version}"
        for name, version in plan.code["packages"].items()
        if old.get(name) != version
    ]
    if changed:
        return f"its run {previous.run_id} was made with " + ", ".join(changed)
    if previous.embedding_weights != plan.embedder.weights:
        return f"the embedding model's weights changed since run {previous.run_id}"
    return None
