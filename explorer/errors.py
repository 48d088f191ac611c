"""The project's own exceptions: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import errno


class ExplorerError(Exception):
    """An expected failure with a message meant for the user, not a traceback."""


class InputError(ExplorerError):
    """Bad input: the message names the file and, when known, the line, entry or field."""


class NodeIdError(InputError, ValueError):
    """A text that is not a node id of the grammar in explorer.artifacts (A3, 3, 3.1, -1)."""


class ArtifactError(ExplorerError):
    """A run on disk is missing, incomplete, of another schema, or damaged."""


class BuildLockedError(ExplorerError):
    """Another build of the same corpus holds the lock."""


_OS_HINTS = {
    errno.ENOSPC: "the disk is full: free some space, or use another disk with --cache-dir",
    errno.EDQUOT: "the disk quota is used up: free some space, or use another --cache-dir",
    errno.ENOTDIR: "part of this path is a file, not a folder: move it or pick another path",
    errno.EEXIST: "a file is in the way: move it or pick another path",
    errno.EACCES: "not writable by this user: pick a folder you can write to",
    errno.EPERM: "not permitted: pick a folder you can write to",
    errno.EROFS: "the file system is read-only: pick a writable folder",
    errno.ENOENT: "no such file or folder",
}


def describe_os_error(exc: OSError, fallback_path: object) -> str:
    """One line for an OSError: the path, what went wrong, and what to do about it.

    `fallback_path` names the folder being written when the error carries no file name
    (some libraries raise it without one).
    """
    path = exc.filename if exc.filename is not None else fallback_path
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = _OS_HINTS.get(exc.errno or 0)
    return f"{path}: {reason}" + (f"; {hint}" if hint else "")
