"""One client cannot take `explorer serve` down (issue 28, item 1, and the proxy's Origin
check): per-client connection caps, a visitors' limit below the proxy's own, a short header
timeout, a health endpoint outside the visitors' limit, and cross-site websockets refused
before a worker sees them. Loopback only: 127.0.0.2 and up are this machine too, so the
attacker and the visitor have different source addresses.

Before: 4,096 idle connections from one client filled haproxy's global limit and new
visitors (and the health check) timed out; slow headers held a slot for 10 s; a foreign
Origin reached a worker, whose check first called out to learn its public address.
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import time

import pytest

from explorer.hosting import settings
from explorer.hosting.processes import free_port
from tests.conftest import ROOT
from tests.e2e.conftest import haproxy_or_skip, kill_tree, start_serve

ATTACKER, VISITOR = "127.0.0.2", "127.0.0.3"


@pytest.fixture(scope="module")
def served(seed_cache, tmp_path_factory):
    haproxy_or_skip()
    port, log = free_port(), tmp_path_factory.mktemp("serve") / "serve.log"
    command = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(seed_cache), "serve",
               "--workers", "1", "--port", str(port)]  # fmt: skip
    proc, _ = start_serve(command, cwd=ROOT, cache=None, log=log)
    try:
        yield port, log
    finally:
        kill_tree(proc)


def connect(port: int, source: str, timeout: float = 5) -> socket.socket:
    sock = socket.socket()
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def ask(port: int, source: str, request: str, timeout: float = 5) -> str:
    """The response head to `request` from `source`, or "" when none came in time."""
    try:
        with connect(port, source, timeout) as sock:
            sock.sendall(request.encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                head += chunk
            return head.decode("latin-1")
    except OSError:
        return ""


def page(port: int) -> str:
    return f"GET / HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"


@contextlib.contextmanager
def flood(port: int, sources: list[str], each: int):
    """`each` idle connections from every address in `sources`, closed afterwards."""
    held: list[socket.socket] = []
    try:
        for source in sources:
            for _ in range(each):
                with contextlib.suppress(OSError):
                    held.append(connect(port, source, timeout=2))
        time.sleep(1)  # haproxy accepts (and rejects) them
        yield held
    finally:
        for sock in held:
            sock.close()


def still_open(sockets: list[socket.socket]) -> int:
    """How many of `sockets` the proxy has not closed."""
    count = 0
    for sock in sockets:
        sock.setblocking(False)
        try:
            count += sock.recv(1) != b""
        except BlockingIOError:
            count += 1  # nothing to read and not closed: held open
        except OSError:
            pass
    return count


def test_one_client_flooding_connections_cannot_lock_out_another(served):
    port, _ = served
    with flood(port, [ATTACKER], 4200) as held:
        started = time.monotonic()
        assert " 200 " in ask(port, VISITOR, page(port)).split("\r\n")[0]
        assert time.monotonic() - started < 5
        assert still_open(held) <= settings.CLIENT_CONNS


def test_slow_headers_are_cut_off(served):
    port, _ = served
    with connect(port, ATTACKER, timeout=30) as sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: localhost:{port}\r\n".encode())  # never ends
        started = time.monotonic()
        while sock.recv(4096):
            pass  # a 408, then the close
        waited = time.monotonic() - started
    assert waited < int(settings.HEADER_TIMEOUT.rstrip("s")) + 3


def test_a_foreign_origin_is_refused_before_any_worker_sees_it(served):
    port, _ = served
    handshake = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: localhost:{port}\r\n"
        "Origin: https://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    head = ask(port, VISITOR, handshake)
    assert head.startswith("HTTP/1.1 403"), head[:200]
    assert "x-explorer-worker" not in head.lower()  # the proxy answered, not a worker
    same_site = handshake.replace("https://evil.example", f"http://localhost:{port}")
    assert ask(port, VISITOR, same_site).startswith("HTTP/1.1 101")


def test_the_metrics_answer_the_hosts_machine_only(served):
    """Every request reaches a worker from loopback; the worker judges the address haproxy
    put in its client header, which replaces whatever the visitor sent."""
    port, _ = served
    metrics = f"GET /_stcore/metrics HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n"
    claimed = f"{settings.CLIENT_HEADER}: 127.0.0.1\r\nX-Forwarded-For: 127.0.0.1\r\n"
    assert ask(port, VISITOR, metrics + claimed + "\r\n").startswith("HTTP/1.1 404")
    assert ask(port, "127.0.0.1", metrics + "\r\n").startswith("HTTP/1.1 200")
    health = f"GET {settings.HEALTH_PATH} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n"
    assert ask(port, VISITOR, health).startswith("HTTP/1.1 200")


def test_a_too_long_link_gets_a_page_that_says_so(served):
    port, _ = served
    query = "topics=" + "x" * (settings.MAX_LINK_CHARS + 100)
    request = f"GET /?{query} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
    with connect(port, VISITOR, timeout=10) as sock:
        sock.sendall(request.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    text = answer.decode("utf-8", "replace")
    assert text.startswith("HTTP/1.1 414"), text[:200]
    assert "This link is too long" in text and f"{settings.MAX_LINK_CHARS:,}" in text
    assert "x-explorer-worker" not in text.lower()  # the proxy answered, not a worker
    within = f"GET /?q={'y' * 2000} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
    assert " 200 " in ask(port, VISITOR, within).split("\r\n")[0]


def test_the_health_endpoint_answers_while_visitors_fill_their_limit(served):
    port, log = served
    found = re.search(r"Health: http://127\.0\.0\.1:(\d+)(/\S+)", log.read_text())
    assert found, "serve printed no health endpoint"
    health_port, path = int(found.group(1)), found.group(2)
    sources = [f"127.0.1.{i}" for i in range(1, 91)]  # 90 x 46: past 4,000, and past 4,096
    with flood(port, sources, settings.CLIENT_CONNS - 4):
        assert ask(port, VISITOR, page(port), timeout=2) == ""  # the visitors' limit is full
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        assert ask(health_port, VISITOR, request).startswith("HTTP/1.1 200")
