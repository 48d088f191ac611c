"""The `explorer` command line, the project's contract with its users (docs/architecture.md).

Each command is one row of COMMANDS (name, help, arguments, handler): the parser, the
dispatch in `main` and docs/cli.md (generated from `_parser` by reference.py) all read that
table. The rows' arguments and handlers live in this package's modules, one job each:
build_command.py, corpus_commands.py (info, export, list, curate), hosting_commands.py
(publish, serve, dashboard), fetch_command.py; what they print, report.py.

Expected failures print one line on stderr and exit 2; heavy modules load only
inside `build`, so `info`, `list` and `export` answer instantly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer import __version__, artifacts
from explorer.build.sources.formats import describe_formats
from explorer.cli import build_command, corpus_commands, fetch_command, hosting_commands
from explorer.errors import ExplorerError, describe_os_error

EXIT_ERROR = 2


@dataclass(frozen=True)
class Command:
    """One `explorer` command: the parser, `docs/cli.md` and the dispatch all read this row."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Path], None]
    description: str | None = None
    epilog: str | None = None


COMMANDS: tuple[Command, ...] = (
    Command(
        "fetch",
        "download a paper list (Paper Copilot paperlists or any URL) into data/",
        fetch_command.arguments,
        fetch_command.run,
        description="explorer fetch paperlists VENUE YEAR  |  explorer fetch URL",
    ),
    Command(
        "publish",
        "write a self-contained, viewer-only folder serving one corpus (for hosting)",
        hosting_commands.publish_arguments,
        hosting_commands.run_publish,
    ),
    Command(
        "serve",
        "serve the dashboard with N Streamlit workers behind haproxy (every core); "
        "Ctrl-C stops all",
        hosting_commands.serve_arguments,
        hosting_commands.run_serve,
    ),
    Command(
        "dashboard",
        "serve the dashboard on this machine (one process, loopback; `make run`); "
        "the host edits through the link it prints",
        hosting_commands.dashboard_arguments,
        hosting_commands.run_dashboard,
    ),
    Command(
        "build",
        "build or update a corpus from abstracts",
        build_command.arguments,
        build_command.run,
        epilog="input formats, by suffix (any other file by its content): " + describe_formats(),
    ),
    Command(
        "info",
        "summary of a corpus's latest run",
        corpus_commands.info_arguments,
        corpus_commands.run_info,
    ),
    Command(
        "export",
        "one CSV row per paper with its topic and map position",
        corpus_commands.export_arguments,
        corpus_commands.run_export,
    ),
    Command(
        "list",
        "corpora built under the cache",
        corpus_commands.no_arguments,
        corpus_commands.run_list,
    ),
    Command(
        "curate",
        "rename, merge, hide or move topics, kept as an overlay over every run",
        corpus_commands.curate_arguments,
        corpus_commands.run_curate,
        description="explorer curate NAME rename NODE LABEL | merge NODE NODE... | hide NODE "
        "| unhide NODE | move PAPER_ID NODE | undo | revert ID | history | compact",
    ),
)


def _parser() -> argparse.ArgumentParser:
    """The whole command line, from COMMANDS (docs/cli.md is generated from this parser)."""
    parser = argparse.ArgumentParser(
        prog="explorer", description="Build and inspect topic-explorer corpora."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where corpora and embeddings are cached (default: $EXPLORER_CACHE_DIR or ./cache)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_arguments(
            sub.add_parser(
                command.name,
                help=command.help,
                description=command.description,
                epilog=command.epilog,
            )
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cache_dir = args.cache_dir or artifacts.default_cache_dir()
    run = next(c.run for c in COMMANDS if c.name == args.command)
    try:
        run(args, cache_dir)
    except ExplorerError as exc:
        print(f"explorer: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # disk full, a path under a file, an unwritable folder...
        print(f"explorer: error: {describe_os_error(exc, cache_dir)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("explorer: interrupted", file=sys.stderr)
        return 130
    return 0
