"""Input readers, registered by suffix (`formats.FORMATS`) with content sniffing for the rest.

Every reader has the signature ``(path, options) -> SourceResult`` and raises only
`InputError`; `read_inputs` expands folders, dispatches, and de-duplicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from explorer.build.corpus import Corpus, Paper, clean_display_text, dedupe
from explorer.build.sources.base import ReadOptions, SourceResult
from explorer.build.sources.formats import FORMATS, READERS, SUFFIXES, Reader
from explorer.errors import InputError

__all__ = [
    "FORMATS",
    "READERS",
    "SUFFIXES",
    "Reader",
    "ReadOptions",
    "SourceResult",
    "detect_format",
    "expand_inputs",
    "read_inputs",
]


def detect_format(path: Path) -> str:
    """The reader for a file: by suffix, else by its first bytes."""
    by_suffix = SUFFIXES.get(path.suffix.lower())
    if by_suffix:
        return by_suffix
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith(b"PAR1"):
        return "parquet"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"["):
        return "paperlists"
    if stripped.startswith(b"{"):
        return "jsonl"
    if stripped.startswith(b"@") or b"\n@" in head:
        return "bibtex"
    return "text"


def expand_inputs(inputs: Sequence[str | Path]) -> list[Path]:
    """Files named directly, plus supported files found under folders, in name order."""
    files: list[Path] = []
    for raw in inputs:
        path = Path(raw)
        if not path.exists():
            raise InputError(f"{path}: no such file or directory")
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.startswith(".")
            )
            if not found:
                known = ", ".join(sorted(SUFFIXES))
                raise InputError(f"{path}: no readable input files in this folder ({known})")
            files.extend(found)
        else:
            files.append(path)
    return files


def read_inputs(inputs: Sequence[str | Path], options: ReadOptions | None = None) -> Corpus:
    """Read every input, turn its markup into text, drop exact duplicates; canonical order."""
    options = options or ReadOptions()
    papers = []
    skipped: list[str] = []
    for path in expand_inputs(inputs):
        read, lines = read_file(path, options)
        papers.extend(read)
        skipped.extend(lines)
    return dedupe(papers, skipped)


def read_file(path: Path, options: ReadOptions) -> tuple[list[Paper], list[str]]:
    """One input file's papers (display text cleaned) and skipped records; a file that
    cannot be read is one InputError naming it. Both engines read through this."""
    try:
        result = READERS[detect_format(path)](path, options)
    except InputError:
        raise
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"{path}: could not be read ({exc})") from None
    return [clean_display_text(p) for p in result.papers], list(result.skipped)
