"""BibTeX (PMLR proceedings style) with `abstract` fields, parsed by bibtexparser v2."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.build.corpus import Paper, derive_title
from explorer.build.sources.base import (
    ReadOptions,
    SourceResult,
    parse_year,
    read_text_file,
    venue_year,
)

_MATH_RE = re.compile(r"(\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\))", re.S)
_KEY_RE = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s]+)")
# Book titles of the proceedings PMLR publishes, to the short names users filter by.
_BOOKTITLES = {
    "international conference on machine learning": "ICML",
    "artificial intelligence and statistics": "AISTATS",
    "neural information processing systems": "NeurIPS",
    "conference on learning theory": "COLT",
    "uncertainty in artificial intelligence": "UAI",
    "conference on robot learning": "CoRL",
    "learning representations": "ICLR",
}


def strip_braces(text: str) -> str:
    """Drop TeX grouping braces outside math, so `{B}ayesian` reads `Bayesian`, `$O(\\sqrt{T})$` stays."""
    parts = _MATH_RE.split(text)
    for i in range(0, len(parts), 2):  # even indices are outside math
        parts[i] = parts[i].replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _authors(value: str) -> str:
    """BibTeX 'Last, First and Other, Name' as 'First Last; Name Other'."""
    names = []
    for name in re.split(r"\s+and\s+", strip_braces(value)):
        if "," in name:
            last, _, first = name.partition(",")
            name = f"{first.strip()} {last.strip()}"
        if name.strip():
            names.append(name.strip())
    return "; ".join(names)


def _venue(fields: dict[str, str], path: Path) -> str:
    booktitle = strip_braces(fields.get("booktitle", "") or fields.get("journal", "")).lower()
    for needle, short in _BOOKTITLES.items():
        if needle in booktitle:
            return short
    return venue_year(path.stem)[0] or strip_braces(fields.get("booktitle", ""))


def read_bibtex(path: Path, options: ReadOptions) -> SourceResult:
    """Entries with an abstract become papers; broken entries are skipped with their key."""
    import bibtexparser

    library = bibtexparser.parse_string(read_text_file(path))
    result = SourceResult()
    for block in library.failed_blocks:
        match = _KEY_RE.search(block.raw or "")
        key = match.group(1) if match else "?"
        result.skipped.append(f"{path}: line {block.start_line + 1}: broken entry {key!r} skipped")
    for entry in library.entries:
        fields = {k.lower(): str(v) for k, v in entry.fields_dict.items() for v in [v.value]}
        abstract = strip_braces(fields.get("abstract", ""))
        if not abstract:
            result.skipped.append(f"{path}: entry {entry.key!r}: no abstract")
            continue
        title = strip_braces(fields.get("title", ""))
        result.papers.append(
            Paper(
                paper_id=entry.key,
                title=title or derive_title(abstract),
                title_derived=not title,
                abstract=abstract,
                authors=_authors(fields.get("author", "")),
                venue=options.venue or _venue(fields, path),
                year=options.year or parse_year(fields.get("year")) or venue_year(path.stem)[1],
                status="",
                track="",
                url=fields.get("openreview") or fields.get("url") or fields.get("pdf", ""),
                code_url=fields.get("software") or fields.get("code", ""),
                source_file=str(path),
            )
        )
    return result
