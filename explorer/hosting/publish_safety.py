"""What a publish may write and replace, so it never destroys what it did not write: the
folders it refuses, the marker listing every file an earlier publish wrote (refused when it
names anything a publish never writes), and, before anything changes, nothing of the
user's in the way and no edit lost.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath

from explorer import artifacts, curation
from explorer.atomic_files import sha256_file
from explorer.errors import ExplorerError
from explorer.hosting.app_home import app_dir
from explorer.names import LATEST, NAME_RE

APP_FILES = ("app.py", "Dockerfile", "serve.py")
STREAMLIT_CONFIG = ".streamlit/config.toml"
# Every file at the folder's top that a publish writes (the rest is under pages/,
# explorer/ and cache/: `is_publishable`).
_TOP_FILES = (*APP_FILES, STREAMLIT_CONFIG, "requirements.txt", "README.md")
MARKER = artifacts.PUBLISH_MARKER
STAGING_PREFIX = ".explorer-publish-tmp-"
# Folders the publish copies from: a destination inside one would copy into itself.
_SOURCE_FOLDERS = ("pages", "explorer", ".streamlit")


def check_destination(dest: Path, cache_dir: Path) -> None:
    """Refuse folders a publish must never write into, whatever they hold."""
    protected = {
        Path("/"): "the file system root",
        Path.home().resolve(): "your home folder",
        app_dir(): "the Topic Explorer project",
        cache_dir.resolve(): "the cache",
    }
    for path, what in protected.items():
        if dest == path or path.is_relative_to(dest):
            raise ExplorerError(f"{dest}: refusing to publish into {what}; pick a new folder")
    sources = (cache_dir.resolve(), *(app_dir() / name for name in _SOURCE_FOLDERS))
    if any(dest.is_relative_to(source) for source in sources):
        raise ExplorerError(
            f"{dest}: refusing to publish inside the cache or the app's sources; pick a new folder"
        )
    for path in (dest, *dest.parents):
        if path.exists():
            if not path.is_dir():
                raise ExplorerError(f"{dest}: {path} is a file, not a folder; pick a new folder")
            break


def previous_files(dest: Path) -> dict[str, set[str]]:
    """What an earlier publish wrote into `dest`, name -> accepted sha256s ({} if new).

    A marker naming anything a publish never writes is refused before anything changes.
    Then leftover staging folders of a killed publish are removed (only they match its
    prefix).
    """
    if not dest.is_dir() or not any(dest.iterdir()):
        return {}
    try:
        files = json.loads((dest / MARKER).read_text(encoding="utf-8"))["files"]
        previous = {str(k): {v} if isinstance(v, str) else set(v) for k, v in files.items()}
    except FileNotFoundError:
        raise ExplorerError(
            f"{dest}: not empty and not written by explorer publish; "
            "nothing was changed (publish into a new or empty folder)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise ExplorerError(f"{dest / MARKER}: unreadable; nothing was changed") from None
    for name in previous:
        if not is_publishable(name):
            raise ExplorerError(
                f"{dest / MARKER}: lists {name!r}, which explorer publish never writes; "
                "nothing was changed"
            )
    for leftover in dest.glob(f"{STAGING_PREFIX}*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)
    return previous


def is_publishable(name: str) -> bool:
    """Whether `name` (relative, POSIX) is a path some publish writes: a top file, a page,
    a module of the package (any: an older publish may have copied one this one no longer
    does), or a corpus's run, `latest`, curation or query encoder under cache/. Nothing
    hidden (`.git`), nothing outside (`..`, `/etc`)."""
    path = PurePosixPath(name)
    if path.as_posix() != name or path.is_absolute() or not path.parts:
        return False  # only normalised names: no "./x", "x//y", "x/"
    if name in _TOP_FILES:
        return True
    top, *rest = path.parts
    if any(part.startswith(".") for part in path.parts) or not rest:
        return False
    if top in ("pages", "explorer"):
        return True
    return top == "cache" and _is_cache_file(rest)


def _is_cache_file(parts: list[str]) -> bool:
    if "/".join(parts).startswith(f"{artifacts.ENCODER_ROOT}/"):
        return True
    if not NAME_RE.fullmatch(parts[0]):
        return False
    if len(parts) == 2:
        return parts[1] in (LATEST, curation.FILE)
    return NAME_RE.fullmatch(parts[1]) is not None  # a run's files


def check_replaceable(
    dest: Path, previous: dict[str, set[str]], written: dict[str, str], *, force: bool
) -> None:
    """Before anything changes: nothing of the user's is in the way, no edit is lost."""
    for name in sorted({*previous, *written}):
        target = dest / name
        _check_inside(dest, name)
        in_the_way = [dest / p for p in Path(name).parents[:-1] if (dest / p).is_file()]
        if name in written and target.is_file() and name not in previous:
            in_the_way.append(target)
        for path in in_the_way:
            raise ExplorerError(
                f"{path}: exists and was not written by explorer publish; nothing was changed"
            )
        edited = name in previous and target.is_file() and not force
        if edited and sha256_file(target) not in previous[name]:
            raise ExplorerError(
                f"{target}: edited since it was published; nothing was changed "
                "(--force replaces it)"
            )


def _check_inside(dest: Path, name: str) -> None:
    """Refuse a path that would lead out of `dest` through a symbolic link, or that is a
    folder or special file where the publish puts a file."""
    for part in [*reversed(Path(name).parents[:-1]), Path(name)]:
        if (dest / part).is_symlink():
            raise ExplorerError(f"{dest / part}: is a symbolic link; nothing was changed")
    target = dest / name
    if target.exists() and not target.is_file():
        raise ExplorerError(f"{target}: is not a regular file; nothing was changed")
