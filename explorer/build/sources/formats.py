"""The input formats, declared once: name, suffixes, reader and a one-line description.

The readers' dispatch (`explorer.build.sources`), `explorer fetch`'s file names and the
`explorer build` help all read this table, so a new format is one row here (docs/architecture.md,
"Where a change goes"). Standard library only, like every reader it names: importing it loads
no model package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.build.sources.base import ReadOptions, SourceResult
from explorer.build.sources.bibtex import read_bibtex
from explorer.build.sources.paperlists import read_paperlists
from explorer.build.sources.tabular import read_csv, read_jsonl, read_parquet
from explorer.build.sources.text import read_text

Reader = Callable[[Path, ReadOptions], SourceResult]


@dataclass(frozen=True)
class InputFormat:
    """One format: its first suffix is the one `fetch` saves a download of it with."""

    name: str
    suffixes: tuple[str, ...]
    reader: Reader
    description: str


FORMATS: tuple[InputFormat, ...] = (
    InputFormat("text", (".txt",), read_text,
                "a header line naming the list, then one abstract per paragraph"),
    InputFormat("paperlists", (".json",), read_paperlists,
                "Paper Copilot's JSON array of papers, venue and year in the file name"),
    InputFormat("bibtex", (".bib",), read_bibtex, "BibTeX entries with an abstract field"),
    InputFormat("csv", (".csv", ".tsv"), read_csv, "a table with a header row, one paper a row"),
    InputFormat("jsonl", (".jsonl", ".ndjson"), read_jsonl, "one JSON object per line"),
    InputFormat("parquet", (".parquet",), read_parquet, "a Parquet table, one paper a row"),
)  # fmt: skip

READERS: dict[str, Reader] = {f.name: f.reader for f in FORMATS}
SUFFIXES: dict[str, str] = {suffix: f.name for f in FORMATS for suffix in f.suffixes}


def suffix_of(name: str) -> str:
    """The suffix a file of this format is saved with (its first)."""
    return next(f.suffixes[0] for f in FORMATS if f.name == name)


def describe_formats() -> str:
    """One line per format for help texts: `name (.a .b): description`."""
    return "; ".join(f"{f.name} ({' '.join(f.suffixes)}): {f.description}" for f in FORMATS)
