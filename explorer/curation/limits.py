"""What a curation history may hold: the labels a rename may store, and the history's bounds.

One home for both, because both are what an editor (the CLI or the dashboard) meets: a label
refused, or a history full. `label_problem` is also the check of a history an older version
wrote (explorer.curation.log shows such a label neutralised and never applies it).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from explorer.errors import InputError

# The history's bounds: the log is read whole at every page load after a change, so its
# size is what a change can cost a visitor. 20,000 changes are ~3 MB; the byte cap bounds
# what long labels or long reverts could add. At either, the host compacts.
MAX_CHANGES = 20_000
MAX_LOG_BYTES = 32 * 1024 * 1024
MAX_LABEL_CHARS = 200
# Characters a label may not hold: controls, format characters (bidi overrides, zero-width
# ones), private-use and surrogates (a CLI argument's undecodable bytes arrive as lone
# surrogates), and line or paragraph separators. They would hide or reorder what a label
# shows, or fail to encode on the way to a page.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


# --- labels ------------------------------------------------------------------------------


def label_problem(label: object) -> str | None:
    """Why `label` (already stripped) may not be stored, or None: the one check of record()
    (the CLI and the dashboard) and of reading a history an older version wrote."""
    if not isinstance(label, str):
        return "a label must be text"
    if not 1 <= len(label) <= MAX_LABEL_CHARS:
        return f"a label needs 1 to {MAX_LABEL_CHARS} characters"
    if not (label.isascii() and label.isprintable()):  # ASCII's only refused ones: controls
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            return "a label must be valid UTF-8 (it holds undecodable bytes)"
        for char in label:
            if unicodedata.category(char) in REFUSED_CATEGORIES:
                return f"a label may not hold invisible or control characters (U+{ord(char):04X})"
    if label.isspace():
        return "a label needs at least one visible character"
    return None


def neutral(label: str) -> str:
    """A label that failed `label_problem`, made safe to show: undecodable bytes as U+FFFD,
    refused characters dropped, cut to MAX_LABEL_CHARS."""
    text = str(label).encode("utf-8", "replace").decode("utf-8")
    text = "".join(c for c in text if unicodedata.category(c) not in REFUSED_CATEGORIES)
    return text.strip()[:MAX_LABEL_CHARS] or "?"


# --- the history's bounds ----------------------------------------------------------------


def check_room(file: Path, changes: int, corpus: str) -> None:
    """Refuse a change beyond the history's bounds, telling the host what to do."""
    size = file.stat().st_size
    if changes >= MAX_CHANGES or size >= MAX_LOG_BYTES:
        held = f"{changes:,} changes, {size / 1e6:.1f} MB"
        raise InputError(
            f"the curation history is full ({held}; at most {MAX_CHANGES:,} changes and "
            f"{MAX_LOG_BYTES // 2**20} MB): run `explorer curate {corpus} compact` to keep "
            "its state and drop what was taken back"
        )
