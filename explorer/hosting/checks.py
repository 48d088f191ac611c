"""Before anything starts: every one-line refusal of `explorer serve` and `explorer
dashboard` (no haproxy, no corpus, no streamlit, a bad host name, a port in use), so a
refused start leaves nothing running and nothing written.
"""

from __future__ import annotations

import errno
import importlib.util
import socket
import sys
from typing import TYPE_CHECKING

from explorer.hosting.haproxy import find_haproxy
from explorer.hosting.settings import HOST_NAME_RE, ServeError
from explorer.names import list_corpora

if TYPE_CHECKING:
    from explorer.hosting.options import ServeConfig


def check_ready(config: ServeConfig) -> str:
    """Every one-line refusal, before a process starts; returns haproxy's path."""
    haproxy = find_haproxy()
    if haproxy is None:
        raise ServeError(
            "haproxy is not installed: apt-get install haproxy (Debian/Ubuntu; "
            "`make serve` does it when root), or brew install haproxy"
        )
    if config.workers < 1:
        raise ServeError(f"--workers must be at least 1, not {config.workers}")
    if not (config.app_dir / "app.py").is_file():
        raise ServeError(f"{config.app_dir}: no app.py here to serve")
    if not list_corpora(config.cache_dir):
        raise ServeError(
            f"no corpus built under {config.cache_dir}: build one first "
            "(explorer build INPUT --name NAME)"
        )
    if importlib.util.find_spec("streamlit") is None:  # workers run with this Python
        raise ServeError(
            f"streamlit is not installed for {sys.executable}: pip install -r requirements.txt"
        )
    check_hosts(config.allowed_hosts)
    check_port_free(config.address, config.port)
    return haproxy


def check_hosts(names: tuple[str, ...] | list[str]) -> None:
    """A host name is letters, digits, dots and dashes, or an IPv6 address: nothing that
    could change the meaning of the haproxy or Streamlit configuration it goes into."""
    for name in names:
        if not HOST_NAME_RE.fullmatch(name.strip().strip("[]")):
            raise ServeError(f"--allowed-host {name!r} is not a host name or address")


def check_port_free(address: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ServeError(f"cannot listen on {address!r}: {exc.strerror}") from None
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as haproxy binds
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ServeError(
                    f"port {port} on {address} is in use: stop what listens there "
                    "or pick another --port"
                ) from None
            raise ServeError(f"cannot listen on {address}:{port}: {exc.strerror}") from None
