"""CSV, JSONL and Parquet: one paper per row, columns named by options or detected."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from explorer.build.corpus import Paper, derive_title
from explorer.build.sources.base import (
    ReadOptions,
    SourceResult,
    clean_field,
    derive_paper_id,
    parse_year,
    read_text_file,
    venue_year,
)
from explorer.build.sources.paperlists import parse_json_document
from explorer.errors import InputError

# Column names tried, in order, when the user names none.
_DETECT = {
    "text": ("abstract", "text", "summary"),
    "title": ("title",),
    "year": ("year",),
    "class": ("status", "decision", "class"),
    "id": ("paper_id", "id"),
    "authors": ("authors", "author"),
    "venue": ("venue", "conference"),
    "track": ("track",),
    "url": ("url", "site", "pdf"),
    "code_url": ("code_url", "github", "code"),
}


def _pick(
    columns: Iterable[str], wanted: str | None, role: str, path: Path, required: bool
) -> str | None:
    columns = list(columns)
    if wanted is not None:
        if wanted not in columns:
            shown = ", ".join(columns[:20]) or "none"
            raise InputError(f"{path}: no column {wanted!r} for the {role} (columns: {shown})")
        return wanted
    lowered = {c.lower(): c for c in columns}
    for name in _DETECT[role]:
        if name in lowered:
            return lowered[name]
    if required:
        shown = ", ".join(columns[:20]) or "none"
        raise InputError(
            f"{path}: no abstract column found (columns: {shown}); name it with --text-column"
        )
    return None


def rows_to_papers(
    rows: Iterable[Mapping[str, object]], columns: list[str], path: Path, options: ReadOptions
) -> SourceResult:
    """Map rows to papers; rows with an empty text cell are skipped and counted."""
    col = {
        "text": _pick(columns, options.text_column, "text", path, required=True),
        "title": _pick(columns, options.title_column, "title", path, required=False),
        "year": _pick(columns, options.year_column, "year", path, required=False),
        "class": _pick(columns, options.class_column, "class", path, required=False),
    }
    for role in ("id", "authors", "venue", "track", "url", "code_url"):
        col[role] = _pick(columns, None, role, path, required=False)
    file_venue, file_year = venue_year(path.stem)
    result = SourceResult()
    for index, row in enumerate(rows):

        def get(role: str, row: Mapping[str, object] = row) -> str:
            name = col[role]
            return clean_field(row.get(name)) if name is not None else ""

        abstract = get("text")
        if not abstract:
            result.skipped.append(f"{path}: row {index + 1}: empty {col['text']!r}")
            continue
        title = get("title")
        venue = options.venue or get("venue") or file_venue
        year = options.year or parse_year(get("year")) or file_year
        result.papers.append(
            Paper(
                paper_id=derive_paper_id(venue, year, get("id"), title, abstract),
                title=title or derive_title(abstract),
                title_derived=not title,
                abstract=abstract,
                authors=get("authors"),
                venue=venue,
                year=year,
                status=get("class"),
                track=get("track"),
                url=get("url"),
                code_url=get("code_url"),
                source_file=str(path),
            )
        )
    return result


def read_csv(path: Path, options: ReadOptions) -> SourceResult:
    """A CSV with a header row; every cell is read as text."""
    import csv
    import io

    text = read_text_file(path)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        columns = list(reader.fieldnames or [])
        rows = list(reader)
    except csv.Error as exc:
        raise InputError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    return rows_to_papers(rows, columns, path, options)


def read_jsonl(path: Path, options: ReadOptions) -> SourceResult:
    """One JSON object per line; blank lines are allowed."""
    rows: list[dict[str, object]] = []
    columns: dict[str, None] = {}
    for number, line in enumerate(read_text_file(path).splitlines(), start=1):
        if not line.strip():
            continue
        row = parse_json_document(path, line)
        if not isinstance(row, dict):
            raise InputError(
                f"{path}: line {number}: expected a JSON object, got {type(row).__name__}"
            )
        rows.append(row)
        columns.update(dict.fromkeys(row))
    return rows_to_papers(rows, list(columns), path, options)


def read_parquet(path: Path, options: ReadOptions) -> SourceResult:
    """A Parquet table; read with pyarrow so no pandas object pickling is involved."""
    import pyarrow.lib
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pyarrow.lib.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
    return rows_to_papers(table.to_pylist(), table.column_names, path, options)
