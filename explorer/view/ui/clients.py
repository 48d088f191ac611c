"""Who a request comes from, as every dashboard server judges it: the per-source sign-in
limit (editing.py) and the host-only metrics endpoint (asgi.py) both ask here.

A header names the client only when the server was told to trust it (CLIENT_HEADER_ENV):
`explorer serve` sets it to the header its haproxy overwrites with the connecting address,
and `explorer dashboard --client-address-header NAME` to a TLS proxy's header. Anything
else a client sends about itself is ignored, and the socket's address is the client.
"""

from __future__ import annotations

import ipaddress
import os

from explorer.hosting.settings import CLIENT_HEADER_ENV

# The addresses a browser on the host's own machine connects from. Not all of 127.0.0.0/8:
# a proxy on this machine may forward visitors from other loopback addresses, and the
# security tests play visitors from 127.0.0.2 and up.
HOST_ADDRESSES = frozenset({"127.0.0.1", "::1"})
MAX_ADDRESS_CHARS = 64  # longer than any IPv6 address with a zone: the rest is not kept


def trusted_header() -> str | None:
    """The header this server was told carries the client's address, if any."""
    return os.environ.get(CLIENT_HEADER_ENV) or None


def from_header(value: str) -> str:
    """The client's address in a trusted header: its last comma-separated item, the one the
    trusted proxy itself appended (the earlier ones are whatever the client claimed)."""
    return value.rsplit(",", 1)[-1].strip()[:MAX_ADDRESS_CHARS]


def client_address(header_value: str | None, socket_address: str | None) -> str | None:
    """The client of one request: the trusted header's address when the request has one,
    else the socket's (a request that did not pass the proxy came from where it says)."""
    if trusted_header() and header_value:
        return from_header(header_value) or None
    return socket_address[:MAX_ADDRESS_CHARS] if socket_address else None


# Headers a proxy adds: a request carrying one came through a proxy, not from a browser on
# this machine, whatever its socket says (a TLS proxy on this machine connects from loopback).
FORWARDING_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip")


def is_host_request(trusted_value: str | None, socket_address: str | None, forwarded: bool) -> bool:
    """Whether a request comes from the host's own machine. With a trusted header, only its
    address counts (a request without one is nobody's); without, the socket's, unless the
    request came through a proxy (`forwarded`: it carries one of FORWARDING_HEADERS)."""
    if trusted_header():
        return bool(trusted_value) and is_host(from_header(trusted_value))
    return not forwarded and is_host(socket_address)


def is_host(address: str | None) -> bool:
    """Whether `address` is the host's own machine (127.0.0.1 or ::1, also IPv4-mapped)."""
    if not address:
        return False
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(parsed, "ipv4_mapped", None)
    return str(mapped or parsed) in HOST_ADDRESSES
