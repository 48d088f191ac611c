"""explorer/serve.py without a server: the haproxy config it writes, its one-line refusals,
how it stops children and gives up on a worker that keeps exiting. The real thing (haproxy
and two workers) is tests/e2e/test_serve.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer import artifacts, cli, serve
from tests.conftest import ROOT

WORKERS = [serve.Worker("w1", 5001, Path("w1.log")), serve.Worker("w2", 5002, Path("w2.log"))]


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
    monkeypatch.setattr(serve, "find_haproxy", lambda: "/usr/sbin/haproxy")


def _serve(capsys, cache: Path, *args: str) -> tuple[int, str]:
    code = cli.main(["--cache-dir", str(cache), "serve", *args])
    return code, capsys.readouterr().err


def test_config_is_cookie_sticky_health_checked_and_keeps_websockets_open():
    config = serve.ServeConfig(app_dir=ROOT, cache_dir=ROOT / "cache", workers=2, port=8600)
    text = serve.render_config(config, WORKERS)
    assert "bind 127.0.0.1:8600" in text
    assert "cookie SERVERID insert indirect nocache" in text
    assert "server w1 127.0.0.1:5001 cookie w1" in text
    assert "server w2 127.0.0.1:5002 cookie w2" in text
    # New sessions by open connections; never by source address (one NAT = one worker).
    assert "balance leastconn" in text and "balance source" not in text
    assert "option httpchk GET /_stcore/health" in text
    assert "timeout tunnel 1h" in text
    assert "option redispatch" in text


def test_haproxy_accepts_the_config(tmp_path):
    haproxy = serve.find_haproxy()
    if haproxy is None:
        pytest.skip("haproxy not installed (make test installs it when run as root)")
    config = serve.ServeConfig(app_dir=ROOT, cache_dir=tmp_path, workers=2, port=8600)
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(serve.render_config(config, WORKERS))
    serve._check_haproxy_config(haproxy, cfg)  # raises with haproxy's complaint


def test_without_haproxy_one_line_says_how_to_install(monkeypatch, capsys, one_corpus):
    monkeypatch.setattr(serve, "find_haproxy", lambda: None)
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
    assert not (one_corpus / serve.RUNTIME_DIR).exists()  # refused before writing anything


def test_zero_workers_is_refused(haproxy_found, capsys, one_corpus):
    code, err = _serve(capsys, one_corpus, "--workers", "0")
    assert code == cli.EXIT_ERROR and "--workers must be at least 1" in err


def test_default_workers_are_the_cores_available():
    assert serve.default_workers() == len(os.sched_getaffinity(0))
    assert cli._parser().parse_args(["serve"]).workers == serve.default_workers()


def test_corpus_check_agrees_with_the_contract(seed_cache, one_corpus, tmp_path):
    half = tmp_path / "half"
    (half / "tiny" / "run1").mkdir(parents=True)  # a run without its manifest
    (half / "embeddings" / "m").mkdir(parents=True)
    (half / "embeddings" / "m" / "manifest.json").write_text("{}")  # not a corpus
    for cache in (seed_cache, one_corpus, half, tmp_path / "missing"):
        assert serve._has_corpus(cache) == bool(artifacts.list_corpora(cache)), cache
    assert serve._has_corpus(seed_cache) and not serve._has_corpus(half)


def test_stop_kills_a_child_that_ignores_sigterm(monkeypatch):
    monkeypatch.setattr(serve, "STOP_TIMEOUT_S", 1.0)
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
        "print('ready', flush=True); time.sleep(60)"  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        started = time.monotonic()
        serve._stop([proc, None])
        assert proc.returncode == -signal.SIGKILL
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()


def test_a_worker_that_keeps_exiting_ends_the_run(monkeypatch, tmp_path):
    started: list[str] = []
    monkeypatch.setattr(serve, "_start_worker", lambda w, config, env: started.append(w.name))
    worker = serve.Worker("w1", 5001, tmp_path / "w1.log")
    (tmp_path / "w1.log").write_text("Traceback ...\nImportError: no module named x\n")
    logged: list[str] = []
    for _ in range(serve.RESTART_LIMIT - 1):
        serve._restart(worker, 1, None, {}, logged.append)
    assert started == ["w1"] * (serve.RESTART_LIMIT - 1)
    assert logged[0] == "worker w1 (port 5001) exited with status 1; restarting it"
    with pytest.raises(serve.ServeError, match="exited 3 times within 60 s, last: ImportError"):
        serve._restart(worker, 1, None, {}, logged.append)


def test_first_stop_signal_stops_and_a_second_is_ignored():
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN under nohup or a background job
    with serve._StopSignals() as signals:
        with pytest.raises(serve._Stop):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(2)  # the handler raises here
        assert signals.stopping
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C during the shutdown
        time.sleep(0.2)
    assert signal.getsignal(signal.SIGINT) == before  # the previous handler is back
