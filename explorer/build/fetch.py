"""Download a paper list over http(s) into data/, robustly, and check it is readable.

A download goes to a temporary file next to its destination, is checked (size cap,
complete body, a format our readers parse) and only then renamed into place, with its
sha256 beside it (``<file>.sha256``, the format ``sha256sum -c`` reads). Nothing here
touches the network at import time; the dashboard never imports it.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from explorer import __version__
from explorer.build.sources import READERS, SUFFIXES, ReadOptions, detect_format
from explorer.build.sources.formats import suffix_of
from explorer.errors import ExplorerError, InputError

# Paper Copilot's public paper lists: <base>/<venue>/<venue><year>.json
PAPERLISTS_BASE = "https://raw.githubusercontent.com/papercopilot/paperlists/main"
DEFAULT_TIMEOUT = 30.0  # seconds, for the connection and for each read
DEFAULT_RETRIES = 3  # attempts after the first, for 5xx, 429, resets, timeouts, short bodies
DEFAULT_MAX_BYTES = 300 * 1024 * 1024  # ICML 2025's list is ~10 MB; NeurIPS ~30 MB
_CHUNK = 1 << 16
_VENUE_RE = re.compile(r"^[a-z][a-z0-9]{1,31}$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class FetchError(ExplorerError):
    """A download that failed; the message names the URL (and the HTTP status if any)."""


class _Retryable(Exception):
    """A failure worth another attempt (server error, reset, timeout, short body)."""


@dataclass(frozen=True)
class Fetched:
    path: Path
    url: str
    sha256: str
    bytes: int
    format: str
    papers: int


def paperlists_url(venue: str, year: int, base: str = PAPERLISTS_BASE) -> str:
    """The raw-file URL of one conference year in Paper Copilot's paperlists repository."""
    venue = venue.lower()
    if not _VENUE_RE.match(venue):
        raise InputError(f"venue {venue!r} is not a paperlists venue name (e.g. icml, nips, iclr)")
    if not 1950 <= year <= 2100:
        raise InputError(f"year {year} is out of range")
    return f"{base.rstrip('/')}/{venue}/{venue}{year}.json"


def _check_url(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InputError(f"{url}: only http:// and https:// URLs can be fetched")


def _download(url: str, handle, *, timeout: float, max_bytes: int) -> tuple[str, int]:
    """Stream the body into `handle`; returns (sha256, bytes). Raises _Retryable or FetchError."""
    request = urllib.request.Request(url, headers={"User-Agent": f"topic-explorer/{__version__}"})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - scheme checked
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code >= 500 or exc.code == 429:
            raise _Retryable(f"HTTP {exc.code} {exc.reason}") from None
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Retryable(f"could not connect ({reason})") from None
    with response:
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise FetchError(
                f"{url}: the server announces {int(declared):,} bytes, over the "
                f"{max_bytes:,}-byte limit (raise it with --max-bytes)"
            )
        digest, size = hashlib.sha256(), 0
        handle.seek(0)
        handle.truncate()
        try:
            while block := response.read(_CHUNK):
                size += len(block)
                if size > max_bytes:
                    raise FetchError(
                        f"{url}: body exceeds the {max_bytes:,}-byte limit (raise it with --max-bytes)"
                    )
                digest.update(block)
                handle.write(block)
        except http.client.IncompleteRead as exc:
            raise _Retryable(
                f"connection closed after {size + len(exc.partial):,} of {declared} bytes"
            ) from None
        except TimeoutError:
            raise _Retryable(f"no data for {timeout:g} s") from None
        except (ConnectionError, OSError) as exc:
            raise _Retryable(f"connection lost ({exc})") from None
        if declared and declared.isdigit() and size != int(declared):
            raise _Retryable(f"received {size:,} of {int(declared):,} bytes")
    return digest.hexdigest(), size


def _file_name(url: str, fmt: str, name: str | None) -> str:
    base = name or (Path(urlparse(url).path).name or "download")
    base = _SAFE_NAME.sub("_", base).lstrip(".") or "download"
    suffix = suffix_of(fmt)
    return base if base.lower().endswith(suffix) else f"{Path(base).stem}{suffix}"


@dataclass(frozen=True)
class FetchLimits:
    """How long and how often a download is tried, and how large it may be.

    Retries back off exponentially (backoff x 1, 2, 4 ... seconds) on server errors, 429,
    resets, timeouts and truncated bodies; a 4xx or an oversized body fails at once.
    """

    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = 1.0
    max_bytes: int = DEFAULT_MAX_BYTES


def fetch(
    url: str,
    dest_dir: Path,
    *,
    name: str | None = None,
    limits: FetchLimits = FetchLimits(),
    force: bool = False,
    log: Callable[[str], None] = print,
) -> Fetched:
    """Download `url` into `dest_dir`, verify it is a paper list we can read, keep it.

    The body goes to a temporary file first, so a failed or unreadable download leaves
    nothing behind under the final name.
    """
    _check_url(url)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest_dir, prefix=".fetch-", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w+b") as handle:
            sha, size = _download_retrying(url, handle, limits, log)
        if size == 0:
            raise FetchError(f"{url}: the server sent an empty body")
        fmt = _format_of(url, tmp)
        sniffed = tmp.with_name(tmp.name + suffix_of(fmt))
        os.replace(tmp, sniffed)
        tmp = sniffed
        papers = _count_papers(url, tmp, fmt)
        final = dest_dir / _file_name(url, fmt, name)
        if final.exists() and not force:
            raise FetchError(f"{final} already exists; pass --force to replace it")
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    (final.with_name(final.name + ".sha256")).write_text(f"{sha}  {final.name}\n")
    return Fetched(final, url, sha, size, fmt, papers)


def _download_retrying(
    url: str, handle, limits: FetchLimits, log: Callable[[str], None]
) -> tuple[str, int]:
    """`_download`, tried again after each retryable failure until `limits.retries` run out."""
    for attempt in range(limits.retries + 1):
        try:
            return _download(url, handle, timeout=limits.timeout, max_bytes=limits.max_bytes)
        except _Retryable as exc:
            if attempt == limits.retries:
                raise FetchError(
                    f"{url}: {exc} (gave up after {limits.retries + 1} attempts)"
                ) from None
            wait = limits.backoff * 2**attempt
            log(f"  {exc}; retrying in {wait:g} s ({attempt + 1}/{limits.retries})")
            time.sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _format_of(url: str, path: Path) -> str:
    """The format comes from the content (a URL may have no suffix or the wrong one);
    plain text is only the sniffer's fallback, so a known URL suffix wins over it."""
    fmt = detect_format(path)
    by_url = SUFFIXES.get(Path(urlparse(url).path).suffix.lower())
    return by_url if fmt == "text" and by_url else fmt


def _count_papers(url: str, path: Path, fmt: str) -> int:
    """The papers our reader finds in the download; none, or a reader's refusal, fails it."""
    try:
        result = READERS[fmt](path, ReadOptions())
    except InputError as exc:
        detail = str(exc).split(": ", 1)[-1]
        raise FetchError(f"{url}: not a readable paper list ({fmt}: {detail})") from None
    if not result.papers:
        raise FetchError(f"{url}: downloaded, but it holds no paper with an abstract")
    return len(result.papers)
