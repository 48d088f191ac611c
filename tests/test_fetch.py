"""`explorer fetch` against a local HTTP server on 127.0.0.1: never the internet.

The server plays every failure a real one can: 404, a 500 before success, a stall
longer than the timeout, a body cut short of its Content-Length, an oversized body,
content whose URL has no suffix, and content that is no paper list at all.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from explorer import cli
from explorer.build.fetch import FetchError, FetchLimits, fetch, paperlists_url

PAPERS = [
    {
        "title": f"Paper {i}",
        "abstract": f"We study problem {i} with method {i}.",
        "status": "Poster",
    }
    for i in range(12)
]
BODY = json.dumps(PAPERS).encode()


class Handler(BaseHTTPRequestHandler):
    hits: dict[str, int] = {}

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def _send(self, body: bytes, status: int = 200, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?")[0]
        count = Handler.hits[path] = Handler.hits.get(path, 0) + 1
        if path in ("/ok.json", "/icml/icml2025.json") or path == "/nosuffix":
            self._send(BODY)
        elif path == "/flaky.json":
            self._send(b"busy", 500) if count == 1 else self._send(BODY)
        elif path == "/down.json":
            self._send(b"busy", 503)
        elif path == "/slow.json":
            threading.Event().wait(3)
            self._send(BODY)
        elif path == "/truncated.json":
            self._send(BODY[:100], length=len(BODY))
            self.close_connection = True
        elif path == "/huge.json":
            self._send(b"[" + b" " * 5000 + b"]")
        elif path == "/liar.json":  # no Content-Length: the cap is enforced while reading
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"[" + b" " * 5000 + b"]")
            self.close_connection = True
        elif path == "/html.json":
            self._send(b"<html>not a list</html>")
        else:
            self._send(b"not found", 404)


class Server(ThreadingHTTPServer):
    # Teardown waits for every handler thread, so no handler (say, /slow.json, which answers
    # after its client has timed out) writes to stderr during a later test's capture.
    daemon_threads = False
    block_on_close = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # the client gave up first, as the timeout tests intend
        super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def server():
    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def quiet(message: str) -> None:
    pass


def test_success_saves_checks_and_records_checksum(server, tmp_path):
    got = fetch(f"{server}/ok.json", tmp_path, log=quiet)
    assert got.path == tmp_path / "ok.json" and got.path.read_bytes() == BODY
    assert got.sha256 == hashlib.sha256(BODY).hexdigest() and got.papers == 12
    assert (tmp_path / "ok.json.sha256").read_text() == f"{got.sha256}  ok.json\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.json", "ok.json.sha256"]


def test_format_comes_from_content_not_the_url(server, tmp_path):
    got = fetch(f"{server}/nosuffix", tmp_path, log=quiet)
    assert got.format == "paperlists" and got.path.name == "nosuffix.json"


def test_404_fails_at_once_naming_url_and_status(server, tmp_path):
    with pytest.raises(FetchError, match=r"/missing.json: HTTP 404"):
        fetch(f"{server}/missing.json", tmp_path, log=quiet)
    assert Handler.hits["/missing.json"] == 1  # a 4xx is not retried
    assert list(tmp_path.iterdir()) == []


def test_500_then_success_is_retried(server, tmp_path):
    messages: list[str] = []
    got = fetch(
        f"{server}/flaky.json", tmp_path, limits=FetchLimits(backoff=0.01), log=messages.append
    )
    assert got.papers == 12 and "HTTP 500" in messages[0]


def test_persistent_5xx_gives_up_with_the_status(server, tmp_path):
    with pytest.raises(FetchError, match=r"down.json: HTTP 503 .*gave up after 3 attempts"):
        fetch(
            f"{server}/down.json", tmp_path, limits=FetchLimits(retries=2, backoff=0.01), log=quiet
        )
    assert list(tmp_path.iterdir()) == []


def test_timeout(server, tmp_path):
    with pytest.raises(FetchError, match=r"slow.json: .*(timed out|no data).*gave up"):
        fetch(
            f"{server}/slow.json",
            tmp_path,
            limits=FetchLimits(timeout=0.5, retries=1, backoff=0.01),
            log=quiet,
        )
    assert list(tmp_path.iterdir()) == []


def test_truncated_body_is_detected(server, tmp_path):
    with pytest.raises(FetchError, match=r"truncated.json: .*(closed after|received) .*gave up"):
        fetch(
            f"{server}/truncated.json",
            tmp_path,
            limits=FetchLimits(retries=1, backoff=0.01),
            log=quiet,
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", ["/huge.json", "/liar.json"])
def test_oversized_body_is_refused(server, tmp_path, path):
    with pytest.raises(FetchError, match=r"over the 1,000-byte limit|exceeds the 1,000-byte"):
        fetch(f"{server}{path}", tmp_path, limits=FetchLimits(max_bytes=1000), log=quiet)
    assert list(tmp_path.iterdir()) == []


def test_content_that_is_not_a_paper_list_is_not_kept(server, tmp_path):
    with pytest.raises(FetchError, match=r"html.json: not a readable paper list"):
        fetch(f"{server}/html.json", tmp_path, log=quiet)
    assert list(tmp_path.iterdir()) == []


def test_only_http_urls(tmp_path):
    from explorer.errors import InputError

    with pytest.raises(InputError, match="only http"):
        fetch("file:///etc/passwd", tmp_path, log=quiet)


def test_cli_paperlists_prints_the_next_command(server, tmp_path, capsys):
    code = cli.main(
        ["fetch", "paperlists", "ICML", "2025", "--out-dir", str(tmp_path), "--base-url", server]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (tmp_path / "icml" / "icml2025.json").read_bytes() == BODY
    assert f"Next: explorer build {tmp_path / 'icml' / 'icml2025.json'} --name icml2025" in out
    assert paperlists_url("icml", 2025).endswith("/paperlists/main/icml/icml2025.json")
    # Fetching again does not overwrite silently.
    code = cli.main(
        ["fetch", "paperlists", "icml", "2025", "--out-dir", str(tmp_path), "--base-url", server]
    )
    err = capsys.readouterr().err
    assert code == 2 and "already exists; pass --force" in err


def test_cli_error_is_one_line(server, tmp_path, capsys):
    code = cli.main(["fetch", f"{server}/missing.json", "--out-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("explorer: error: ") and "HTTP 404" in err[-1]
