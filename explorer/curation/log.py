"""Where curation lives on disk: the append-only log of changes, read, checked, appended to.

`cache/<corpus>/curation.jsonl` holds a header line, then one change per line, in order.
A change is appended under an exclusive lock on `curation.lock` (then fsync'd): its cost
does not grow with the history, because a write reads only the log's last line (for the
next id) and its size. The member list (paper ids) of a node a change names is stored once
by explorer.curation.members (content-addressed: the same node of the same run is one file,
however many changes name it); the change holds the digest and the id of the run it was
made on, so the run it was made on resolves it by id and only a rebuild matches it by
member overlap.

The log's (inode, size, mtime) is the overlay's version: one `stat` per rerun. A crash
mid-append leaves a torn last line: readers ignore it with a warning, the next write cuts it
off. The schema-1 file (`curation.json`, one JSON document, members in every change) is
still read when no log exists, and is migrated to the log by the first write (the old file
kept beside it as `curation.json.bak`). `compact` rewrites the log keeping only its state.
What the log may hold (labels, its bounds) is explorer.curation.limits.

Why a log: the schema-1 file was rewritten whole at every change, with every member list in
every change; at 10,000 changes it was 68 MB and one rename took 33.7 s. With the log and
members stored once, the same history (bench/curation.py, ICML 2013-2019) is a 1.9 MB log
and 0.1 MB of member lists, and one more change takes ~2 ms.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from explorer.atomic_files import atomic_write_text
from explorer.curation.limits import check_room, label_problem, neutral
from explorer.curation.members import store_members
from explorer.errors import ArtifactError

SCHEMA = 2
LEGACY_SCHEMA = 1
LOG = "curation.jsonl"
LEGACY = "curation.json"
LOCK = "curation.lock"
_TAIL_CHUNK = 1 << 16
log = logging.getLogger(__name__)


# --- paths and version -------------------------------------------------------------------


def path(cache_dir: Path, corpus: str) -> Path:
    """The log (the overlay's file since schema 2)."""
    return Path(cache_dir) / corpus / LOG


def legacy_path(cache_dir: Path, corpus: str) -> Path:
    return Path(cache_dir) / corpus / LEGACY


def version(cache_dir: Path, corpus: str) -> tuple[int, ...]:
    """The overlay's version: one stat of the log (of the schema-1 file while no log
    exists). () when there is none."""
    for file in (path(cache_dir, corpus), legacy_path(cache_dir, corpus)):
        try:
            st = file.stat()
        except FileNotFoundError:
            continue
        return (st.st_ino, st.st_size, st.st_mtime_ns)
    return ()


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- reading -----------------------------------------------------------------------------


def read(cache_dir: Path, corpus: str) -> list[dict]:
    """The history of changes, checked; [] when there is none. A label no longer allowed
    (written by an older version) is shown neutralised and marked `refused`, never applied.
    The changes are shared with this process's cache of the log: callers do not mutate them."""
    file = path(cache_dir, corpus)
    try:
        handle = open(file, "rb")  # noqa: SIM115 - closed below, after the fstat
    except FileNotFoundError:
        return [_checked_label(c) for c in _read_legacy(cache_dir, corpus)]
    except OSError as exc:
        raise ArtifactError(f"{file}: unreadable curation ({exc})") from None
    with handle:
        return list(_parsed(file, handle).changes)


def _checked_label(change: dict) -> dict:
    if change["op"] == "rename" and (problem := label_problem(change["label"])):
        change["refused"] = problem
        change["label"] = neutral(change["label"])
    return change


@dataclass
class _Parsed:
    """A log parsed up to `offset` (the end of its last complete line, `tail`)."""

    ident: tuple[int, int]  # (device, inode): a compact or a migration makes a new file
    offset: int
    lines: int
    tail: bytes
    changes: list[dict]


# Logs parsed in this process: a page load after a change parses the new lines only.
_PARSED: dict[str, _Parsed] = {}


def _parsed(file: Path, handle) -> _Parsed:
    st = os.fstat(handle.fileno())
    ident = (st.st_dev, st.st_ino)
    known = _PARSED.get(str(file))
    if known and known.ident == ident and known.offset <= st.st_size:
        handle.seek(known.offset - len(known.tail))
        if handle.read(len(known.tail)) == known.tail:  # the same file, appended to
            parsed = _parse_lines(file, handle.read(), known)
            _PARSED[str(file)] = parsed
            return parsed
        handle.seek(0)
    parsed = _parse_lines(file, handle.read(), _Parsed(ident, 0, 0, b"", []))
    _PARSED[str(file)] = parsed
    return parsed


def _parse_lines(file: Path, data: bytes, known: _Parsed) -> _Parsed:
    """`known` and the complete lines of `data` (the bytes after it)."""
    end = data.rfind(b"\n") + 1
    if end < len(data):  # no newline at the end: a crash mid-append
        log.warning("%s: ignoring a torn last line (an interrupted write)", file)
    lines = data[:end].decode("utf-8", "surrogateescape").split("\n")[:-1]
    if not lines and not known.lines:
        raise ArtifactError(f"{file}:1: not a curation log of schema {SCHEMA}")
    changes, number = list(known.changes), known.lines
    if number == 0:
        if _header_problem(lines[0]):
            raise ArtifactError(f"{file}:1: not a curation log of schema {SCHEMA}")
        lines, number = lines[1:], 1
    for change in _loads(file, lines, number):
        number += 1
        if problem := change_problem(change, len(changes) + 1):
            raise ArtifactError(f"{file}:{number}: {problem}")
        changes.append(_checked_label(change))
    tail = data[data.rfind(b"\n", 0, end - 1) + 1 : end] if end else known.tail
    return _Parsed(known.ident, known.offset + end, number, tail, changes)


def _loads(file: Path, lines: list[str], before: int) -> list[object]:
    """The JSON values of `lines` (line `before` + 1 onwards): parsed as one array (a third
    faster than line by line), and line by line only to name a bad line."""
    try:
        values = json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        values = None
    if isinstance(values, list) and len(values) == len(lines):
        return values
    for number, line in enumerate(lines, before + 1):
        try:
            json.loads(line)
        except ValueError as exc:
            raise ArtifactError(f"{file}:{number}: not a JSON line ({exc})") from None
    raise ArtifactError(f"{file}:{before + 1}: not one JSON value per line")  # e.g. "1, 2"


def _header_problem(line: str) -> bool:
    try:
        header = json.loads(line)
    except ValueError:
        return True
    return not isinstance(header, dict) or header.get("schema") != SCHEMA


def _read_legacy(cache_dir: Path, corpus: str) -> list[dict]:
    file = legacy_path(cache_dir, corpus)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{file}: unreadable curation ({exc})") from None
    if not isinstance(raw, dict) or raw.get("schema") != LEGACY_SCHEMA:
        raise ArtifactError(f"{file}: not a curation file of schema {LEGACY_SCHEMA}")
    changes = raw.get("changes")
    if not isinstance(changes, list):
        raise ArtifactError(f"{file}: 'changes' is not a list")
    for number, change in enumerate(changes, 1):
        if problem := change_problem(change, number):
            raise ArtifactError(f"{file}: change {number}: {problem}")
    return changes


# What each kind of change must hold (beyond id, source and time). `members` maps each node
# named to its papers' digest (or, in a schema-1 file, the list itself); `run`, the run the
# change was made on, is absent from changes a schema-1 file held.
FIELDS: dict[str, dict[str, type]] = {
    "rename": {"node": str, "label": str, "members": dict},
    "merge": {"nodes": list, "members": dict},
    "hide": {"node": str, "members": dict},
    "unhide": {"node": str, "members": dict},
    "move": {"paper": str, "node": str, "members": dict},
    "undo": {"takes_back": list},
    "revert": {"to": int, "takes_back": list, "restores": list},
}


def change_problem(change: object, number: int) -> str | None:
    """What is wrong with change `number`, or None."""
    if not isinstance(change, dict) or change.get("id") != number:
        return f"change {number} missing or out of order"
    fields = FIELDS.get(change.get("op"))
    if fields is None:
        return f"change {number}: unknown op {change.get('op')!r}"
    for name, kind in {**fields, "source": str, "time": str}.items():
        if not isinstance(change.get(name), kind):
            return f"change {number}: field {name!r} missing or not {kind.__name__}"
    if not isinstance(change.get("run", ""), str):
        return f"change {number}: field 'run' not str"
    return None


# --- writing -----------------------------------------------------------------------------


@contextlib.contextmanager
def locked(cache_dir: Path, corpus: str) -> Iterator[Path]:
    """The log under the corpus's exclusive lock, migrated from schema 1 and with any torn
    last line cut off: ready to append to."""
    folder = Path(cache_dir) / corpus
    with open(folder / LOCK, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            file = path(cache_dir, corpus)
            if not file.exists():
                _start_log(cache_dir, corpus)
            _cut_torn_tail(file)
            yield file
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _start_log(cache_dir: Path, corpus: str) -> None:
    """A new log: the schema-1 history (if any) with its members stored once, then the
    old file kept beside as `.bak` (the log is complete before the old file moves)."""
    legacy = legacy_path(cache_dir, corpus)
    lines = [json.dumps({"schema": SCHEMA})]
    for change in _read_legacy(cache_dir, corpus):
        if "members" in change:
            change["members"] = {
                node: store_members(cache_dir, corpus, ids)
                for node, ids in change["members"].items()
            }
        lines.append(json.dumps(change))
    atomic_write_text(path(cache_dir, corpus), "\n".join(lines) + "\n")
    if legacy.exists():
        os.replace(legacy, legacy.with_name(LEGACY + ".bak"))


def _cut_torn_tail(file: Path) -> None:
    with open(file, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        end = _last_newline(handle, size)
        if end + 1 != size:
            log.warning("%s: cutting off a torn last line (an interrupted write)", file)
            handle.truncate(end + 1)


def _last_newline(handle, size: int) -> int:
    """The offset of the file's last newline (-1 if none), reading backwards in chunks."""
    pos = size
    while pos > 0:
        start = max(0, pos - _TAIL_CHUNK)
        handle.seek(start)
        found = handle.read(pos - start).rfind(b"\n")
        if found >= 0:
            return start + found
        pos = start
    return -1


def last_id(file: Path) -> int:
    """The id of the log's last change (0 when it holds none): read from its tail only."""
    with open(file, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        end = _last_newline(handle, size)  # the newline ending the last line
        start = _last_newline(handle, end) + 1
        handle.seek(start)
        last = json.loads(handle.read(end - start))
    return int(last.get("id", 0))


def append(file: Path, change: dict) -> None:
    """One line at the log's end, on disk before the lock is released."""
    line = json.dumps(change) + "\n"  # ASCII: a line is never split inside a character
    with open(file, "a", encoding="ascii") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def append_new(cache_dir: Path, corpus: str, make: Callable[[int], dict]) -> dict:
    """Append the change `make(id)` returns, within the history's bounds."""
    with locked(cache_dir, corpus) as file:
        count = last_id(file)
        check_room(file, count, corpus)
        change = make(count + 1)
        append(file, change)
    return change


def replace_log(file: Path, changes: list[dict]) -> Path:
    """Rewrite the log as `changes`, keeping the old one beside it (timestamped)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    backup = file.with_name(f"{file.name}.{stamp}.bak")
    os.link(file, backup)  # atomic and free: readers keep seeing a complete log
    lines = [json.dumps({"schema": SCHEMA}), *map(json.dumps, changes)]
    atomic_write_text(file, "\n".join(lines) + "\n")
    return backup
