"""The papers a change records for each node it names, stored once.

`cache/<corpus>/curation.members/<digest>.json` holds one node's paper ids, sorted; the file
is named by their digest (content-addressed), so the same node of the same run is one file
however many changes name it, and a change's line in the log holds only the digest. A
rebuild matches a change's nodes by these papers (explorer.curation.matching).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from explorer.atomic_files import atomic_write_text
from explorer.errors import ArtifactError

MEMBERS = "curation.members"


def members_dir(cache_dir: Path, corpus: str) -> Path:
    return Path(cache_dir) / corpus / MEMBERS


def store_members(cache_dir: Path, corpus: str, ids: list[str]) -> str:
    """Store a node's papers once (content-addressed) and return their digest."""
    ordered = sorted(ids)
    digest = hashlib.sha256("\n".join(ordered).encode("utf-8")).hexdigest()[:32]
    file = members_dir(cache_dir, corpus) / f"{digest}.json"
    if not file.is_file():
        file.parent.mkdir(exist_ok=True)
        atomic_write_text(file, json.dumps(ordered))
    return digest


def load_members(cache_dir: Path, corpus: str, recorded: str | list[str]) -> list[str]:
    """A change's recorded papers for one node: a digest (schema 2) or the list itself
    (a schema-1 file read before its migration)."""
    if isinstance(recorded, list):
        return recorded
    file = members_dir(cache_dir, corpus) / f"{recorded}.json"
    try:
        ids = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{file}: unreadable curation members ({exc})") from None
    if not isinstance(ids, list):
        raise ArtifactError(f"{file}: not a list of paper ids")
    return ids
