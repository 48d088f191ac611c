"""What may name a corpus or a run folder under the cache, and how runs are found there:
the one definition, stdlib only, so the serving supervisor (explorer/hosting/) checks for a
corpus the way the viewer lists them without loading pandas. `explorer.artifacts` re-exports
all of it (the contract; readers use `artifacts.list_corpora`)."""

from __future__ import annotations

import re
from pathlib import Path

# The run's record, written last: a folder without it is not a run.
MANIFEST = "manifest.json"
# The pointer file naming a corpus's latest complete run.
LATEST = "latest"
# Folders under the cache that are not corpora.
RESERVED_NAMES = frozenset({"embeddings", "models", "numba", "reductions", LATEST})
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def latest_run_id(cache_dir: Path, corpus: str) -> str | None:
    """The run named by `latest` if complete, else the newest complete run, else None."""
    corpus_dir = Path(cache_dir) / corpus
    pointer = corpus_dir / LATEST
    if pointer.is_file():
        # A damaged pointer (not UTF-8) names no run: fall back to the newest complete one.
        run_id = pointer.read_text(encoding="utf-8", errors="replace").strip()
        if NAME_RE.fullmatch(run_id) and (corpus_dir / run_id / MANIFEST).is_file():
            return run_id
    complete = [p for p in corpus_dir.glob("*") if p.is_dir() and (p / MANIFEST).is_file()]
    if not complete:
        return None
    return max(complete, key=lambda p: (p / MANIFEST).stat().st_mtime).name


def list_corpora(cache_dir: Path) -> list[str]:
    """Corpora with at least one complete run, by name."""
    root = Path(cache_dir)
    if not root.is_dir():
        return []
    names = []
    for path in sorted(root.iterdir()):
        is_corpus = (
            path.is_dir() and NAME_RE.fullmatch(path.name) and path.name not in RESERVED_NAMES
        )
        if is_corpus and latest_run_id(root, path.name) is not None:
            names.append(path.name)
    return names
