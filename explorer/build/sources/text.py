"""The seed text format: a header line naming the list, then one abstract per paragraph."""

from __future__ import annotations

from pathlib import Path

from explorer.build.corpus import Paper, content_id, derive_title
from explorer.build.sources.base import ReadOptions, SourceResult, read_text_file, venue_year

# A first paragraph counts as the list's header when it is one short line.
_HEADER_MAX_CHARS = 200


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line number, joined text) for each blank-line separated paragraph."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.strip())
        elif current:
            out.append((start, " ".join(current)))
            current = []
    if current:
        out.append((start, " ".join(current)))
    return out


def read_text(path: Path, options: ReadOptions) -> SourceResult:
    """Abstracts from a seed-format chunk file; venue/year from its header or its folder name."""
    paragraphs = _paragraphs(read_text_file(path))
    header = ""
    if len(paragraphs) > 1:
        first = paragraphs[0][1]
        if len(first) <= _HEADER_MAX_CHARS and "\n" not in first and not first.endswith("."):
            header = first
            paragraphs = paragraphs[1:]
    venue, year = venue_year(header)
    if not venue:
        venue, year = venue_year(path.parent.name)
    venue = options.venue or venue
    year = options.year or year
    result = SourceResult()
    for _line, paragraph in paragraphs:
        result.papers.append(
            Paper(
                paper_id=content_id(venue, str(year or ""), paragraph),
                title=derive_title(paragraph),
                title_derived=True,
                abstract=paragraph,
                venue=venue,
                year=year,
                source_file=str(path),
            )
        )
    return result
