"""`explorer build`: its options, added from the build's settings table, and the handler that
maps them to a `BuildConfig` and runs the build.

The CLI checks nothing itself: `BuildConfig.validate` refuses a bad value or combination,
and the plan merges `--add`'s inputs (explorer/build/config.py, plan.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.build import settings
from explorer.build.sources.formats import SUFFIXES
from explorer.cli import report

if TYPE_CHECKING:  # the build world is imported when a build starts
    from explorer.build.config import BuildConfig
    from explorer.build.ray_engine import RayOptions


def arguments(parser: argparse.ArgumentParser) -> None:
    """What to build, then one option per row of the settings table, in its order."""
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help=f"files or folders ({' '.join(SUFFIXES)})",
    )
    parser.add_argument("--name", required=True, help="corpus name (letters, digits, . _ -)")
    for row in settings.SETTINGS:
        if row.flag is not None:
            _add_setting(parser, row)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_setting(parser: argparse.ArgumentParser, row: settings.Setting) -> None:
    if row.type is bool:
        parser.add_argument(row.flag, action="store_true", help=row.help_text())
        return
    extra = {key: value for key, value in (("choices", row.choices), ("metavar", row.metavar))
             if value is not None}  # fmt: skip
    parser.add_argument(row.flag, type=row.type, default=row.default, help=row.help_text(), **extra)


def run(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.build.pipeline import build

    result = build(build_config(args), cache_dir=cache_dir, progress=not args.no_progress)
    report.print_build_summary(result.run, result.reused)
    report.print_curation_carried(result.run)


def build_config(args: argparse.Namespace) -> BuildConfig:
    """The build's options as given; BuildConfig.validate, not the CLI, checks them."""
    from explorer.build.config import BuildConfig
    from explorer.build.sources import ReadOptions

    return BuildConfig(
        name=args.name,
        inputs=tuple(str(p) for p in args.inputs),
        ray=_ray_options(args),
        read_options=ReadOptions(**_given(args, settings.READ_OPTIONS)),
        **_given(args, settings.CONFIG),
    )


def _given(args: argparse.Namespace, part: str) -> dict[str, object]:
    """The values of the settings of `part` that have a flag, by field name."""
    return {
        row.name: getattr(args, row.name)
        for row in settings.SETTINGS
        if row.part == part and row.flag is not None
    }


def _ray_options(args: argparse.Namespace) -> RayOptions | None:
    """The Ray options as given, when the Ray engine or any --ray-* flag is; ray itself is
    imported only when the build starts."""
    flags = (args.ray_address, args.ray_batch_size, args.ray_actors_per_node)
    if args.engine != "ray" and all(v is None for v in flags):
        return None
    from explorer.build.embed import CHUNK_SIZE
    from explorer.build.ray_engine import RayOptions

    return RayOptions(
        address=args.ray_address,
        batch_size=CHUNK_SIZE if args.ray_batch_size is None else args.ray_batch_size,
        actors_per_node=args.ray_actors_per_node,
    )
