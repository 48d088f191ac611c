"""Build the background table of phrase document frequencies per venue group.

    python -m explorer.build.background_table [PAPERLISTS_DIR] [--out FILE]

Reads the accepted-paper lists of Paper Copilot's public `papercopilot/paperlists`
repository (snapshot of 2026-02-23, as kept in `../shared/data/paperlists`; see
`explorer/build/background.py` for what the table is for), cuts every abstract into the same
1-3-word candidate phrases the labels use, and counts, per venue group, in how many abstracts
each phrase occurs. Only phrases the typical group uses are kept (median document share at
least KEEP_SHARE): whatever is missing is rare in most groups, so specific by construction. Only
aggregated counts are written, never a text.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

from explorer.build.labels.phrases import phrase_table

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


def build_table(source: Path) -> dict:
    """The table as a JSON-ready dict: groups with their sizes, phrases with a count per group."""
    sizes: dict[str, int] = {}
    counts: dict[str, dict[str, int]] = {}
    for group, folders in GROUPS.items():
        docs = [t for f in folders for t in read_abstracts(source / f)]
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
    return {
        "source": SOURCE,
        "keep_share": KEEP_SHARE,
        "groups": names,
        "documents": [sizes[g] for g in names],
        "phrases": kept,
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
