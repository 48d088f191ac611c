"""The project's own exceptions: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class ExplorerError(Exception):
    """An expected failure with a message meant for the user, not a traceback."""


class InputError(ExplorerError):
    """Bad input: the message names the file and, when known, the line, entry or field."""


class ArtifactError(ExplorerError):
    """A run on disk is missing, incomplete, of another schema, or damaged."""


class BuildLockedError(ExplorerError):
    """Another build of the same corpus holds the lock."""
