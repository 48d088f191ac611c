"""A raw websocket handshake on loopback: the status a server answers (101, 403...). Standard
library only: scripts that run outside pytest (the private-namespace probe, the install
check) use it too."""

from __future__ import annotations

import socket


def handshake_status(port: int, host: str, origin: str | None = None) -> int:
    """The HTTP status of a websocket handshake to 127.0.0.1:`port` naming `host` (and the
    page's `origin`, as a browser sends it)."""
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\n"
        + (f"Origin: {origin}\r\n" if origin else "")
        + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        return int(sock.recv(4096).split(b" ", 2)[1])
