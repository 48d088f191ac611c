"""Paper and Corpus: the one record every reader produces and every stage consumes."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, field, fields, replace

from explorer.build.markup import plain_text

# Abstracts longer than this are cut for embedding (the model sees ~256 tokens
# anyway) but kept whole for display.
MAX_EMBED_CHARS = 20_000
TITLE_TARGET_CHARS = 90

_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_WS_RE = re.compile(r"\s+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\\(\[])")


@dataclass(frozen=True)
class Paper:
    """One paper as read from a source; `abstract` keeps the original text for display."""

    paper_id: str
    title: str
    abstract: str
    title_derived: bool = False
    authors: str = ""
    venue: str = ""
    year: int | None = None
    status: str = ""
    track: str = ""
    url: str = ""
    code_url: str = ""
    source_file: str = ""

    @property
    def text(self) -> str:
        """The normalised text that is embedded and vectorised."""
        return normalise_text(self.abstract)


PAPER_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Paper))


@dataclass
class Corpus:
    """Papers after de-duplication, with what was skipped and merged on the way."""

    papers: list[Paper]
    skipped: list[str] = field(default_factory=list)
    merged: list[tuple[str, str]] = field(default_factory=list)  # (kept id, dropped id)

    def __len__(self) -> int:
        return len(self.papers)


def normalise_text(text: str) -> str:
    """Strip HTML tags and entities, collapse whitespace, cap length for the embedder."""
    text = _TAG_RE.sub(" ", text)
    text = html.unescape(text)
    text = _WS_RE.sub(" ", text).strip()
    return text[:MAX_EMBED_CHARS]


def clean_display_text(paper: Paper) -> Paper:
    """The paper with its source markup (HTML, TeX escapes, accents, text commands) turned
    into text in its title, abstract and authors (markup.py); math spans stay as written."""
    title, abstract, authors = (plain_text(v) for v in (paper.title, paper.abstract, paper.authors))
    if (title, abstract, authors) == (paper.title, paper.abstract, paper.authors):
        return paper
    return replace(paper, title=title, abstract=abstract, authors=authors)


def derive_title(abstract: str, limit: int = TITLE_TARGET_CHARS) -> str:
    """A display title for sources without one: the first sentence, cut at a word near `limit`."""
    text = normalise_text(abstract)
    first = _SENTENCE_END_RE.split(text, maxsplit=1)[0].rstrip(".!? ")
    if len(first) <= limit:
        return first
    cut = first[: limit + 1]
    space = cut.rfind(" ")
    cut = cut[:space] if space >= limit // 2 else cut[:limit]
    return cut.rstrip(" ,;:-") + "…"


def content_id(*parts: str, prefix: str = "p") -> str:
    """A stable id from content, for sources that carry no id of their own."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:12]}"


def canonical_key(paper: Paper) -> tuple:
    """The canonical paper order: by id, then by every other field.

    Papers are modelled in this order whatever order the input files were named in, so
    the same papers always give the same topics, map and labels.
    """
    return (paper.paper_id, paper.text.casefold(), *(str(v) for v in astuple(paper)))


def dedupe(papers: Iterable[Paper], skipped: Sequence[str] = ()) -> Corpus:
    """Papers in canonical order, without exact duplicate abstracts or repeated ids.

    The rule for which copy is kept: the first in canonical order (`canonical_key`), that
    is, the copy with the smallest paper id; the others are listed in `merged`. Neither
    depends on the order of the input files.
    """
    kept: list[Paper] = []
    by_text: dict[str, str] = {}
    ids: set[str] = set()
    merged: list[tuple[str, str]] = []
    for paper in sorted(papers, key=canonical_key):
        key = paper.text.casefold()
        if key in by_text:
            merged.append((by_text[key], paper.paper_id))
            continue
        if paper.paper_id in ids:
            merged.append((paper.paper_id, paper.paper_id))
            continue
        by_text[key] = paper.paper_id
        ids.add(paper.paper_id)
        kept.append(paper)
    return Corpus(papers=kept, skipped=list(skipped), merged=merged)
