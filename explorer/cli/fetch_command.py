"""`explorer fetch`: download a Paper Copilot paperlist or any URL into data/, and say
which `explorer build` comes next. The download itself is explorer/build/fetch.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from explorer import artifacts
from explorer.errors import ExplorerError


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", nargs="+", metavar="SOURCE", help="'paperlists VENUE YEAR' or a URL"
    )
    parser.add_argument(
        "--out-dir", type=Path, default=Path("data"), help="where to save (default data/)"
    )
    parser.add_argument("--name", help="file name to save as (default: from the URL)")
    parser.add_argument("--force", action="store_true", help="replace an existing file")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per connect/read (30)")
    parser.add_argument("--retries", type=int, default=3, help="retries on 5xx/resets/timeouts (3)")
    parser.add_argument(
        "--max-bytes", type=int, default=300 * 1024 * 1024, help="refuse larger bodies (300 MB)"
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="paperlists repository raw URL (default: Paper Copilot's on GitHub)",
    )


def run(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.build import fetch

    out_dir, name = args.out_dir, args.name
    if args.source[0] == "paperlists":
        if len(args.source) != 3 or not args.source[2].isdigit():
            raise ExplorerError("usage: explorer fetch paperlists VENUE YEAR (e.g. icml 2025)")
        venue, year = args.source[1].lower(), int(args.source[2])
        url = fetch.paperlists_url(venue, year, args.base_url or fetch.PAPERLISTS_BASE)
        out_dir, name = out_dir / venue, name or f"{venue}{year}.json"
        corpus = f"{venue}{year}"
    elif len(args.source) == 1:
        url = args.source[0]
        corpus = None
    else:
        raise ExplorerError("usage: explorer fetch paperlists VENUE YEAR  |  explorer fetch URL")
    print(f"Fetching {url}", file=sys.stderr)
    got = fetch.fetch(
        url,
        out_dir,
        name=name,
        limits=fetch.FetchLimits(
            timeout=args.timeout, retries=args.retries, max_bytes=args.max_bytes
        ),
        force=args.force,
        log=lambda message: print(message, file=sys.stderr),
    )
    corpus = corpus or artifacts.suggest_corpus_name(got.path.stem)
    print(f"Saved {got.path} ({got.papers:,} papers, {got.bytes:,} bytes, {got.format})")
    print(f"sha256 {got.sha256} (recorded in {got.path.name}.sha256)")
    print(f"Next: explorer build {got.path} --name {corpus}")
