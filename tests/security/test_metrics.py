"""Streamlit's metrics endpoint answers the host only (issue 52, item 5): it lists the
server's function names, live sessions and cache sizes. Tried on a plain `streamlit run
app.py` (what `explorer dashboard`, each serve worker and a published folder run) and on
`explorer dashboard --client-address-header`, loopback only: the visitor connects from
127.0.0.2, which is this machine too but not the host's own address.

Before: `/_stcore/metrics` answered anyone, under any allowed Host header.
"""

from __future__ import annotations

import socket

import pytest

from explorer.hosting.settings import CLIENT_HEADER_ENV
from explorer.view.ui import clients
from explorer.view.ui.asgi import is_metrics
from tests.conftest import EDIT_KEY
from tests.e2e.conftest import dashboard, start_server, stop_server

VISITOR = "127.0.0.2"
METRICS = "/_stcore/metrics"
# Spellings Starlette routes to the endpoint (decoded path, trailing slash redirected).
SPELLINGS = (METRICS, METRICS + "/", "/" + METRICS, "/_stcore/%6Detrics", METRICS + "?families=x")


def status(port: int, path: str, source: str, headers: dict[str, str] | None = None) -> int:
    """The status line's code of one GET from `source` (0 when nothing came back)."""
    lines = [f"GET {path} HTTP/1.1", f"Host: localhost:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    with socket.socket() as sock:
        sock.settimeout(10)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = sock.recv(4096).decode("latin-1")
    parts = head.split(" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


@pytest.fixture(scope="module")
def server(seed_cache):
    """One plain server with an edit key (the host's); its port."""
    proc, url = start_server(seed_cache, edit_key=EDIT_KEY)
    try:
        yield int(url.rsplit(":", 1)[1])
    finally:
        stop_server(proc)


def test_the_host_reads_the_metrics_and_a_visitor_gets_404(server):
    assert status(server, METRICS, "127.0.0.1") == 200
    for path in SPELLINGS:
        assert status(server, path, VISITOR) == 404, path
    assert status(server, "/_stcore/health", VISITOR) == 200  # the health check still answers


def test_a_visitor_cannot_claim_the_hosts_address(server):
    """No header is trusted unless the server was told to trust it."""
    for name in ("X-Forwarded-For", "X-Real-IP", "X-Explorer-Client", "Forwarded"):
        value = "for=127.0.0.1" if name == "Forwarded" else "127.0.0.1"
        assert status(server, METRICS, VISITOR, {name: value}) == 404, name


def test_the_edit_key_opens_the_metrics_and_a_wrong_one_does_not(server):
    assert status(server, METRICS, VISITOR, {"Authorization": f"Bearer {EDIT_KEY}"}) == 200
    for wrong in (f"Bearer {EDIT_KEY[:-1]}", f"Basic {EDIT_KEY}", "Bearer " + "k" * 5000, "Bearer"):
        assert status(server, METRICS, VISITOR, {"Authorization": wrong}) == 404, wrong[:40]


def test_a_request_through_a_local_proxy_is_not_the_hosts(server):
    """Without a trusted header, a proxy on this machine connects from 127.0.0.1 for every
    visitor; the headers it adds say the request is not the host's browser."""
    for name in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
        assert status(server, METRICS, "127.0.0.1", {name: "127.0.0.1"}) == 404, name


def test_guessing_the_key_through_the_metrics_meets_the_sign_in_limit(server):
    """Wrong Bearer keys count as wrong sign-ins (editing.SOURCE_TRIES per address): after
    the limit even the right key is refused from that address, and another still works."""
    from explorer.view.ui.editing import SOURCE_TRIES

    guesser = "127.0.0.9"
    for i in range(SOURCE_TRIES):
        assert status(server, METRICS, guesser, {"Authorization": f"Bearer guess-{i}"}) == 404
    assert status(server, METRICS, guesser, {"Authorization": f"Bearer {EDIT_KEY}"}) == 404
    assert status(server, METRICS, "127.0.0.8", {"Authorization": f"Bearer {EDIT_KEY}"}) == 200


def test_without_an_edit_key_only_the_hosts_machine_reads_them(seed_cache):
    proc, url = start_server(seed_cache, edit_key=None)
    try:
        port = int(url.rsplit(":", 1)[1])
        assert status(port, METRICS, "127.0.0.1") == 200
        assert status(port, METRICS, VISITOR, {"Authorization": "Bearer "}) == 404
    finally:
        stop_server(proc)


def test_dashboard_trusts_the_named_proxy_header_for_metrics(seed_cache, tmp_path):
    """`explorer dashboard --client-address-header X-Forwarded-For`: behind a TLS proxy on
    this machine every request arrives from 127.0.0.1, so the header's last address (the
    one the proxy appended) decides, and a client's own earlier entries do not."""
    options = ("--read-only", "--client-address-header", "X-Forwarded-For")
    log = tmp_path / "dashboard.log"
    with dashboard(seed_cache, log, *options, drop_env=(CLIENT_HEADER_ENV,)) as port:
        visitor = {"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}  # claimed, then the proxy's
        assert status(port, METRICS, "127.0.0.1", visitor) == 404
        assert status(port, METRICS, "127.0.0.1", {"X-Forwarded-For": "::1"}) == 200
        # A proxy adding its own line after the client's: every line is read, the last wins.
        lines = "X-Forwarded-For: 127.0.0.1\r\nX-Forwarded-For"
        assert status(port, METRICS, "127.0.0.1", {lines: "203.0.113.9"}) == 404
        assert status(port, METRICS, "127.0.0.1") == 404  # no trusted header: nobody's


@pytest.mark.parametrize(
    ("path", "routed"),
    [
        (METRICS, True), (METRICS + "/", True), ("/base" + METRICS, True), ("//" + METRICS, True),
        ("/_stcore/health", False), ("/_stcore/metricsx", False), ("/metrics", False),
    ],
)  # fmt: skip
def test_is_metrics(path, routed):
    assert is_metrics(path) is routed


def test_a_trusted_header_decides_alone(monkeypatch):
    monkeypatch.setenv(CLIENT_HEADER_ENV, "X-Explorer-Client")
    assert clients.is_host_request("127.0.0.1", "203.0.113.9", forwarded=True)
    assert not clients.is_host_request(None, "127.0.0.1", forwarded=False)  # nobody's
    assert not clients.is_host_request("", "127.0.0.1", forwarded=False)
    monkeypatch.delenv(CLIENT_HEADER_ENV)
    assert clients.is_host_request(None, "127.0.0.1", forwarded=False)
    assert not clients.is_host_request(None, "127.0.0.1", forwarded=True)


def test_the_client_is_the_trusted_headers_last_address(monkeypatch):
    monkeypatch.delenv(CLIENT_HEADER_ENV, raising=False)
    assert clients.client_address("127.0.0.1", "127.0.0.2") == "127.0.0.2"  # not trusted
    monkeypatch.setenv(CLIENT_HEADER_ENV, "X-Forwarded-For")
    assert clients.client_address("127.0.0.1, 198.51.100.7", "127.0.0.1") == "198.51.100.7"
    assert clients.client_address(None, "127.0.0.1") == "127.0.0.1"
    assert len(clients.client_address("9" * 500, None)) == clients.MAX_ADDRESS_CHARS
    assert [clients.is_host(a) for a in ("127.0.0.1", "::1", "[::1]", "::ffff:127.0.0.1")] == [
        True, True, True, True
    ]  # fmt: skip
    assert not any(clients.is_host(a) for a in ("127.0.0.2", "10.0.0.1", "localhost", "", None))
