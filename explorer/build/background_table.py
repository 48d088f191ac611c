"""Build the background table of phrase document frequencies per venue group.

    python -m explorer.build.background_table [PAPERLISTS_DIR] [--out FILE]

Reads the accepted-paper lists of Paper Copilot's public `papercopilot/paperlists`
repository (snapshot of 2026-02-23, as kept in `../shared/data/paperlists`; see
`explorer/build/background.py` for what the table is for), cuts every abstract into the same
1-3-word candidate phrases the labels use, and counts, per venue group, in how many abstracts
each phrase occurs. Only phrases the typical group uses are kept (median document share at
least KEEP_SHARE): whatever is missing is rare in most groups, so specific by construction.

Over all groups together it also counts how phrases are used (see background.py):
- `repeats`: for every phrase of at least USAGE_MIN abstracts, in how many abstracts it
  occurs and in how many it is said again, by name or by its initials ("gaussian processes
  (gps)"): "diffusion" is repeated in half the abstracts that use it, "findings" in one in
  twenty;
- `modifies`: for every such phrase, how often it occurs and how often right before another
  content word ("theoretical analysis", "large language models"): a phrase the venues
  almost always write so is a modifier, which names nothing alone;
- `contexts`: for every word of at least CONTEXT_MIN occurrences, how often it is written
  right after a word that comes before verbs (VERB_BEFORE: "we provide", "is designed") and
  right before one that comes after them (OBJECT_AFTER: "enhancing the", "provide a"):
  the evidence that a word is a verb, participle or adverb, learned without a tagger.
Only aggregated counts are written, never a text.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

from explorer.build.labels.phrases import Phrases, Repeats, edge_words, phrase_table

# Venue group -> the paper-list folders it reads (every year present).
GROUPS = {
    "machine learning": ["icml", "nips", "aistats"],
    "vision": ["cvpr"],
    "language": ["acl"],
    "web": ["www"],
    "general ai": ["aaai"],
}
# Only lists of this year or later: boilerplate is how fields write now ("comprehensive",
# "extensive experiments" grew common after 2015; 1990s NeurIPS abstracts would keep them
# looking specific to every modern corpus).
MIN_YEAR = 2017
# Longer phrases are never common in every venue: their words decide (see background.py).
PHRASE_WORDS = 3
# A phrase is kept when at least this share of the typical (median) group's abstracts uses
# it: enough to tell boilerplate (common in every group) and to know how often the venues
# write a term a corpus uses ("highlighting": 0.2% of CVPR's abstracts, 2.4% of WWW's).
KEEP_SHARE = 0.002
# A phrase's repeats are counted once this many abstracts use it, a word's contexts once it
# occurs this many times (background.CONTEXT_PRIOR keeps a rare word's few uses from
# deciding alone).
USAGE_MIN = 20
CONTEXT_MIN = 5
# Words that precede a verb, participle or adverb far more often than a noun: subjects,
# "to", modals and auxiliaries ("we propose", "to provide", "is designed", "are not").
VERB_BEFORE = frozenset({
    "we", "they", "to", "can", "may", "will", "could", "should", "would", "must", "is", "are",
    "was", "were", "be", "been", "being", "also", "not",
})  # fmt: skip
# Words that follow a transitive verb far more often than a noun: determiners and object
# pronouns ("provide a", "enhancing the", "leveraging their").
OBJECT_AFTER = frozenset({
    "the", "a", "an", "our", "their", "its", "this", "these", "those", "each", "such", "both",
    "them", "it", "us", "any",
})  # fmt: skip
DEFAULT_SOURCE = Path(__file__).resolve().parents[3] / "shared" / "data" / "paperlists"
DEFAULT_OUT = Path(__file__).with_name("background.json.gz")
SOURCE = (
    "Paper Copilot paperlists (github.com/papercopilot/paperlists, snapshot 2026-02-23): "
    "abstracts of ICML 2017-2019, NeurIPS 2017-2018, AISTATS 2019-2025, CVPR 2017-2019, "
    "ACL 2021-2022, WWW 2025 and AAAI 2022. Only phrase document counts are kept; the "
    "abstracts stay with their publishers and authors (the paperlists repository is "
    "distributed under its own licence, which its README states)."
)


def list_year(path: Path) -> int:
    """The year a paper list is of, from its file name ("icml2019.json")."""
    digits = "".join(c for c in path.stem if c.isdigit())
    if len(digits) != 4:
        raise SystemExit(f"{path}: no year in the file name")
    return int(digits)


def read_abstracts(folder: Path) -> list[str]:
    """Every non-empty abstract of one venue's yearly lists from MIN_YEAR on (unknown
    fields ignored)."""
    texts: list[str] = []
    for path in sorted(p for p in folder.glob("*.json") if list_year(p) >= MIN_YEAR):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            text = entry.get("abstract") if isinstance(entry, dict) else None
            if isinstance(text, str) and text.strip():
                texts.append(text)
    return texts


def phrase_counts(docs: list[str]) -> dict[str, int]:
    """Document frequency of every candidate phrase of `docs` of at most PHRASE_WORDS words."""
    table = phrase_table(docs)
    df = np.asarray(table.x.sum(axis=0)).ravel()
    short = np.flatnonzero((df > 0) & (table.length <= PHRASE_WORDS))
    return {table.text(j): int(df[j]) for j in short}


def usage(docs: list[str]) -> dict[str, dict[str, list[int]]]:
    """`repeats`, `modifies` and `contexts` of `docs` (see the module's docstring)."""
    table = phrase_table(docs)
    df = np.asarray(table.x.sum(axis=0)).ravel()
    common = np.flatnonzero((df >= USAGE_MIN) & (table.length <= PHRASE_WORDS))
    again = Repeats(table)
    occurrences, before_content = modifier_counts(table)
    verb, obj = verb_contexts(table)
    words = np.flatnonzero((occurrences >= CONTEXT_MIN) & (table.length == 1))
    return {
        "repeats": {table.text(j): [int(df[j]), again.said_again(j)] for j in common},
        "modifies": {table.text(j): [int(occurrences[j]), int(before_content[j])] for j in common},
        "contexts": {
            table.text(j): [int(occurrences[j]), int(verb[j]), int(obj[j])] for j in words
        },
    }


def verb_contexts(table: Phrases) -> tuple[np.ndarray, np.ndarray]:
    """Per column, its one-word phrase's occurrences right after a VERB_BEFORE word and
    right before an OBJECT_AFTER one (0 for longer phrases)."""
    at, column = table.starts[0], table.columns[0].astype(np.int64)  # one-word occurrences
    before = np.fromiter((t in VERB_BEFORE for t in table.vocabulary), bool)
    after = np.fromiter((t in OBJECT_AFTER for t in table.vocabulary), bool)
    previous = np.where(at > 0, table.codes[np.maximum(at - 1, 0)], -1)
    n = table.x.shape[1]
    verb = np.bincount(column[(previous >= 0) & before[previous]], minlength=n)
    obj = np.bincount(column[after[table.codes[at + 1]]], minlength=n)  # a document ends in "|"
    return verb, obj


def modifier_counts(table: Phrases) -> tuple[np.ndarray, np.ndarray]:
    """Per column, its phrase's occurrences and those right before another content word."""
    n = table.x.shape[1]
    content = edge_words(table.vocabulary)
    occurrences, before = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for k, (at, column) in enumerate(zip(table.starts, table.columns, strict=True), start=1):
        # A document ends in a break token, so the token after a phrase always exists.
        occurrences += np.bincount(column, minlength=n)
        before += np.bincount(column[content[table.codes[at + k]]], minlength=n)
    return occurrences, before


def build_table(source: Path) -> dict:
    """The table as a JSON-ready dict: groups with their sizes, phrases with a count per
    group, and the usage counts over all groups."""
    sizes: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    every_doc: list[str] = []
    for group, folders in GROUPS.items():
        docs = [t for f in folders for t in read_abstracts(source / f)]
        every_doc.extend(docs)
        if not docs:
            raise SystemExit(f"no abstracts for {group} under {source}")
        sizes[group] = len(docs)
        counts[group] = phrase_counts(docs)
        print(f"{group}: {len(docs)} abstracts, {len(counts[group])} phrases", file=sys.stderr)
    names = list(GROUPS)
    every = set.union(*(set(counts[g]) for g in names))
    kept = {}
    for phrase in sorted(every):
        row = [counts[g].get(phrase, 0) for g in names]
        if np.median([c / sizes[g] for c, g in zip(row, names, strict=True)]) >= KEEP_SHARE:
            kept[phrase] = row
    counts_of_use = usage(every_doc)
    return {
        "source": SOURCE,
        "keep_share": KEEP_SHARE,
        "groups": names,
        "documents": [sizes[g] for g in names],
        "phrases": kept,
        "usage_min": USAGE_MIN,
        "context_min": CONTEXT_MIN,
        **{key: dict(sorted(value.items())) for key, value in counts_of_use.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    table = build_table(args.source)
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    # mtime=0: the same lists give the same bytes.
    args.out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{len(table['phrases'])} phrases -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
