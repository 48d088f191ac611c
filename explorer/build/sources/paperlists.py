"""Paper Copilot "paperlists" JSON: an array of paper objects, venue and year in the file name."""

from __future__ import annotations

import json
from pathlib import Path

from explorer.build.corpus import Paper, derive_title
from explorer.build.sources.base import (
    ReadOptions,
    SourceResult,
    clean_field,
    derive_paper_id,
    read_text_file,
    venue_year,
)
from explorer.errors import InputError


def _authors(value: object) -> str:
    """Paper Copilot separates authors with ';'; we keep them '; '-joined for display."""
    if isinstance(value, list):
        names = [clean_field(v) for v in value]
    else:
        names = clean_field(value).split(";")
    return "; ".join(n.strip() for n in names if n.strip())


def parse_json_document(path: Path, text: str) -> object:
    """json.loads with the file, line and column in the error message."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})"
        ) from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply") from None


def read_paperlists(path: Path, options: ReadOptions) -> SourceResult:
    """Papers from one paperlists file; entries without an abstract are skipped and counted."""
    data = parse_json_document(path, read_text_file(path))
    if not isinstance(data, list):
        raise InputError(
            f"{path}: expected a JSON array of paper objects (Paper Copilot format), "
            f"got a JSON {type(data).__name__}"
        )
    venue, year = venue_year(path.stem)
    venue = options.venue or venue
    year = options.year or year
    result = SourceResult()
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise InputError(
                f"{path}: entry {index}: expected an object, got {type(entry).__name__}"
            )
        abstract = clean_field(entry.get("abstract"))
        source_id = clean_field(entry.get("id"))
        if not abstract:
            result.skipped.append(f"{path}: entry {index} (id {source_id or '?'}): no abstract")
            continue
        title = clean_field(entry.get("title"))
        result.papers.append(
            Paper(
                paper_id=derive_paper_id(venue, year, source_id, title, abstract),
                title=title or derive_title(abstract),
                title_derived=not title,
                abstract=abstract,
                authors=_authors(entry.get("author")),
                venue=venue,
                year=year,
                status=clean_field(entry.get("status")),
                track=clean_field(entry.get("track")),
                url=clean_field(entry.get("site")) or clean_field(entry.get("pdf")),
                code_url=clean_field(entry.get("github")),
                source_file=str(path),
            )
        )
    return result
