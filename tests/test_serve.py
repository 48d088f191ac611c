"""explorer/hosting/ (serving) without a server: the haproxy config it writes, its one-line refusals,
how it stops children and gives up on a worker that keeps exiting. The real thing (haproxy
and two workers) is tests/e2e/test_serve.py."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from explorer import cli
from explorer.hosting import checks, haproxy, options, processes, settings, supervisor
from explorer.hosting import serve as serving
from explorer.names import list_corpora
from tests.conftest import ROOT

WORKERS = [
    supervisor.Worker("w1", 5001, Path("w1.log")),
    supervisor.Worker("w2", 5002, Path("w2.log")),
]
PAGE = ROOT / "cache" / settings.LONG_LINK_PAGE  # rendered only: never read


@pytest.fixture
def one_corpus(tmp_path) -> Path:
    """A cache holding what counts as a built corpus (a run with its manifest)."""
    run = tmp_path / "cache" / "tiny" / "run1"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text("{}")
    (run.parent / "latest").write_text("run1")
    return tmp_path / "cache"


@pytest.fixture
def haproxy_found(monkeypatch) -> None:
    """The checks below run before haproxy would start: it need not be installed."""
    monkeypatch.setattr(checks, "find_haproxy", lambda: "/usr/sbin/haproxy")


def _serve(capsys, cache: Path, *args: str) -> tuple[int, str]:
    code = cli.main(["--cache-dir", str(cache), "serve", *args])
    return code, capsys.readouterr().err


def test_config_is_cookie_sticky_health_checked_and_keeps_websockets_open():
    config = options.ServeConfig(app_dir=ROOT, cache_dir=ROOT / "cache", workers=2, port=8600)
    text = haproxy.render_config(config, WORKERS, PAGE)
    assert "bind 127.0.0.1:8600" in text
    assert "cookie SERVERID insert indirect nocache" in text
    assert "server w1 127.0.0.1:5001 cookie w1" in text
    assert "server w2 127.0.0.1:5002 cookie w2" in text
    # New sessions by open connections; never by source address (one NAT = one worker).
    assert "balance leastconn" in text and "balance source" not in text
    assert "option httpchk GET /_stcore/health" in text
    assert f"timeout tunnel {settings.TUNNEL_TIMEOUT}" in text
    assert "option redispatch" in text


def test_free_ports_are_distinct_and_bindable_on_loopback():
    ports = processes.free_ports(6)
    assert len(set(ports)) == 6
    with contextlib.ExitStack() as stack:
        for port in ports:
            stack.enter_context(socket.socket()).bind(("127.0.0.1", port))


def _config(tmp_path: Path, **given) -> options.ServeConfig:
    return options.ServeConfig(app_dir=tmp_path, cache_dir=tmp_path, workers=2, **given)


def test_one_draw_gives_each_worker_and_the_health_check_its_own_port(tmp_path):
    ports, config = serving.draw_ports(_config(tmp_path, port=8765))
    assert len(set([*ports, config.health_port, 8765])) == 4


def test_the_drawn_ports_avoid_the_public_and_a_given_health_port(tmp_path, monkeypatch):
    """Both are free until haproxy binds them, so the kernel may hand either out."""
    # Exactly `count` ports, the two taken ones first: a draw too small runs short.
    monkeypatch.setattr(
        serving, "free_ports", lambda count: [8765, 9100, *range(5001, 5001 + count)][:count]
    )
    ports, config = serving.draw_ports(_config(tmp_path, port=8765, health_port=9100))
    assert ports == [5001, 5002]
    assert config.health_port == 9100
    ports, config = serving.draw_ports(_config(tmp_path, port=8765))
    assert 8765 not in {*ports, config.health_port}
    assert len({*ports, config.health_port}) == 3


def test_idle_visitors_stay_connected_through_the_proxy():
    """Streamlit's websocket ping (the app's config) comes well within the proxy's idle
    timeout, so only a dead client's tunnel is ever closed for silence."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    ping = config["server"]["websocketPingInterval"]
    tunnel = int(settings.TUNNEL_TIMEOUT.rstrip("m")) * 60
    assert 0 < 2 * ping <= tunnel


def test_client_limits_key_on_the_trusted_header_only_when_asked():
    plain = haproxy.render_config(options.ServeConfig(ROOT, ROOT / "cache", 2), WORKERS, PAGE)
    assert "tcp-request connection track-sc0 src" in plain
    assert f"sc0_conn_cur gt {settings.CLIENT_CONNS}" in plain
    proxied = options.ServeConfig(
        ROOT, ROOT / "cache", 2, client_conns=7, client_address_header="X-Forwarded-For"
    )
    text = haproxy.render_config(proxied, WORKERS, PAGE)
    assert "http-request track-sc0 req.hdr_ip(X-Forwarded-For,-1)" in text
    assert "sc0_conn_cur gt 7" in text and "track-sc0 src" not in text


@pytest.mark.parametrize("name", ["X-Real-IP\nbind 0.0.0.0:1", "a b", "", "x" * 65])
def test_a_client_header_that_is_not_a_header_name_is_refused(name):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        options.header_name(name)


def test_the_page_path_is_one_config_word_whatever_it_holds(tmp_path):
    path = haproxy.find_haproxy()
    if path is None:
        pytest.skip("haproxy not installed (make test installs it when run as root)")
    odd = tmp_path / "a dir's #1 $HOME"
    odd.mkdir()
    config = options.ServeConfig(
        app_dir=ROOT, cache_dir=odd, workers=2, port=8600, health_port=8601
    )
    haproxy.check_config(path, haproxy.write_config(config, WORKERS, odd))


def test_haproxy_accepts_the_config(tmp_path):
    path = haproxy.find_haproxy()
    if path is None:
        pytest.skip("haproxy not installed (make test installs it when run as root)")
    config = options.ServeConfig(
        app_dir=ROOT, cache_dir=tmp_path, workers=2, port=8600, health_port=8601
    )
    cfg = haproxy.write_config(config, WORKERS, tmp_path)
    haproxy.check_config(path, cfg)  # raises with haproxy's complaint (the page included)
    assert "too long" in (tmp_path / settings.LONG_LINK_PAGE).read_text()


def test_without_haproxy_one_line_says_how_to_install(monkeypatch, capsys, one_corpus):
    monkeypatch.setattr(checks, "find_haproxy", lambda: None)
    code, err = _serve(capsys, one_corpus)
    assert code == cli.EXIT_ERROR
    assert err.count("\n") == 1 and "haproxy is not installed" in err
    assert "apt-get install haproxy" in err and "make serve" in err


def test_without_a_corpus_one_line_says_to_build(haproxy_found, capsys, tmp_path):
    code, err = _serve(capsys, tmp_path / "empty")
    assert code == cli.EXIT_ERROR
    assert err.count("\n") == 1 and "no corpus built under" in err and "explorer build" in err


def test_a_port_in_use_is_refused_before_anything_starts(haproxy_found, capsys, one_corpus):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = _serve(capsys, one_corpus, "--port", str(port))
    assert code == cli.EXIT_ERROR
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is in use" in err
    assert not (one_corpus / settings.RUNTIME_DIR).exists()  # refused before writing anything


def test_zero_workers_is_refused(haproxy_found, capsys, one_corpus):
    code, err = _serve(capsys, one_corpus, "--workers", "0")
    assert code == cli.EXIT_ERROR and "--workers must be at least 1" in err


def test_default_workers_are_the_cores_available():
    assert options.default_workers() == len(os.sched_getaffinity(0))
    assert cli._parser().parse_args(["serve"]).workers == options.default_workers()


def test_corpus_check_is_the_contracts(seed_cache, one_corpus, tmp_path):
    """The supervisor finds corpora with the contract's own (stdlib) function, not a copy."""
    assert checks.list_corpora is list_corpora
    half = tmp_path / "half"
    (half / "tiny" / "run1").mkdir(parents=True)  # a run without its manifest
    (half / "embeddings" / "m").mkdir(parents=True)
    (half / "embeddings" / "m" / "manifest.json").write_text("{}")  # not a corpus
    assert list_corpora(seed_cache) and list_corpora(one_corpus)
    assert not list_corpora(half) and not list_corpora(tmp_path / "missing")


def test_stop_kills_a_child_that_ignores_sigterm(monkeypatch):
    monkeypatch.setattr(processes, "STOP_TIMEOUT_S", 1.0)
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
        "print('ready', flush=True); time.sleep(60)"  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        started = time.monotonic()
        processes.stop_all([proc, None])
        assert proc.returncode == -signal.SIGKILL
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()


def test_a_crash_looping_worker_backs_off_while_the_others_serve(monkeypatch, tmp_path):
    started: list[str] = []
    monkeypatch.setattr(supervisor, "start_worker", lambda w, config, env: started.append(w.name))
    worker = supervisor.Worker("w1", 5001, tmp_path / "w1.log")
    (tmp_path / "w1.log").write_text(
        "Traceback ...\nImportError: no module named x\n  URL: http://127.0.0.1:5001\n"
    )
    logged: list[str] = []
    for _ in range(supervisor.RESTART_LIMIT - 1):
        supervisor._restart(worker, 1, None, {}, logged.append)
    assert started == ["w1"] * (supervisor.RESTART_LIMIT - 1)
    assert logged[0] == "worker w1 (port 5001) exited with status 1; restarting it"
    supervisor._restart(worker, 1, None, {}, logged.append)  # the third exit within the window
    assert started == ["w1"] * (supervisor.RESTART_LIMIT - 1)  # not at once: after a back-off
    assert worker.proc is None and worker.start_at is not None and worker.backoff_s == 1
    assert "last: ImportError: no module named x; next start in 1 s" in logged[-1]
    other = supervisor.Worker("w2", 5002, tmp_path / "w2.log", healthy=True)
    supervisor._check_some_can_serve([worker, other])  # w2 serves: the service goes on
    supervisor._restart(worker, 1, None, {}, logged.append)
    assert worker.backoff_s == 2  # doubling
    other.healthy, other.exits = False, worker.exits
    (tmp_path / "w2.log").write_text("ImportError: no module named x\n")
    with pytest.raises(settings.ServeError, match="no worker can start: .*last: ImportError"):
        supervisor._check_some_can_serve([worker, other])


def test_a_hung_worker_is_killed_and_restarted(monkeypatch, tmp_path):
    import subprocess

    started: list[str] = []
    monkeypatch.setattr(supervisor, "start_worker", lambda w, config, env: started.append(w.name))
    monkeypatch.setattr(supervisor, "is_healthy", lambda url: False)  # stopped: no answer
    worker = supervisor.Worker("w1", 5001, tmp_path / "w1.log", healthy=True)
    worker.proc = subprocess.Popen(["sleep", "60"])
    logged: list[str] = []
    supervisor._check(worker, 100.0, None, {}, logged.append)
    supervisor._check(worker, 100.0 + supervisor.HUNG_AFTER_S - 1, None, {}, logged.append)
    assert worker.proc.poll() is None and not started  # not yet
    supervisor._check(worker, 100.0 + supervisor.HUNG_AFTER_S, None, {}, logged.append)
    assert worker.proc.poll() is not None and started == ["w1"]
    assert logged == [
        f"worker w1 (port 5001) has not answered its health check for "
        f"{supervisor.HUNG_AFTER_S:.0f} s; restarting it"
    ]


def test_a_marked_down_worker_loses_its_sessions():
    text = haproxy.render_config(options.ServeConfig(ROOT, ROOT / "cache", 2), WORKERS, PAGE)
    assert "on-marked-down shutdown-sessions" in text


def test_first_stop_signal_stops_and_a_second_is_ignored():
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN under nohup or a background job
    with processes.StopSignals() as signals:
        with pytest.raises(processes.Stop):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(2)  # the handler raises here
        assert signals.stopping
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C during the shutdown
        time.sleep(0.2)
    assert signal.getsignal(signal.SIGINT) == before  # the previous handler is back


class _Worker(BaseHTTPRequestHandler):
    """A worker that answers haproxy's health check; `ending` says how it ends every other
    request: "answer" (200, naming itself), "close" (no reply: a worker dying mid-request)
    or "reset" (a TCP reset: a worker killed)."""

    ending = "answer"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == settings.HEALTH_PATH or self.ending == "answer":
            body = b"ok"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.ending == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def _fake_worker(ending: str) -> Iterator[int]:
    handler = type("Fake", (_Worker,), {"ending": ending})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("ending", ["close", "reset"])
def test_a_request_its_worker_drops_is_served_by_another(tmp_path, ending):
    """A worker killed or dying while haproxy still counts it up: the request its cookie
    pins there is retried on a live worker, not answered 502 (seen once in the two-worker
    e2e test, tests/e2e/test_serve.py)."""
    path = haproxy.find_haproxy()
    if path is None:
        pytest.skip("haproxy not installed (make test installs it when run as root)")
    with _fake_worker(ending) as dying, _fake_worker("answer") as live:
        port, health = processes.free_ports(2)
        workers = [
            supervisor.Worker("w1", dying, tmp_path / "w1.log"),
            supervisor.Worker("w2", live, tmp_path / "w2.log"),
        ]
        config = options.ServeConfig(ROOT, tmp_path, 2, port=port, health_port=health)
        proc = haproxy.start_haproxy(path, haproxy.write_config(config, workers, tmp_path))
        try:
            _wait_listening(port)
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/", headers={"Cookie": "SERVERID=w1"}
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
                assert response.headers["X-Explorer-Worker"] == "w2"
        finally:
            processes.stop_all([proc])


def _wait_listening(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        assert time.monotonic() < deadline, f"haproxy never listened on {port}"
        time.sleep(0.1)
