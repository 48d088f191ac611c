"""The small contract every reader keeps, and the checks every text file goes through."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from explorer.build.corpus import Paper, content_id
from explorer.errors import InputError

# Paper Copilot's file stems and the names researchers know the venues by.
VENUE_NAMES = {
    "nips": "NeurIPS",
    "neurips": "NeurIPS",
    "icml": "ICML",
    "iclr": "ICLR",
    "aistats": "AISTATS",
    "colt": "COLT",
    "uai": "UAI",
    "cvpr": "CVPR",
    "iccv": "ICCV",
    "eccv": "ECCV",
    "acl": "ACL",
    "emnlp": "EMNLP",
    "naacl": "NAACL",
    "aaai": "AAAI",
    "ijcai": "IJCAI",
    "kdd": "KDD",
    "corl": "CoRL",
    "tmlr": "TMLR",
}
_VENUE_YEAR_RE = re.compile(r"([A-Za-z][A-Za-z-]*?)[\s_-]*'?((?:19|20)\d{2})(?!\d)")


@dataclass(frozen=True)
class ReadOptions:
    """Options that tabular and override-capable readers honour; None means 'detect'."""

    text_column: str | None = None
    title_column: str | None = None
    year_column: str | None = None
    class_column: str | None = None
    venue: str | None = None
    year: int | None = None


@dataclass
class SourceResult:
    """What one file yielded: papers, plus one message per skipped entry."""

    papers: list[Paper] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def venue_year(name: str) -> tuple[str, int | None]:
    """Venue and year from a string such as 'icml2019', 'ICML 2025 论文列表' or 'nips-2016'."""
    match = _VENUE_YEAR_RE.search(name)
    if not match:
        return "", None
    venue = match.group(1).strip("-_ ")
    return VENUE_NAMES.get(venue.lower(), venue.upper()), int(match.group(2))


def read_text_file(path: Path) -> str:
    """Decode a file as UTF-8 (BOM allowed); refuse empty, binary or mis-encoded files."""
    data = path.read_bytes()
    if not data.strip():
        raise InputError(f"{path}: file is empty")
    if b"\x00" in data[:65536]:
        raise InputError(f"{path}: looks like a binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{path}: line {line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); "
            "re-save the file as UTF-8"
        ) from None
    if not text.strip():
        raise InputError(f"{path}: file has only blank lines")
    return text


def clean_field(value: object) -> str:
    """A field as display text: None and NaN become '', everything else str and stripped."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from pandas
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(clean_field(v) for v in value if clean_field(v))
    return str(value).strip()


def parse_year(value: object) -> int | None:
    """A four-digit year from an int, float or string field; None when there is none."""
    text = clean_field(value)
    match = re.search(r"(?:19|20)\d{2}", text)
    return int(match.group(0)) if match else None


def derive_paper_id(venue: str, year: int | None, source_id: str, title: str, abstract: str) -> str:
    """A paper's id: the source's own id qualified by venue and year (`icml2025-abc12`), else
    a hash of its content; one rule for every reader that may find an id field, so the same
    paper keeps its id (and its curation) whichever file format it arrives in."""
    if source_id:
        return f"{venue}{year or ''}-{source_id}".lower().replace(" ", "")
    return content_id(venue, str(year or ""), title, abstract)
