"""`explorer serve`: N Streamlit workers behind haproxy, started and stopped by one command;
`explorer dashboard`: one Streamlit process; and `main`, a published folder's `serve.py`.

One Streamlit process runs its scripts on one core; a shared dashboard gets every core only
from several processes. haproxy spreads new sessions over them (leastconn: a websocket is a
long-lived connection), keeps each browser on its worker with a `SERVERID` cookie (a session's
state lives in one process; source-address hashing would pin every client behind one NAT, or
on localhost, to one worker), proxies Streamlit's websocket, and takes a worker out of
rotation when its `/_stcore/health` fails. This process supervises: a worker that exits is
restarted on its port, and Ctrl-C or SIGTERM stops haproxy and every worker.

Stdlib only (and `explorer.errors`, `explorer.names`), so a published folder's `serve.py`
runs the same code from a viewer-only install. Files it writes go to `<cache>/.serve/<port>/`
(a name no corpus can have): the haproxy config and one log per worker, rewritten on every
start.
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import tomllib

from explorer.errors import ExplorerError
from explorer.hosting.checks import check_hosts, check_port_free, check_ready
from explorer.hosting.edit_key import edit_banner, edit_key, editing_env
from explorer.hosting.haproxy import check_config, start_haproxy, write_config
from explorer.hosting.options import ServeConfig, add_arguments, host_flags, public_url
from explorer.hosting.processes import (
    Stop,
    StopSignals,
    free_ports,
    last_line,
    signals_deferred,
    stop_all,
    tail,
)
from explorer.hosting.settings import (
    ALLOWED_HOSTS_ENV,
    CLIENT_HEADER,
    CLIENT_HEADER_ENV,
    PROXY_HEALTH_PATH,
    RUNTIME_DIR,
    ServeError,
)
from explorer.hosting.supervisor import (
    POLL_S,
    Worker,
    is_healthy,
    start_worker,
    supervise,
    wait_healthy,
)


def draw_ports(config: ServeConfig) -> tuple[list[int], ServeConfig]:
    """The workers' ports and `config` with its health port (a free one unless the caller
    set one), from one draw, so no two are alike; none is the public port or a given
    health port, which are free until haproxy binds them and may lie in the range the
    kernel hands out."""
    taken = {config.port, config.health_port} - {0}
    need = config.workers + (0 if config.health_port else 1)
    ports = [p for p in free_ports(need + len(taken)) if p not in taken][:need]
    if not config.health_port:
        config = replace(config, health_port=ports.pop())
    return ports, config


def serve(config: ServeConfig, *, log: Callable[[str], None] | None = None) -> None:
    """Run until Ctrl-C, SIGTERM or a fatal failure; nothing started is left running."""
    log = log or _log
    haproxy = check_ready(config)
    runtime = (config.cache_dir / RUNTIME_DIR / str(config.port)).resolve()
    runtime.mkdir(parents=True, exist_ok=True)
    ports, config = draw_ports(config)
    workers = [
        Worker(f"w{i}", port, runtime / f"worker-{i}.log") for i, port in enumerate(ports, start=1)
    ]
    cfg = write_config(config, workers, runtime)
    check_config(haproxy, cfg)
    key, fresh = edit_key(config.app_dir) if config.edit else (None, False)
    env = _worker_env(config, key)
    proxy: subprocess.Popen | None = None
    with StopSignals() as signals:
        try:
            for worker in workers:
                start_worker(worker, config, env)
            wait_healthy(workers)
            with signals_deferred():
                proxy = start_haproxy(haproxy, cfg)
            url = public_url(config)
            _wait_proxy(proxy, url, runtime / "haproxy.log")
            log(f"Serving {url} with {len(workers)} workers (logs: {runtime}); Ctrl-C stops")
            log(f"Health: http://127.0.0.1:{config.health_port}{PROXY_HEALTH_PATH}")
            log(edit_banner(url, key, fresh))
            supervise(workers, proxy, config, env, log)
        except Stop:
            log("Stopping...")
        finally:
            signals.stopping = True
            stop_all([proxy] + [w.proc for w in workers])
    log("Stopped.")


def _log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


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


def _wait_proxy(proxy: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while not is_healthy(url):
        if proxy.poll() is not None:
            raise ServeError(f"haproxy exited: {last_line(tail(log_path))} (log: {log_path})")
        if time.monotonic() > deadline:
            raise ServeError(f"haproxy not answering on {url} after 30 s (log: {log_path})")
        time.sleep(POLL_S)


# --- one process: `explorer dashboard` (make run) -------------------------------------


def dashboard(config: ServeConfig, *, log: Callable[[str], None] | None = None) -> None:
    """Replace this process with one `streamlit run app.py` on `config.address` (loopback by
    default), answering only to the expected host names, after printing how the host edits
    (a fresh one-click link unless a key is configured, or read-only). One process: the
    config's worker count and per-client limits, which the proxy enforces, do not apply;
    its client header (behind a TLS proxy) names who signs in and who reads the metrics."""
    check_hosts(config.allowed_hosts)
    check_port_free(config.address, config.port)
    key, fresh = edit_key(config.app_dir) if config.edit else (None, False)
    cache = str(config.cache_dir.resolve())
    env = editing_env({**os.environ, "EXPLORER_CACHE_DIR": cache}, key)
    env.pop(CLIENT_HEADER_ENV, None)  # a header is trusted only when the host names it
    if config.client_address_header:
        env[CLIENT_HEADER_ENV] = config.client_address_header
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(config.port),
        "--server.address", config.address, "--server.headless", "true",
        *host_flags(config.hosts()),
    ]  # fmt: skip
    (log or _log)(edit_banner(public_url(config), key, fresh))
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
