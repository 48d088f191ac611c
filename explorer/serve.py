"""`explorer serve`: N Streamlit workers behind haproxy, started and stopped by one command.

One Streamlit process runs its scripts on one core; a shared dashboard gets every core only
from several processes. haproxy spreads new sessions over them (leastconn: a websocket is a
long-lived connection), keeps each browser on its worker with a `SERVERID` cookie (a session's
state lives in one process; source-address hashing would pin every client behind one NAT, or
on localhost, to one worker), proxies Streamlit's websocket, and takes a worker out of
rotation when its `/_stcore/health` fails. This process supervises: a worker that exits is
restarted on its port, and Ctrl-C or SIGTERM stops haproxy and every worker.

Stdlib only (and `explorer.errors`), so a published folder's `serve.py` runs the same code
from a viewer-only install. Files it writes go to `<cache>/.serve/<port>/` (a name no corpus
can have): the haproxy config and one log per worker, rewritten on every start.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import functools
import importlib.util
import os
import re
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import tomllib

from explorer.errors import ExplorerError
from explorer.names import list_corpora

DEFAULT_PORT = 8501
# Loopback by default, as a TLS proxy in front is the way to share it (docs/hosting.md).
DEFAULT_ADDRESS = "127.0.0.1"
HEALTH_PATH = "/_stcore/health"
# Host names every server answers to; any other Host header is refused (DNS rebinding: a
# page on an attacker's name that resolves to this machine must not reach the app).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# Streamlit's variable for server.allowedHosts: space-separated names that replace the
# config's list (a published folder's README tells hosts to use it).
ALLOWED_HOSTS_ENV = "STREAMLIT_SERVER_ALLOWED_HOSTS"
# Shared with explorer/view/ui/editing.py, which this stdlib-only module cannot import.
EDIT_KEY_ENV = "EXPLORER_EDIT_KEY"
READ_ONLY_ENV = "EXPLORER_READ_ONLY"
CLIENT_HEADER_ENV = "EXPLORER_CLIENT_HEADER"
CLIENT_HEADER = "X-Explorer-Client"
MIN_KEY_CHARS = 16
SECRETS_SECTION, SECRETS_FIELD = "explorer", "edit_key"  # in .streamlit/secrets.toml
HOST_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|[0-9A-Fa-f:.]{2,45}")
HAPROXY_PATHS = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")
RUNTIME_DIR = ".serve"
# explorer.artifacts' corpus names and the cache's other folders (that module loads pandas).
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 10.0
POLL_S = 0.5
# A worker that exits this often within the window is crash-looping: it is restarted after
# a back-off that doubles up to BACKOFF_MAX_S, while the others keep serving. The service
# stops only when every worker is crash-looping and none serves.
RESTART_LIMIT = 3
RESTART_WINDOW_S = 60.0
BACKOFF_MAX_S = 60.0
# The supervisor asks each serving worker's health endpoint (answered by Streamlit's server,
# not by a script run, so a long page load does not count) every HEALTH_EVERY_S; one that
# has not answered for HUNG_AFTER_S (stopped, deadlocked, swapping) is killed and restarted.
HEALTH_EVERY_S = 2.0
HUNG_AFTER_S = 10.0
_STOP_SIGNALS = tuple(
    getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
)
_PR_SET_PDEATHSIG = 1

# Connection limits (docs/hosting.md, "What the service withstands"). The proxy holds MAX_CONNS in
# all; visitors get VISITOR_CONNS of them (the rest keep the health endpoint answering when
# visitors fill theirs), and one client address at most CLIENT_CONNS at once (--client-conns):
# a browser tab holds one websocket plus a few requests, so 50 covers a household behind one
# NAT. Headers must arrive within HEADER_TIMEOUT (slow-header floods), and a websocket
# silent for TUNNEL_TIMEOUT is closed: Streamlit pings every `server.websocketPingInterval`
# seconds (.streamlit/config.toml), so only a dead or stuck client is ever that silent.
MAX_CONNS = 4096
VISITOR_CONNS = 4000
CLIENT_CONNS = 50
HEADER_TIMEOUT = "5s"
TUNNEL_TIMEOUT = "2m"
PROXY_HEALTH_PATH = "/_explorer/health"

HAPROXY_CONFIG = string.Template("""\
# Written by `explorer serve` on every start; edits are overwritten.
global
    maxconn ${max_conns}
    # Fail when the port is taken rather than share it with another listener.
    noreuseport

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # Slow headers (slowloris) hold a connection at most this long.
    timeout http-request ${header_timeout}
    timeout check 2s
    # A websocket silent this long is dead: live tabs answer Streamlit's ping.
    timeout tunnel ${tunnel_timeout}
    timeout client-fin 5s
    # A dead worker's sessions move to a live one (the browser then starts a new session).
    option redispatch 1
    retries 2

frontend explorer
    bind ${bind}
    maxconn ${visitor_conns}
    # One client may hold at most ${client_conns} connections at once; the next is refused.
    stick-table type ip size 200k expire 10m store conn_cur
${track}
    # DNS rebinding: a request naming a host this server does not answer to gets 403.
    acl expected_host req.hdr(host),lower,regsub(:[0-9]+$$,) -m str ${hosts}
    http-request deny deny_status 403 unless expected_host
    # Cross-site websockets: a browser names the page that opened the connection in Origin;
    # one on another site is refused here, before Streamlit's own check (which would first
    # call out to learn this machine's public address, stalling the worker).
    acl expected_origin req.hdr(origin),lower,regsub(^[a-z]+://,),regsub(:[0-9]+$$,) -m str ${hosts}
    http-request deny deny_status 403 if { req.hdr(origin) -m found } !expected_origin
    # The client's address (the connection's, or the trusted proxy's header), for the
    # workers' per-source sign-in limit; a client's own copies of it (and X-Forwarded-For,
    # which Streamlit trusts from loopback) never reach a worker.
    http-request set-header ${client_header} ${client_key}
    http-request del-header X-Forwarded-For
    default_backend workers

# Answers while the visitors' connections are full: 200 while a worker is up, else 503.
frontend health
    bind 127.0.0.1:${health_port}
    maxconn 32
    monitor-uri ${proxy_health}
    monitor fail if { nbsrv(workers) lt 1 }

backend workers
    balance leastconn
    cookie SERVERID insert indirect nocache httponly
    option httpchk GET ${health}
    http-check expect status 200
    # A worker marked down loses its websockets at once: the browser reconnects, and its
    # cookie's worker being down, haproxy sends it to a live one (redispatch).
    default-server check inter 2s fall 2 rise 1 on-marked-down shutdown-sessions
    http-response set-header X-Explorer-Worker %s
${servers}
""")


class ServeError(ExplorerError):
    """`explorer serve` cannot start or keep serving; the message says what to do."""


class _Stop(Exception):
    """A stop signal (SIGINT, SIGTERM, SIGHUP) arrived: shut down cleanly."""


@dataclass(frozen=True)
class ServeConfig:
    """What to serve: the app folder (its .streamlit/config.toml applies), the cache, how."""

    app_dir: Path
    cache_dir: Path
    workers: int
    port: int = DEFAULT_PORT
    address: str = DEFAULT_ADDRESS
    allowed_hosts: tuple[str, ...] = ()
    edit: bool = False  # the host edits: with the configured key, else a fresh one
    client_conns: int = CLIENT_CONNS  # concurrent connections per client address
    # Behind a TLS proxy every visitor arrives from its address: name the header it sets
    # to the visitor's (e.g. X-Forwarded-For; its last address, the one the proxy added).
    client_address_header: str | None = None
    health_port: int = 0  # the proxy's health endpoint on 127.0.0.1 (0: a free port)

    def hosts(self) -> list[str]:
        """The names a request's Host may carry: loopback, the address listened on, and
        the names the host configured (--allowed-host)."""
        names = [*LOOPBACK_HOSTS, *self.allowed_hosts]
        if self.address not in ("0.0.0.0", "::", ""):
            names.append(self.address)
        return list(dict.fromkeys(n.strip().lower().strip("[]") for n in names if n.strip()))


@dataclass
class Worker:
    """One `streamlit run` on a loopback port; restarted on the same port when it exits."""

    name: str
    port: int
    log_path: Path
    proc: subprocess.Popen | None = None
    healthy: bool = False
    exits: list[float] = field(default_factory=list)
    checked: float = 0.0  # when the supervisor last asked its health endpoint
    failing_since: float | None = None  # since when a serving worker has not answered
    backoff_s: float = 0.0  # the wait before the next start while crash-looping
    start_at: float | None = None  # when a crash-looping worker starts again
    started: float = 0.0  # when its process started
    last_exit: str = ""  # why it last exited, while crash-looping


def default_workers() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `explorer serve` and a published folder's `serve.py` share."""
    parser.add_argument(
        "--workers",
        type=int,
        default=default_workers(),
        help="Streamlit processes (default: one per core this process may use)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"public port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        help=f"address to listen on (default {DEFAULT_ADDRESS}: this machine only; "
        "0.0.0.0 for every interface)",
    )
    add_host_argument(parser)
    parser.add_argument(
        "--client-conns",
        type=_positive,
        default=CLIENT_CONNS,
        metavar="N",
        help=f"connections one client address may hold at once (default {CLIENT_CONNS})",
    )
    parser.add_argument(
        "--client-address-header",
        type=_header_name,
        metavar="NAME",
        help="behind a trusted TLS proxy: the header carrying the visitor's address "
        "(e.g. X-Forwarded-For), for the per-client limits",
    )


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _header_name(text: str) -> str:
    """An HTTP header name (a token), so it cannot change haproxy's configuration."""
    if not re.fullmatch(r"[A-Za-z0-9-]{1,64}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a header name")
    return text


def add_host_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name visitors use (repeatable; localhost and the --address are "
        "always allowed): requests naming any other host are refused",
    )


def render_config(config: ServeConfig, workers: list[Worker]) -> str:
    """haproxy's configuration: cookie-sticky, health-checked, websocket-proxying, with
    per-client connection limits and the Host and Origin checks."""
    servers = "\n".join(f"    server {w.name} 127.0.0.1:{w.port} cookie {w.name}" for w in workers)
    return HAPROXY_CONFIG.substitute(
        bind=f"{config.address}:{config.port}",
        health=HEALTH_PATH,
        servers=servers,
        hosts=" ".join(f"[{h}]" if ":" in h else h for h in config.hosts()),
        client_header=CLIENT_HEADER,
        max_conns=MAX_CONNS,
        visitor_conns=VISITOR_CONNS,
        client_conns=config.client_conns,
        header_timeout=HEADER_TIMEOUT,
        tunnel_timeout=TUNNEL_TIMEOUT,
        health_port=config.health_port,
        proxy_health=PROXY_HEALTH_PATH,
        **_client_rules(config),
    )


def _client_rules(config: ServeConfig) -> dict[str, str]:
    """How a client is recognised (its address, or a trusted proxy's header) and limited."""
    limit = config.client_conns
    if config.client_address_header:
        key = f"req.hdr_ip({config.client_address_header},-1)"
        track = (
            f"    http-request track-sc0 {key}\n"
            f"    http-request deny deny_status 429 if {{ sc0_conn_cur gt {limit} }}"
        )
        return {"track": track, "client_key": f"%[{key}]"}
    track = (
        "    tcp-request connection track-sc0 src\n"
        f"    tcp-request connection reject if {{ sc0_conn_cur gt {limit} }}"
    )
    return {"track": track, "client_key": "%[src]"}


def serve(config: ServeConfig, *, log: Callable[[str], None] | None = None) -> None:
    """Run until Ctrl-C, SIGTERM or a fatal failure; nothing started is left running."""
    log = log or _log
    haproxy = _check_ready(config)
    runtime = (config.cache_dir / RUNTIME_DIR / str(config.port)).resolve()
    runtime.mkdir(parents=True, exist_ok=True)
    workers = [
        Worker(f"w{i}", _free_port(), runtime / f"worker-{i}.log")
        for i in range(1, config.workers + 1)
    ]
    if not config.health_port:
        config = replace(config, health_port=_free_port())
    cfg = runtime / "haproxy.cfg"
    cfg.write_text(render_config(config, workers), encoding="utf-8")
    _check_haproxy_config(haproxy, cfg)
    key, fresh = edit_key(config.app_dir) if config.edit else (None, False)
    env = _worker_env(config, key)
    proxy: subprocess.Popen | None = None
    with _StopSignals() as signals:
        try:
            for worker in workers:
                _start_worker(worker, config, env)
            _wait_healthy(workers)
            with _signals_deferred():
                proxy = _start_haproxy(haproxy, cfg)
            url = _public_url(config)
            _wait_proxy(proxy, url, runtime / "haproxy.log")
            log(f"Serving {url} with {len(workers)} workers (logs: {runtime}); Ctrl-C stops")
            log(f"Health: http://127.0.0.1:{config.health_port}{PROXY_HEALTH_PATH}")
            log(edit_banner(url, key, fresh))
            _supervise(workers, proxy, config, env, log)
        except _Stop:
            log("Stopping...")
        finally:
            signals.stopping = True
            _stop([proxy] + [w.proc for w in workers])
    log("Stopped.")


def _log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


# --- before anything starts ------------------------------------------------------------


def find_haproxy() -> str | None:
    """haproxy on PATH, or where Debian puts it (/usr/sbin is not on a user's PATH there)."""
    found = shutil.which("haproxy")
    return found or next((p for p in HAPROXY_PATHS if os.access(p, os.X_OK)), None)


def _check_ready(config: ServeConfig) -> str:
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
    _check_port_free(config.address, config.port)
    return haproxy


def check_hosts(names: tuple[str, ...] | list[str]) -> None:
    """A host name is letters, digits, dots and dashes, or an IPv6 address: nothing that
    could change the meaning of the haproxy or Streamlit configuration it goes into."""
    for name in names:
        if not HOST_NAME_RE.fullmatch(name.strip().strip("[]")):
            raise ServeError(f"--allowed-host {name!r} is not a host name or address")


def _check_port_free(address: str, port: int) -> None:
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


def _check_haproxy_config(haproxy: str, cfg: Path) -> None:
    done = subprocess.run([haproxy, "-c", "-q", "-f", str(cfg)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ServeError(f"haproxy refused {cfg}: {_last_line(done.stderr)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker_env(config: ServeConfig, key: str | None) -> dict[str, str]:
    """Every worker reads the same cache and signs cookies with the same secret (random per
    start, never written to disk), so any worker accepts what another signed. They share
    the edit key too (or are read-only), and trust the client header haproxy sets."""
    env = {
        **os.environ,
        "EXPLORER_CACHE_DIR": str(config.cache_dir.resolve()),
        "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_urlsafe(32),
        "PYTHONUNBUFFERED": "1",
        CLIENT_HEADER_ENV: CLIENT_HEADER,
    }
    return editing_env(env, key)


def editing_env(env: dict[str, str], key: str | None) -> dict[str, str]:
    """A Streamlit process's environment: editing with `key`, or read-only (which also
    overrides a key in .streamlit/secrets.toml)."""
    env = {k: v for k, v in env.items() if k not in (EDIT_KEY_ENV, READ_ONLY_ENV)}
    if key is None:
        env[READ_ONLY_ENV] = "1"
    else:
        env[EDIT_KEY_ENV] = key
    return env


def edit_key(app_dir: Path) -> tuple[str, bool]:
    """The key the host edits with, and whether it is fresh: EXPLORER_EDIT_KEY, else
    `[explorer] edit_key` in the app's .streamlit/secrets.toml, else a new random one for
    this start only (as Jupyter's token), never written anywhere."""
    key = os.environ.get(EDIT_KEY_ENV) or _secrets_key(app_dir)
    if not key:
        return secrets.token_urlsafe(32), True
    if len(key) < MIN_KEY_CHARS:
        raise ServeError(
            f"the configured edit key is shorter than {MIN_KEY_CHARS} characters: "
            "choose a longer one, or unset it for a fresh key per start"
        )
    return key, False


def _secrets_key(app_dir: Path) -> str | None:
    file = Path(app_dir) / ".streamlit" / "secrets.toml"
    try:
        with open(file, "rb") as f:
            key = tomllib.load(f).get(SECRETS_SECTION, {}).get(SECRETS_FIELD)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError, AttributeError) as exc:
        raise ServeError(f"{file}: unreadable ({exc})") from None
    return key if isinstance(key, str) else None


def edit_banner(url: str, key: str | None, fresh: bool) -> str:
    """How the host edits, in one step. A fresh key is printed once, in a link whose key
    the app takes out of the address bar at first load; a configured one never is."""
    if key is None:
        return "Read-only: nobody can change curation here (--edit lets the host)."
    if fresh:
        return f"Host: open {url}/?edit_key={key} to edit (this key works until this stops)"
    return f"Host: sign in from the sidebar (Host sign-in) with your edit key to edit at {url}"


# --- processes ---------------------------------------------------------------------------


@functools.cache
def _prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


def _child_setup(prctl: Callable[..., int] | None) -> Callable[[], None]:
    """What the child runs before exec: the signal state of a fresh process, and (Linux)
    SIGTERM when this supervisor dies, even by kill -9, so no worker outlives it."""

    def setup() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        for s in _STOP_SIGNALS:
            signal.signal(s, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return setup


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """A stop signal waits until the child just started is recorded, so it gets stopped."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def _spawn(command: list[str], *, cwd: Path, env: dict[str, str], log_path: Path):
    """A child in its own session: the terminal's Ctrl-C reaches only this supervisor, which
    then stops the children in order (and never mistakes their exit for a crash)."""
    with open(log_path, "wb") as out:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_child_setup(_prctl()),  # this process runs no threads
        )


def _start_worker(worker: Worker, config: ServeConfig, env: dict[str, str]) -> None:
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.port", str(worker.port), "--server.address", "127.0.0.1",
        "--server.headless", "true", *host_flags(config.hosts()),
    ]  # fmt: skip
    with _signals_deferred():
        worker.proc = _spawn(command, cwd=config.app_dir, env=env, log_path=worker.log_path)
    worker.healthy, worker.failing_since, worker.started = False, None, time.monotonic()


def host_flags(hosts: list[str]) -> list[str]:
    """Streamlit's own Host check on its websocket (server.allowedHosts), one flag each."""
    return [flag for host in hosts for flag in ("--server.allowedHosts", host)]


def _start_haproxy(haproxy: str, cfg: Path) -> subprocess.Popen:
    command = [haproxy, "-db", "-f", str(cfg)]  # -db: in the foreground, stopped by us
    return _spawn(
        command, cwd=cfg.parent, env=dict(os.environ), log_path=cfg.parent / "haproxy.log"
    )


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + HEALTH_PATH, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def _wait_healthy(workers: list[Worker]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not all(w.healthy for w in workers):
        for w in workers:
            code = w.proc.poll()
            if code is not None:
                raise ServeError(
                    f"worker {w.name} exited with status {code} before serving: "
                    f"{_last_error(w.log_path)} (log: {w.log_path})"
                )
            w.healthy = w.healthy or _healthy(f"http://127.0.0.1:{w.port}")
        if time.monotonic() > deadline:
            slow = next(w for w in workers if not w.healthy)
            raise ServeError(
                f"worker {slow.name} not serving after {START_TIMEOUT_S:.0f} s "
                f"(log: {slow.log_path})"
            )
        time.sleep(POLL_S)


def _public_url(config: ServeConfig) -> str:
    host = config.address
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{config.port}"


def _wait_proxy(proxy: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while not _healthy(url):
        if proxy.poll() is not None:
            raise ServeError(f"haproxy exited: {_last_line(_tail(log_path))} (log: {log_path})")
        if time.monotonic() > deadline:
            raise ServeError(f"haproxy not answering on {url} after 30 s (log: {log_path})")
        time.sleep(POLL_S)


def _supervise(
    workers: list[Worker],
    proxy: subprocess.Popen,
    config: ServeConfig,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """Forever: restart a worker that exits (backing off while it crash-loops) or hangs, say
    when it serves again; haproxy gone, or no worker able to start, is fatal."""
    while True:
        time.sleep(POLL_S)
        if proxy.poll() is not None:
            raise ServeError(f"haproxy exited with status {proxy.returncode}; workers stopped")
        now = time.monotonic()
        for w in workers:
            if w.proc is None:
                if w.start_at is not None and now >= w.start_at:
                    w.start_at = None
                    _start_worker(w, config, env)
                continue
            code = w.proc.poll()
            if code is not None:
                _restart(w, code, config, env, log)
            elif now - w.checked >= HEALTH_EVERY_S:
                _check(w, now, config, env, log)
        _check_some_can_serve(workers)


def _check(
    worker: Worker, now: float, config: ServeConfig, env: dict[str, str], log: Callable
) -> None:
    """Ask a worker's health endpoint; restart it once it has failed for HUNG_AFTER_S."""
    worker.checked = now
    if _healthy(f"http://127.0.0.1:{worker.port}"):
        worker.failing_since = None
        if not worker.healthy:
            worker.healthy, worker.backoff_s = True, 0.0
            log(f"worker {worker.name} (port {worker.port}) is serving again")
        return
    if not worker.healthy:
        if now - worker.started >= START_TIMEOUT_S:
            _kill_and_start(
                worker, f"not serving {START_TIMEOUT_S:.0f} s after its start", config, env, log
            )
        return
    worker.failing_since = worker.failing_since or now
    if now - worker.failing_since >= HUNG_AFTER_S:
        reason = f"has not answered its health check for {HUNG_AFTER_S:.0f} s"
        _kill_and_start(worker, reason, config, env, log)


def _kill_and_start(
    worker: Worker, reason: str, config: ServeConfig, env: dict[str, str], log: Callable
) -> None:
    log(f"worker {worker.name} (port {worker.port}) {reason}; restarting it")
    worker.proc.kill()  # SIGKILL: a stopped process ignores SIGTERM until it is continued
    worker.proc.wait()
    _start_worker(worker, config, env)


def _restart(
    worker: Worker,
    code: int,
    config: ServeConfig,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    """Start an exited worker again: at once, or after a doubling back-off while it exits
    RESTART_LIMIT times within RESTART_WINDOW_S."""
    now = time.monotonic()
    worker.exits = [t for t in worker.exits if now - t < RESTART_WINDOW_S] + [now]
    if len(worker.exits) < RESTART_LIMIT:
        log(f"worker {worker.name} (port {worker.port}) exited with status {code}; restarting it")
        _start_worker(worker, config, env)
        return
    worker.backoff_s = min(BACKOFF_MAX_S, max(1.0, worker.backoff_s * 2))
    worker.proc, worker.healthy, worker.start_at = None, False, now + worker.backoff_s
    worker.last_exit = _why(code, worker.log_path)
    log(
        f"worker {worker.name} exited {len(worker.exits)} times within "
        f"{RESTART_WINDOW_S:.0f} s, last: {worker.last_exit}; "
        f"next start in {worker.backoff_s:.0f} s (log: {worker.log_path})"
    )


def _why(code: int, log_path: Path) -> str:
    """Why a worker exited: the signal that killed it, else its log's last error."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return _last_error(log_path)


def _check_some_can_serve(workers: list[Worker]) -> None:
    """Stop only when every worker is crash-looping and none serves."""
    if any(w.healthy or len(w.exits) < RESTART_LIMIT for w in workers):
        return
    worst = workers[0]
    raise ServeError(
        f"no worker can start: {worst.name} exited {len(worst.exits)} times within "
        f"{RESTART_WINDOW_S:.0f} s, last: {worst.last_exit or _last_error(worst.log_path)} "
        f"(log: {worst.log_path})"
    )


def _stop(procs: list[subprocess.Popen | None]) -> None:
    """Terminate, wait up to STOP_TIMEOUT_S for all, then kill what is left."""
    running = [p for p in procs if p is not None and p.poll() is None]
    for proc in running:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- signals and small helpers ----------------------------------------------------------


class _StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP end the run the same way (also where the shell that started
    this process ignores SIGINT, as it does for background jobs). Once `stopping`, further
    signals are ignored: a second Ctrl-C must not cut the shutdown short."""

    def __init__(self) -> None:
        self.stopping = False
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: object) -> None:
        if not self.stopping:
            self.stopping = True
            raise _Stop(signal.Signals(signum).name)

    def __enter__(self) -> _StopSignals:
        self._previous = {s: signal.signal(s, self._handle) for s in _STOP_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)


def _tail(path: Path, size: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "(no output)"


_ERROR_LINE = re.compile(r"(Error|Exception|error:|Killed|Traceback)")


def _last_error(log_path: Path) -> str:
    """A worker log's last line that reads as an error (Streamlit's start-up banner is not
    one), else its last line."""
    lines = [ln.strip() for ln in _tail(log_path).splitlines() if ln.strip()]
    errors = [ln for ln in lines if _ERROR_LINE.search(ln)]
    return (errors or lines or ["(no output)"])[-1][:300]


# --- one process: `explorer dashboard` (make run) -------------------------------------


def dashboard(config: ServeConfig, *, log: Callable[[str], None] | None = None) -> None:
    """Replace this process with one `streamlit run app.py` on `config.address` (loopback by
    default), answering only to the expected host names, after printing how the host edits
    (a fresh one-click link unless a key is configured, or read-only). One process: the
    config's worker count and per-client limits, which the proxy enforces, do not apply."""
    check_hosts(config.allowed_hosts)
    _check_port_free(config.address, config.port)
    key, fresh = edit_key(config.app_dir) if config.edit else (None, False)
    cache = str(config.cache_dir.resolve())
    env = editing_env({**os.environ, "EXPLORER_CACHE_DIR": cache}, key)
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(config.port),
        "--server.address", config.address, "--server.headless", "true",
        *host_flags(config.hosts()),
    ]  # fmt: skip
    (log or _log)(edit_banner(_public_url(config), key, fresh))
    os.chdir(config.app_dir)
    os.execve(sys.executable, command, env)


# --- the published folder's entry point -------------------------------------------------


def folder_hosts(app_dir: Path) -> tuple[str, ...]:
    """The host names a published folder answers to, as `streamlit run` there would take
    them: Streamlit's variable when set (it replaces the config's list), else the folder's
    `server.allowedHosts` (`explorer publish --allowed-host`). The workers' flags and the
    proxy's check would otherwise drop them."""
    if (names := os.environ.get(ALLOWED_HOSTS_ENV)) is not None:
        return tuple(names.split())
    try:
        config = tomllib.loads((app_dir / ".streamlit" / "config.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return ()
    hosts = config.get("server", {}).get("allowedHosts", [])
    return tuple(h for h in hosts if isinstance(h, str)) if isinstance(hosts, list) else ()


def main(argv: list[str] | None = None, *, app_dir: Path) -> int:
    """`python serve.py [--workers N] [--port P] [--address A] [--cache-dir DIR]`."""
    parser = argparse.ArgumentParser(
        prog="serve.py", description="Serve the dashboard with N workers behind haproxy."
    )
    add_arguments(parser)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("EXPLORER_CACHE_DIR", app_dir / "cache")),
        help="the corpora to serve (default: $EXPLORER_CACHE_DIR, else this folder's cache/)",
    )
    args = parser.parse_args(argv)
    config = ServeConfig(
        app_dir=app_dir,
        cache_dir=args.cache_dir,
        workers=args.workers,
        port=args.port,
        address=args.address,
        allowed_hosts=(*folder_hosts(app_dir), *args.allowed_host),
        client_conns=args.client_conns,
        client_address_header=args.client_address_header,
    )  # a published folder is read-only: no --edit here
    try:
        serve(config)
    except (ExplorerError, OSError) as exc:
        print(f"serve: error: {exc}", file=sys.stderr)
        return 2
    return 0
