"""What `explorer build` and `explorer info` print: a run's counts, levels, coherence,
stability and timings from its manifest, and which curation changes a new run carries.
"""

from __future__ import annotations

from explorer import artifacts
from explorer.errors import ArtifactError
from explorer.manifest import Counts, LevelCounts


def info_summary(run: artifacts.Run) -> dict:
    """The subset of the manifest that `info` reports."""
    m = run.manifest
    counts = m.counts
    return {
        "corpus": run.corpus,
        "run_id": run.run_id,
        "created_at": m.created_at,
        "documents": counts.papers,
        "topics": counts.topics,
        "levels": counts.levels.to_json(),
        "outliers": counts.outliers,
        "outlier_share": counts.outlier_share,
        "years": list(counts.years),
        "venues": list(counts.venues),
        "embedding_model": m.config.embedding_model_id,
        "embedding_precision": m.config.embedding_precision,
        "encoder_choice": m.encoder_choice,
        "params": m.config.params,
        "timings": m.timings,
        "counts": counts.to_json(),
        "path": str(run.path),
    }


def print_info(run: artifacts.Run, summary: dict) -> None:
    """`info`'s text: `summary` (info_summary) with the run's levels and coherence."""
    print(f"{summary['corpus']} (run {summary['run_id']}, built {summary['created_at']})")
    print(
        f"  documents: {summary['documents']}  topics: {summary['topics']}  "
        f"outliers: {summary['outliers']} ({summary['outlier_share']:.1%})"
    )
    print(
        f"  years: {', '.join(map(str, summary['years'])) or '-'}  venues: {', '.join(summary['venues']) or '-'}"
    )
    print("  levels: " + _levels_line(run.manifest.counts.levels))
    quality = _quality_line(run.manifest.counts.levels)
    if quality:
        print("  coherence: " + quality)
    print(f"  model: {summary['embedding_model']} ({summary['embedding_precision']})")
    for line in _choice_line(run.manifest.encoder_choice):
        print(line)
    print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in summary["timings"].items()))


def _choice_line(record: dict | None) -> list[str]:
    """How `auto` chose the encoder, as one line, or none."""
    from explorer.build.encoder_choice import Choice, describe

    try:
        choice = Choice(str(record["precision"]), dict(record["rates"]), str(record["how"]))
    except (TypeError, KeyError, ValueError):
        return []  # forced by the user, or a record this version cannot read
    return [f"  encoder: {describe(choice)}"]


def _levels_line(levels: LevelCounts) -> str:
    return (
        f"{levels.areas} areas, {levels.topics} topics, {levels.subtopics} subtopics; "
        f"largest leaf {levels.largest_leaf_share:.1%} of the papers"
    )


def _quality_line(levels: LevelCounts) -> str:
    """Mean NPMI coherence, topic diversity and low-coherence nodes (NPMI < 0) per level."""
    parts = []
    for level, q in levels.quality.items():
        npmi = "-" if q.coherence is None else f"{q.coherence:.3f}"
        parts.append(
            f"{level}s NPMI {npmi}, diversity {q.diversity:.2f}, {q.low_coherence} below 0"
        )
    return "; ".join(parts)


def _stability_line(counts: Counts) -> list[str]:
    st = counts.stability
    if not st:
        return []
    return [
        f"  stability: {st.refits} consensus fits agreeing at mean ARI {st.mean_ari:.2f}; "
        f"median topic {st.median:.2f}, {st.below_half} topics below 0.5"
    ]


def _assigned_line(counts: Counts) -> list[str]:
    """How a run without a fit over every paper got its topics (kept, or a sample's)."""
    if kept := counts.kept_topics:
        return [
            f"  topics kept from run {kept.run_id}: {kept.kept} papers kept their place, "
            f"{kept.added} new assigned"
        ]
    if sample := counts.sample:
        return [
            f"  fitted on a sample of {sample.fitted} papers, {sample.assigned} assigned "
            "to its topics"
        ]
    return []


def print_build_summary(run: artifacts.Run, reused: bool) -> None:
    m = run.manifest
    c = m.counts
    lines = [
        f"Corpus {run.corpus!r}, run {run.run_id}{' (reused)' if reused else ''}: {run.path}",
        f"  papers: {c.papers} kept, {c.skipped} skipped, {c.merged} duplicates merged",
        f"  embedded: {c.embedded_new} new, {c.embedded_cached} from cache"
        f" ({m.config.embedding_precision})",
        *_choice_line(m.encoder_choice),
        f"  topics: {c.topics}, outliers: {c.outliers} ({c.outlier_share:.1%})",
        "  levels: " + _levels_line(c.levels),
        *[f"  coherence: {q}" for q in [_quality_line(c.levels)] if q],
        *_stability_line(c),
        *_assigned_line(c),
        "  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in m.timings.items()),
    ]
    lines += [f"  note: {msg}" for msg in m.messages]
    print("\n".join(lines))


def print_curation_carried(run: artifacts.Run) -> None:
    """Which of the corpus's curation changes this run carries, and which it cannot."""
    from explorer import curation

    try:
        changes = curation.read(run.path.parents[1], run.corpus)
    except ArtifactError as exc:  # the run is built and published: say so, do not fail it
        print(f"  curation: not applied: {exc}")
        return
    if not curation.active(changes):
        return
    curated = curation.of_run(run, changes)
    print(f"  curation: {curated.applied} changes carried over", end="")
    if not curated.unmatched:
        print()
        return
    print(f", {len(curated.unmatched)} not matched in this run (shown on the Curate page):")
    for change in curated.unmatched:
        print("    " + curation.describe(change))
    if not run.manifest.counts.kept_topics:
        print("    (the refit regrouped these topics; --keep-topics adds papers without refitting)")
