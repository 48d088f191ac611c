"""The commands that put a corpus in front of visitors: `publish` writes a viewer-only
folder, `serve` runs the workers behind haproxy, `dashboard` one process on this machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer.hosting import options
from explorer.hosting.settings import DEFAULT_ADDRESS, DEFAULT_PORT


def publish_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="corpus to publish (its latest run)")
    parser.add_argument("dest", type=Path, metavar="DIR", help="folder to write")
    parser.add_argument(
        "--force",
        action="store_true",
        help="also replace files an earlier publish wrote that were edited since "
        "(never touches files it did not write)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name visitors will use (repeatable; localhost names are always "
        "allowed): written into the folder's Streamlit config, other names are refused",
    )


def run_publish(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.hosting.publish import publish

    hosts = tuple(args.allowed_host)
    dest = publish(cache_dir, args.name, args.dest, force=args.force, allowed_hosts=hosts)
    print(f"Published {args.name!r} to {dest}")
    print(f"Try it: cd {dest} && pip install -r requirements.txt && streamlit run app.py")
    print(f"Deploying (Streamlit Community Cloud, Docker): {dest / 'README.md'}")


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_arguments(parser)
    parser.add_argument(
        "--edit",
        action="store_true",
        help="let the host edit curation: with EXPLORER_EDIT_KEY or the edit_key in "
        ".streamlit/secrets.toml, else a fresh key printed in a one-click link",
    )


def run_serve(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.hosting.app_home import app_dir
    from explorer.hosting.serve import serve

    config = options.ServeConfig(
        app_dir=app_dir(),
        cache_dir=cache_dir,
        workers=args.workers,
        port=args.port,
        address=args.address,
        allowed_hosts=tuple(args.allowed_host),
        edit=args.edit,
        client_conns=args.client_conns,
        client_address_header=args.client_address_header,
    )
    serve(config)


def dashboard_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="default %(default)s")
    parser.add_argument(
        "--address", default=DEFAULT_ADDRESS, help="address to listen on (default %(default)s)"
    )
    options.add_host_argument(parser)
    parser.add_argument(
        "--read-only", action="store_true", help="nobody edits curation from the dashboard"
    )
    options.add_client_header_argument(parser)


def run_dashboard(args: argparse.Namespace, cache_dir: Path) -> None:
    from explorer.hosting.app_home import app_dir
    from explorer.hosting.serve import dashboard

    config = options.ServeConfig(
        app_dir=app_dir(),
        cache_dir=cache_dir,
        workers=1,
        port=args.port,
        address=args.address,
        allowed_hosts=tuple(args.allowed_host),
        edit=not args.read_only,
        client_address_header=args.client_address_header,
    )
    dashboard(config)
