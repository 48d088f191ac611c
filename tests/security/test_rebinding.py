"""DNS rebinding: a web page on an attacker's name that resolves to this machine must not
reach the dashboard. Its requests carry the attacker's name in `Host` (and a matching
`Origin`), so the server refuses any Host it does not answer to: Streamlit's
`server.allowedHosts` for the websocket (plain `streamlit run`, `explorer dashboard`, each
`explorer serve` worker) and `explorer serve`'s haproxy for every request.

Before this check a websocket handshake naming `rebind.attacker.test` was accepted (101)
by both, and served the Curate forms.
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys

import pytest

from explorer.hosting.processes import free_port
from tests.conftest import EDIT_KEY, ROOT
from tests.e2e.conftest import (
    dashboard,
    haproxy_or_skip,
    kill_tree,
    start_serve,
    start_server,
    stop_server,
)

ATTACKER = "rebind.attacker.test"


def handshake(port: int, host: str, path: str = "/_stcore/stream") -> int:
    """The status a websocket handshake to 127.0.0.1:`port` naming `host` gets (101 is
    accepted), as the attacker's page would send it (Origin on the same name)."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: http://{host}:{port}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n"
    )
    return _status(port, request)


def get(port: int, host: str, path: str = "/") -> int:
    return _status(port, f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n")


def _status(port: int, request: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(1024)
            if not chunk:
                return 0  # closed without an answer: refused
            head += chunk
    return int(head.split(b" ", 2)[1])


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def test_plain_streamlit_run_refuses_a_rebinding_host(seed_cache):
    """The project's .streamlit/config.toml sets allowedHosts for a plain `streamlit run`."""
    proc, url = start_server(seed_cache, edit_key=EDIT_KEY)
    try:
        port = port_of(url)
        assert handshake(port, "localhost") == 101  # the host's own browser
        assert handshake(port, "127.0.0.1") == 101
        assert handshake(port, ATTACKER) != 101
        assert handshake(port, "127.0.0.1.nip.io") != 101
    finally:
        stop_server(proc)


def test_explorer_serve_refuses_a_rebinding_host_for_every_request(seed_cache, tmp_path):
    haproxy_or_skip()
    port = free_port()
    command = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(seed_cache), "serve",
               "--workers", "1", "--port", str(port), "--allowed-host", "explorer.example.org"]  # fmt: skip
    proc, url = start_serve(command, cwd=ROOT, cache=None, log=tmp_path / "serve.log")
    try:
        assert get(port, "127.0.0.1") == 200
        assert get(port, "explorer.example.org") == 200  # the name the host configured
        assert get(port, ATTACKER) == 403
        assert get(port, ATTACKER, "/_stcore/health") == 403
        assert handshake(port, "localhost") == 101
        assert handshake(port, ATTACKER) == 403
        assert "Read-only" in (tmp_path / "serve.log").read_text()  # no --edit: nobody edits
    finally:
        kill_tree(proc)


def test_explorer_serve_refuses_a_host_name_that_is_not_one(seed_cache, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "--cache-dir", str(seed_cache), "serve",
         "--port", str(free_port()), "--allowed-host", "evil\n    http-request allow"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "is not a host name" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_explorer_dashboard_listens_on_loopback_and_prints_the_hosts_link(seed_cache, tmp_path):
    """`make run`'s command: loopback only, the expected names only, and a one-click link
    whose key signs the host in."""
    log = tmp_path / "dashboard.log"
    with dashboard(seed_cache, log) as port:
        text = log.read_text()
        line = next(ln for ln in text.splitlines() if "edit_key=" in ln)
        key = line.split("edit_key=", 1)[1].split()[0]
        assert len(key) >= 32 and f"http://127.0.0.1:{port}/?edit_key=" in line
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True)
        if listening.returncode == 0:  # iproute2's ss: the socket is bound to loopback only
            assert f"127.0.0.1:{port}" in listening.stdout.decode()
            assert f"0.0.0.0:{port}" not in listening.stdout.decode()
        assert handshake(port, "localhost") == 101
        assert handshake(port, ATTACKER) != 101


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "::1", "explorer.example.org"])
def test_expected_names_are_the_loopback_ones_and_the_configured(name, tmp_path):
    from explorer.hosting.options import ServeConfig

    config = ServeConfig(tmp_path, tmp_path, 1, allowed_hosts=("Explorer.Example.org",))
    assert name in config.hosts() and ATTACKER not in config.hosts()


# --- a published folder (explorer publish): its hosts cannot be known at build time -----

PUBLISHED_NAME = "explorer.example.org"


@pytest.fixture
def published(seed_cache, tmp_path):
    """The seed corpus published for visitors who use PUBLISHED_NAME."""
    from explorer.hosting.publish import publish

    return publish(seed_cache, "seed", tmp_path / "site", allowed_hosts=(PUBLISHED_NAME,))


def test_a_published_folder_served_by_plain_streamlit_refuses_a_rebinding_host(published):
    """`streamlit run app.py` in the folder (its README's command; the test adds a loopback
    address): the configured name and loopback are served, the attacker's name is not."""
    proc, url = start_server(published / "cache", app_dir=published, edit_key=None)
    try:
        port = port_of(url)
        assert handshake(port, PUBLISHED_NAME) == 101
        assert handshake(port, "localhost") == 101
        assert handshake(port, ATTACKER) != 101
    finally:
        stop_server(proc)


def test_a_published_folder_takes_its_host_names_from_the_environment(published, monkeypatch):
    """STREAMLIT_SERVER_ALLOWED_HOSTS (space-separated) names hosts at serve time, and
    replaces the config's list rather than adding to it (the README says so)."""
    monkeypatch.setenv("STREAMLIT_SERVER_ALLOWED_HOSTS", "localhost explorer.example.net")
    proc, url = start_server(published / "cache", app_dir=published, edit_key=None)
    try:
        port = port_of(url)
        assert handshake(port, "explorer.example.net") == 101
        assert handshake(port, "localhost") == 101
        assert handshake(port, PUBLISHED_NAME) != 101  # replaced, not added to
        assert handshake(port, "127.0.0.1") != 101
        assert handshake(port, ATTACKER) != 101
    finally:
        stop_server(proc)


def test_a_published_folders_serve_py_answers_to_its_configured_names(published, tmp_path):
    haproxy_or_skip()
    port = free_port()
    command = [sys.executable, "serve.py", "--workers", "1", "--port", str(port)]
    proc, url = start_serve(command, cwd=published, cache=None, log=tmp_path / "serve.log")
    try:
        assert get(port, PUBLISHED_NAME) == 200
        assert handshake(port, PUBLISHED_NAME) == 101
        assert get(port, ATTACKER) == 403
        assert handshake(port, ATTACKER) == 403
    finally:
        kill_tree(proc)
