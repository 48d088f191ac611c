"""haproxy in front of the workers: finding it, the configuration written on every start
(cookie-sticky sessions, health checks, websockets, per-client connection limits, the Host
and Origin checks), haproxy's own check of it, and starting it.
"""

from __future__ import annotations

import os
import shutil
import string
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.hosting.processes import last_line, spawn
from explorer.hosting.settings import (
    CLIENT_HEADER,
    HEADER_TIMEOUT,
    HEALTH_PATH,
    LONG_LINK_PAGE,
    MAX_CONNS,
    MAX_LINK_CHARS,
    PROXY_BUFFER,
    PROXY_HEALTH_PATH,
    TUNNEL_TIMEOUT,
    VISITOR_CONNS,
    ServeError,
)

if TYPE_CHECKING:
    from explorer.hosting.options import ServeConfig
    from explorer.hosting.supervisor import Worker

HAPROXY_PATHS = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")

HAPROXY_CONFIG = string.Template("""\
# Written by `explorer serve` on every start; edits are overwritten.
global
    maxconn ${max_conns}
    # Room to read a too-long link and answer it with a page (settings.PROXY_BUFFER).
    tune.bufsize ${buffer}
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
    # Retried on another worker too: a request a worker dropped unanswered (killed, or
    # dying, before the health check marks it down); haproxy's default retries only a
    # refused connect, and that visitor got a 502. Nothing had reached the browser yet.
    retry-on conn-failure empty-response junk-response

frontend explorer
    bind ${bind}
    maxconn ${visitor_conns}
    # One client may hold at most ${client_conns} connections at once; the next is refused.
    stick-table type ip size 200k expire 10m store conn_cur
${track}
    # DNS rebinding: a request naming a host this server does not answer to gets 403.
    acl expected_host req.hdr(host),lower,regsub(:[0-9]+$$,) -m str ${hosts}
    http-request deny deny_status 403 unless expected_host
    # A link longer than any the dashboard hands out: a page that says so, not a blank one.
    http-request return status 414 content-type "text/html; charset=utf-8" file ${long_link_page} if { url_len gt ${max_link} }
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


def find_haproxy() -> str | None:
    """haproxy on PATH, or where Debian puts it (/usr/sbin is not on a user's PATH there)."""
    found = shutil.which("haproxy")
    return found or next((p for p in HAPROXY_PATHS if os.access(p, os.X_OK)), None)


LONG_LINK_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Link too long</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>This link is too long</h1>
<p>A Topic Explorer link carries the whole view it shares (the page, the filters and the
selection) in its address. This one is longer than the server accepts
(MAX characters), so it cannot be opened.</p>
<p>Open the dashboard's <a href="/">first page</a> instead, or ask whoever sent the link for
one with a smaller selection: the dashboard warns beside its share link when a view's link
is this long.</p>
</body></html>
"""


def write_config(config: ServeConfig, workers: list[Worker], runtime: Path) -> Path:
    """Write haproxy's configuration and the page it answers a too-long link with into
    `runtime`; the configuration's path."""
    page = runtime / LONG_LINK_PAGE
    page.write_text(LONG_LINK_HTML.replace("MAX", f"{MAX_LINK_CHARS:,}"), encoding="utf-8")
    cfg = runtime / "haproxy.cfg"
    cfg.write_text(render_config(config, workers, page), encoding="utf-8")
    return cfg


def render_config(config: ServeConfig, workers: list[Worker], long_link_page: Path) -> str:
    """haproxy's configuration: cookie-sticky, health-checked, websocket-proxying, with
    per-client connection limits, the Host and Origin checks and the too-long-link page
    (`long_link_page`, an absolute path: haproxy reads it when it starts)."""
    servers = "\n".join(f"    server {w.name} 127.0.0.1:{w.port} cookie {w.name}" for w in workers)
    return HAPROXY_CONFIG.substitute(
        buffer=PROXY_BUFFER,
        max_link=MAX_LINK_CHARS,
        long_link_page=quoted(str(long_link_page.resolve())),
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


def quoted(text: str) -> str:
    """`text` as one haproxy configuration word: in single quotes (nothing inside is
    special), or in double quotes with \\, " and $ escaped when it holds a single quote."""
    if "'" not in text:
        return f"'{text}'"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def check_config(haproxy: str, cfg: Path) -> None:
    done = subprocess.run([haproxy, "-c", "-q", "-f", str(cfg)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ServeError(f"haproxy refused {cfg}: {last_line(done.stderr)}")


def start_haproxy(haproxy: str, cfg: Path) -> subprocess.Popen:
    command = [haproxy, "-db", "-f", str(cfg)]  # -db: in the foreground, stopped by us
    return spawn(command, cwd=cfg.parent, env=dict(os.environ), log_path=cfg.parent / "haproxy.log")
