"""Crash-safe writes and checksums: a reader sees the old file or the new one, never half
of one, and a run's files carry their sizes and sha256 so a changed byte is caught.
Standard library and numpy only (the build, the view, curation and hosting all write here).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from explorer.names import MANIFEST


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Call `write(handle)` on a temporary sibling, then rename it to `path`: readers see the
    old file or the new one, never half of one, and a failed write leaves nothing behind."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """`atomic_write` of a UTF-8 text."""
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_save_array(path: Path, array: np.ndarray) -> None:
    """`atomic_write` of one .npy array (never pickled)."""
    atomic_write(path, lambda handle: np.save(handle, array, allow_pickle=False))


def file_inventory(directory: Path) -> dict[str, dict[str, object]]:
    """Size and sha256 of every file in a run, for the manifest's integrity check."""
    out = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != MANIFEST):
        out[path.relative_to(directory).as_posix()] = file_record(path)
    return out


def file_record(path: Path) -> dict[str, object]:
    """One file's size and sha256, as the manifest records it."""
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
