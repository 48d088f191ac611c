"""Paper and Corpus: the one record every reader produces and every stage consumes."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, field, fields, replace

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


# LaTeX text-formatting commands that PMLR-style sources leave in abstracts. The display
# copy keeps their text and drops the command; math ($...$, \(...\)) stays raw text.
_TEX_ARG_RE = re.compile(
    r"\\(?:emph|textit|textbf|texttt|textsc|textsf|textrm|textup|textsl|underline|mbox)"
    r"\s*\{([^{}$]*)\}"
)
_TEX_GROUP_RE = re.compile(r"\{\\(?:em|it|bf|sl|sc|tt|rm|sf)\s+([^{}$]*)\}")
_TEX_SWITCH_RE = re.compile(r"\\(?:em|it|bf|sl|sc|tt|rm|sf)\b\s*")
_MATH_RE = re.compile(r"(\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\])", re.S)


def strip_tex_commands(text: str) -> str:
    """`\\emph{robust}` -> `robust`, `{\\em robust}` -> `robust`, outside math only."""
    if "\\" not in text:
        return text
    parts = _MATH_RE.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside math
        part, previous = parts[i], None
        while part != previous:  # nested commands, innermost first
            previous = part
            part = _TEX_GROUP_RE.sub(r"\1", _TEX_ARG_RE.sub(r"\1", part))
        parts[i] = _TEX_SWITCH_RE.sub("", part)
    return "".join(parts)


def clean_display_text(paper: Paper) -> Paper:
    """The paper with TeX text commands dropped from its title and abstract."""
    title, abstract = strip_tex_commands(paper.title), strip_tex_commands(paper.abstract)
    if (title, abstract) == (paper.title, paper.abstract):
        return paper
    return replace(paper, title=title, abstract=abstract)


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
