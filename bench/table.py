"""bench/README.md's results table, written from bench/results/*.json: `table` assembles it
in the README's numbering from the row modules (bench/table_builds.py, table_serving.py,
table_scale.py, table_quality.py), and `report` writes it between the README's markers.
"""

from __future__ import annotations

from bench.common import ROOT
from bench.load import LOAD_RUNS
from bench.table_builds import cold_build_rows, embedding_rows, refit_rows
from bench.table_cells import stored
from bench.table_quality import (
    quality_rows,
    reproducibility_rows,
    short_lists_row,
    subtopic_npmi_row,
    subtopic_rules_row,
)
from bench.table_scale import (
    engines_row,
    generator_row,
    neighbours_rows,
    sample_fit_rows,
    sample_quality_rows,
    scale_row,
)
from bench.table_serving import (
    curation_row,
    load_row,
    onnx_row,
    query_flood_row,
    viewer_rows,
    withstand_rows,
)

TABLE_START = "<!-- results:start -->"
TABLE_END = "<!-- results:end -->"


def table() -> str:
    """bench/README.md's results table: one row per target, in the README's numbering."""
    rows = [
        "| target | ours | stock | ratio | result | measured |",
        "|---|---|---|---|---|---|",
    ]
    walls, rss_rows = cold_build_rows()
    rows += walls + embedding_rows() + refit_rows() + rss_rows + viewer_rows()
    rows += _reference_rows()
    return "\n".join(rows + quality_rows())


def _reference_rows() -> list[str]:
    """Target 7 (load) and the benchmarks after it, each row when its result exists."""
    rows: list[str] = []
    for letter, (name, label, target, _) in zip("abcde", LOAD_RUNS, strict=True):
        if result := stored(name):
            rows.append(load_row(result, f"7{letter}. {label}", target))
    if result := stored("compare-base"):
        label = f"7a against the code before issue 14 ({result['app']}), same session (reference)"
        rows.append(load_row(result, label, False))
    if result := stored("load-browser"):
        label = f"load (reference, client-bound): {result['sessions']} Chromium sessions"
        rows.append(load_row(result, label, False))
    if result := stored("onnx_encoder"):
        rows.append(onnx_row(result))
    if result := stored("curation"):
        rows.append(curation_row(result))
    if result := stored("withstand"):
        rows += withstand_rows(result)
    if result := stored("query_flood"):
        rows.append(query_flood_row(result))
    if result := stored("engines"):
        rows.append(engines_row(result))
    if result := stored("sample-fit"):
        rows += sample_fit_rows(result)
    if result := stored("sample-quality"):
        rows += sample_quality_rows(result)
    generators = []
    for size in ("100000", "1000000"):
        for name in (f"scale-{size}", f"scale-{size}-full"):
            if (result := stored(name)) and "build" in result:
                rows.append(scale_row(result))
        # The generator's checks: a --checks-only run's, else those before the build.
        if result := stored(f"scale-{size}-checks") or stored(f"scale-{size}"):
            generators.append(
                generator_row(result["papers"], result["generator"], result["when"][:10])
            )
    if result := stored("reproducibility"):
        rows += reproducibility_rows(result)
    if result := stored("short-lists"):
        rows.append(short_lists_row(result))
    if result := stored("subtopic-npmi"):
        rows.append(subtopic_npmi_row(result))
    if result := stored("subtopic-rules"):
        rows.append(subtopic_rules_row(result))
    if result := stored("neighbours"):
        rows += neighbours_rows(result)
    return rows + generators


def report() -> None:
    readme = ROOT / "bench" / "README.md"
    text = readme.read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END)
    readme.write_text(text[: start + len(TABLE_START)] + "\n" + table() + "\n" + text[end:])
    print(table())
