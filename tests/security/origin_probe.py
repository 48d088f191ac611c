"""Run in a private network namespace (tests/ray_cluster.run_in_namespace, where only
loopback exists): `streamlit run app.py` on a cache, with an audit hook recording every
name lookup and connection the server process makes; then a websocket handshake from a
foreign Origin and one from the app's own page. Prints one JSON line: the two statuses and
the lookups and connections the handshakes caused that leave loopback.

`python -m tests.security.origin_probe CACHE_DIR`
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.handshake import handshake_status

ROOT = Path(__file__).resolve().parents[2]
PORT = 8599  # the namespace is private: no other server holds it
LOOPBACK = ("127.", "::1", "localhost")

# The server, with every lookup and connect written to AUDIT_LOG as it happens.
SERVER = """
import json, os, sys
log = open(os.environ["AUDIT_LOG"], "a", buffering=1)
def hook(event, args):
    if event == "socket.getaddrinfo":
        log.write(json.dumps(["lookup", str(args[0])]) + "\\n")
    elif event == "socket.connect":
        log.write(json.dumps(["connect", str(args[1])]) + "\\n")
sys.addaudithook(hook)
from streamlit.web import cli
sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
cli.main()
"""


def handshake(origin: str) -> int:
    """The HTTP status of a websocket handshake carrying this Origin."""
    return handshake_status(PORT, f"127.0.0.1:{PORT}", origin)


def wait_healthy(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/_stcore/health", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"server not healthy (exit {proc.poll()})")


def outside(entries: list[list[str]]) -> list[list[str]]:
    return [e for e in entries if not any(part in e[1] for part in LOOPBACK)]


def main(cache: str) -> None:
    audit = Path(tempfile.mkdtemp()) / "audit.jsonl"
    env = dict(os.environ, EXPLORER_CACHE_DIR=cache, AUDIT_LOG=str(audit))
    command = [sys.executable, "-c", SERVER, "--server.port", str(PORT)]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_healthy(proc)
        before = len(audit.read_text().splitlines())
        foreign = handshake("https://evil.example")
        same_site = handshake(f"http://127.0.0.1:{PORT}")
        time.sleep(1)  # anything the handshakes set off has been written by now
        caused = [json.loads(line) for line in audit.read_text().splitlines()[before:]]
    finally:
        proc.kill()
        proc.wait()
    print(json.dumps({"foreign": foreign, "same_site": same_site, "outside": outside(caused)}))


if __name__ == "__main__":
    main(sys.argv[1])
