"""What to serve and how: `ServeConfig`, and the command-line options `explorer serve`,
`explorer dashboard` and a published folder's `serve.py` turn into one.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from explorer.build.models import usable_cores
from explorer.hosting.settings import (
    CLIENT_CONNS,
    DEFAULT_ADDRESS,
    DEFAULT_PORT,
    LOOPBACK_HOSTS,
)


@dataclass(frozen=True)
class ServeConfig:
    """What to serve: the app folder (its .streamlit/config.toml applies), the cache, how."""

    app_dir: Path
    cache_dir: Path
    workers: int
    port: int = DEFAULT_PORT
    address: str = DEFAULT_ADDRESS
    allowed_hosts: tuple[str, ...] = ()
    edit: bool = False  # the host edits: with the configured key, else a fresh one
    client_conns: int = CLIENT_CONNS  # concurrent connections per client address
    # Behind a TLS proxy every visitor arrives from its address: name the header it sets
    # to the visitor's (e.g. X-Forwarded-For; its last address, the one the proxy added).
    client_address_header: str | None = None
    health_port: int = 0  # the proxy's health endpoint on 127.0.0.1 (0: a free port)

    def hosts(self) -> list[str]:
        """The names a request's Host may carry: loopback, the address listened on, and
        the names the host configured (--allowed-host)."""
        names = [*LOOPBACK_HOSTS, *self.allowed_hosts]
        if self.address not in ("0.0.0.0", "::", ""):
            names.append(self.address)
        return list(dict.fromkeys(n.strip().lower().strip("[]") for n in names if n.strip()))


def host_flags(hosts: list[str]) -> list[str]:
    """Streamlit's own Host check on its websocket (server.allowedHosts), one flag each."""
    return [flag for host in hosts for flag in ("--server.allowedHosts", host)]


def public_url(config: ServeConfig) -> str:
    """Where visitors on this machine reach the service (loopback for every interface)."""
    host = config.address
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{config.port}"


def default_workers() -> int:
    """One Streamlit process per core this process may run on (a container's CPU set, not
    the host's count: `models.usable_cores`, which the build's thread counts read too)."""
    return usable_cores()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `explorer serve` and a published folder's `serve.py` share."""
    parser.add_argument(
        "--workers",
        type=int,
        default=default_workers(),
        help="Streamlit processes (default: one per core this process may use)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"public port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        help=f"address to listen on (default {DEFAULT_ADDRESS}: this machine only; "
        "0.0.0.0 for every interface)",
    )
    add_host_argument(parser)
    parser.add_argument(
        "--client-conns",
        type=_positive,
        default=CLIENT_CONNS,
        metavar="N",
        help=f"connections one client address may hold at once (default {CLIENT_CONNS})",
    )
    add_client_header_argument(parser)


def add_client_header_argument(parser: argparse.ArgumentParser) -> None:
    """`--client-address-header`, shared by `explorer serve` and `explorer dashboard`."""
    parser.add_argument(
        "--client-address-header",
        type=header_name,
        metavar="NAME",
        help="behind a trusted proxy: the header carrying the visitor's address (e.g. "
        "X-Forwarded-For; its last address counts), for the per-client limits and the "
        "host-only metrics",
    )


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def header_name(text: str) -> str:
    """An HTTP header name (a token), so it cannot change haproxy's configuration."""
    if not re.fullmatch(r"[A-Za-z0-9-]{1,64}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a header name")
    return text


def add_host_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name visitors use (repeatable; localhost and the --address are "
        "always allowed): requests naming any other host are refused",
    )
