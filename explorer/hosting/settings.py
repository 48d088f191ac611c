"""The names and limits the serving code shares with the app it serves: default port and
address, the environment variables and header that carry the edit key and the client's
address to a worker, and the proxy's connection limits. Constants only, and `ServeError`.

`explorer/view/ui/editing.py` reads the edit key's names from here, so this module imports
nothing of the supervisor, the proxy or the processes.
"""

from __future__ import annotations

import re

from explorer.errors import ExplorerError

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
# Shared with explorer/view/ui/editing.py, which reads the key and the client's address.
EDIT_KEY_ENV = "EXPLORER_EDIT_KEY"
READ_ONLY_ENV = "EXPLORER_READ_ONLY"
CLIENT_HEADER_ENV = "EXPLORER_CLIENT_HEADER"
CLIENT_HEADER = "X-Explorer-Client"
MIN_KEY_CHARS = 16
SECRETS_SECTION, SECRETS_FIELD = "explorer", "edit_key"  # in .streamlit/secrets.toml
HOST_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|[0-9A-Fa-f:.]{2,45}")
RUNTIME_DIR = ".serve"

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
# Links: a share link holds its view's whole state in its query. The proxy answers one
# longer than MAX_LINK_CHARS with LONG_LINK_PAGE (414) instead of passing it on; its buffer
# is PROXY_BUFFER bytes so that such a request can still be read and answered (haproxy 2.6
# answers a request over its buffer with its own bare 400, whatever the configuration:
# haproxy issue #3032, fixed in 3.2). The share box warns above the same length. 12,000,
# not 16,000: each worker's server (uvicorn over h11) refuses a request head over 16 kB, and
# the browser's other headers (cookies, and a Referer holding the link on every asset) add
# up to a few kB.
MAX_LINK_CHARS = 12_000
PROXY_BUFFER = 32_768
LONG_LINK_PAGE = "long-link.html"


class ServeError(ExplorerError):
    """`explorer serve` cannot start or keep serving; the message says what to do."""
