"""docs/cli.md, generated from the parser `explorer` itself uses and the build's settings
table, so the reference cannot drift from the code: `make docs` writes it,
tests/test_docs.py fails when it would change.

Light: argparse and explorer/build/settings.py (plain data); writing it imports no world.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from explorer.build import settings

WIDTH = 100  # help text wrapped at a fixed width: the file must not depend on the terminal
HEADER = """\
# Command reference

Generated from `explorer`'s own parser by `make docs` (`python -m explorer.cli.reference`);
do not edit by hand: `tests/test_docs.py` fails when this file and the parser disagree.
Every command takes `--cache-dir DIR` before the command name (default: `$EXPLORER_CACHE_DIR`,
else `./cache`). Errors print one line on stderr (`explorer: error: ...`) and exit with
status 2. What each command does, with examples, is in the [README](../README.md) and the
pages of [docs/](.).
"""


def _fixed_width(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=WIDTH)


def _commands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    """The parser and every sub-command's parser, depth first, with its one-line help."""
    yield parser, parser.description or ""
    for action in parser._actions:  # argparse's public API offers no walk of sub-commands
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                for child, text in _commands(sub):
                    yield child, (helps.get(name, "") if child is sub else text)


def reference(parser: argparse.ArgumentParser) -> str:
    """The Markdown reference: one section per command, its help as argparse prints it."""
    parts = [HEADER]
    for command, summary in _commands(parser):
        _fixed_width(command)
        parts += [f"## `{command.prog}`", "", summary, "", "```text", command.format_help().rstrip(), "```", ""]  # fmt: skip
    parts += settings_table()
    return "\n".join(parts)


SETTINGS_INTRO = """\
## Build settings

`explorer build`'s options are the rows of one table, `explorer/build/settings.py`: the
parser above, `BuildConfig`'s defaults and its checks all read it. A setting without a flag
is for code and tests (`BuildConfig(...)`).
"""


def settings_table() -> list[str]:
    """The settings table as Markdown lines: name, flag, default, what is allowed, help."""
    lines = [SETTINGS_INTRO, "| setting | flag | default | allowed | help |", "|---|---|---|---|---|"]  # fmt: skip
    for row in settings.SETTINGS:
        flag = f"`{row.flag}`" if row.flag else "-"
        cells = (f"`{row.name}`", flag, _default(row), _allowed(row), row.help_text())
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return [*lines, ""]


def _default(row: settings.Setting) -> str:
    if isinstance(row.default, int) and not isinstance(row.default, bool):
        return f"{row.default:,}"
    return f"`{row.default!r}`"


def _allowed(row: settings.Setting) -> str:
    if row.choices:
        return ", ".join(f"`{c}`" for c in row.choices)
    if row.bounds is None:
        return ""
    least, most = row.bounds
    return f"{least:,} to {most:,}" if most is not None else f"at least {least:,}"


def main(argv: list[str] | None = None) -> int:
    from explorer.cli import _parser

    target = Path(argv[0] if argv else "docs/cli.md")
    target.write_text(reference(_parser()), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
