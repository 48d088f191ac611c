"""What every dashboard server adds in front of Streamlit (app.py's `st.App`): it holds for
`explorer dashboard`, each `explorer serve` worker, a published folder and a plain
`streamlit run app.py` alike, because all of them start the app through app.py.

- A websocket from another site's page is refused before Streamlit sees it. Streamlit's
  own origin check would first ask an external address for this machine's public IP (a
  blocking call of up to 2 s inside the event loop, never cached when it fails), so each
  such handshake froze the worker for every visitor.
- Streamlit's metrics endpoint (`/_stcore/metrics`: function names, sessions, cache sizes)
  answers only the host: a request from this machine's 127.0.0.1 or ::1 (as the trusted
  client header says behind a proxy, view/ui/clients.py), or one carrying the edit key as
  `Authorization: Bearer <key>`. Anyone else gets 404, as if there were none.
- A visitor's `clear_cache` message is dropped: Streamlit would empty every `st.cache_*` of
  the process for all visitors (the toolbar hides the menu item; a client can still send it).
- The server loads every corpus's latest run before it accepts a visitor (the ASGI
  lifespan runs before the first request is answered, health checks included), so a
  restarted worker's first visitor waits no longer than any other.

Pure ASGI: a middleware sees the handshake's headers and each client message before
Streamlit does, and costs one small protobuf parse per message.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import math
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from streamlit import config
from streamlit.logger import get_logger
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from explorer.view.ui import clients

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Names a local browser uses for this machine; Streamlit allows them as origins too.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})  # noqa: S104
DROPPED = frozenset({"clear_cache"})
# Until the warm-up visit has run every page, the health endpoint answers 503, so neither
# `explorer serve`'s proxy nor its supervisor sends a visitor here. Bounded: a warm-up that
# takes longer than WARM_BUDGET_S is cut short, and the server serves cold.
HEALTH_SUFFIX = "/_stcore/health"
METRICS_SUFFIX = "/_stcore/metrics"
WARM_BUDGET_S = 90.0
WARM_TIMEOUT_S = 30.0
WARM = threading.Event()

_log = get_logger("explorer.server")  # Streamlit's format and level, in the same log


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _header_lines(scope: Scope, name: bytes) -> str | None:
    """Every line of one header, joined as one value ("a, b"), or None when there is none:
    a proxy that adds its own line after the client's is read whole."""
    lines = [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]
    return ", ".join(lines) if lines else None


def _hostname(netloc: str) -> str:
    """`host` of `host:port` or `[v6]:port`, lower-cased."""
    return (urlsplit(f"//{netloc}").hostname or "").lower()


def origin_allowed(origin: str | None, host: str | None, allowed: Iterable[str]) -> bool:
    """Whether a websocket opened by a page at `origin` may talk to this server: no Origin
    (not a browser page), the same host as the request's Host header (the app's own page),
    this machine's local names, or a host named in `server.corsAllowedOrigins` (`allowed`)."""
    if origin is None:
        return True
    parts = urlsplit(origin)
    name = (parts.hostname or "").lower()
    if not name or parts.scheme not in ("http", "https"):
        return False
    if host is not None and parts.netloc.lower() == host.lower():
        return True
    return name in LOCAL_HOSTS or name in {_hostname(urlsplit(a).netloc) for a in allowed}


def _kind(data: bytes | None) -> str | None:
    """The BackMsg type of one client frame; None when it is not one (Streamlit then
    rejects it itself)."""
    if not data:
        return None
    msg = BackMsg()
    try:
        msg.ParseFromString(data)
    except Exception:  # noqa: BLE001 - a malformed frame is Streamlit's to refuse
        return None
    return msg.WhichOneof("type")


class VisitorGuard:
    """ASGI middleware: refuses foreign-origin websockets, drops `clear_cache` messages,
    keeps the metrics endpoint for the host. `app_dir`: the app's folder, whose configured
    edit key (editing.host_key) also opens the metrics; None: loopback only."""

    def __init__(self, app: ASGIApp, app_dir: Path | None = None) -> None:
        self.app = app
        self.app_dir = app_dir

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not WARM.is_set() and scope["path"].endswith(HEALTH_SUFFIX):
            await _answer(send, 503, b"warming up")
            return
        if scope["type"] == "http" and is_metrics(scope["path"]) and not self._host(scope):
            _warn_once_a_minute("refused a visitor's metrics request")
            await _answer(send, 404, b"Not Found")
            return
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        origin, host = _header(scope, b"origin"), _header(scope, b"host")
        if not origin_allowed(origin, host, config.get_option("server.corsAllowedOrigins")):
            _warn_once_a_minute(
                "refused a websocket from origin %r", origin[:200] if origin else ""
            )
            await send({"type": "websocket.close", "code": 1008})  # before accept: a 403
            return
        await self.app(scope, _without_dropped(receive), send)

    def _host(self, scope: Scope) -> bool:
        """Whether the host asks: from its own machine, or with the edit key."""
        header = clients.trusted_header()
        value = _header_lines(scope, header.lower().encode("latin-1")) if header else None
        forwarded = any(_header(scope, h.encode()) is not None for h in clients.FORWARDING_HEADERS)
        peer = (scope.get("client") or (None,))[0]
        if clients.is_host_request(value, peer, forwarded):
            return True
        who = clients.client_address(value, peer) or "unknown"
        return self.app_dir is not None and _bearer_is_key(
            _header(scope, b"authorization"), self.app_dir, who
        )


def is_metrics(path: str) -> bool:
    """Whether Starlette would route `path` (decoded, as the ASGI scope holds it) to the
    metrics endpoint: under any base path, with or without a trailing slash (a redirect)."""
    return path.rstrip("/").endswith(METRICS_SUFFIX)


def _bearer_is_key(authorization: str | None, app_dir: Path, who: str) -> bool:
    """Whether `Authorization: Bearer <key>` carries the configured edit key (compared in
    constant time; a header longer than any key is refused unread). A wrong key counts
    against `who` as a wrong sign-in does (editing.SOURCES), so the metrics are no way
    around the sign-in's limit on guesses."""
    from explorer.view.ui.editing import MAX_KEY_CHARS, SOURCES, host_key

    scheme, _, given = (authorization or "").partition(" ")
    key = host_key(app_dir)
    if key is None or scheme.lower() != "bearer":
        return False
    if SOURCES.blocked(who):
        return False
    if len(given) <= MAX_KEY_CHARS and hmac.compare_digest(
        given.strip().encode("latin-1"), key.encode("utf-8")
    ):
        return True
    SOURCES.failed(who)
    return False


_LAST_WARNING = {"at": -math.inf, "muted": 0}
WARNING_INTERVAL = 60.0  # seconds: a flood of refused clients writes one line a minute
_clock = time.monotonic


def _warn_once_a_minute(message: str, *args: object) -> None:
    """Log a refusal at most once per WARNING_INTERVAL, with how many were left unsaid: an
    attacker's flood must not fill the host's disk or bury other lines."""
    now = _clock()
    if now - _LAST_WARNING["at"] < WARNING_INTERVAL:
        _LAST_WARNING["muted"] += 1
        return
    muted, _LAST_WARNING["muted"], _LAST_WARNING["at"] = _LAST_WARNING["muted"], 0, now
    suffix = f" ({muted} more refusals in the last minute)" if muted else ""
    _log.warning("%s%s", message % args, suffix)


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _without_dropped(receive: Receive) -> Receive:
    async def filtered() -> Message:
        while True:
            message = await receive()
            if message["type"] != "websocket.receive" or _kind(message.get("bytes")) not in DROPPED:
                return message
            _warn_once_a_minute("dropped a client's clear_cache message")

    return filtered


def warm_up() -> float:
    """Load every corpus's latest run (checksums, curation replay) and the pages' modules
    into this process; the seconds it took. A corpus that cannot load is skipped here:
    its page says why when a visitor opens it."""
    start = time.perf_counter()
    from explorer import artifacts, curation  # the view's own loaders, deferred: pandas
    from explorer.errors import ExplorerError
    from explorer.names import latest_run_id, list_corpora
    from explorer.view import compare  # noqa: F401 - the pages' imports, paid once
    from explorer.view.charts import comparisons, maps, topics, trends  # noqa: F401
    from explorer.view.ui import data, router, search_box  # noqa: F401
    from explorer.view.ui.widgets import filters, pickers, share, tables  # noqa: F401

    cache = artifacts.default_cache_dir()
    for corpus in list_corpora(cache):
        with contextlib.suppress(ExplorerError, OSError):
            run_id = latest_run_id(cache, corpus)
            data.load_run(str(cache), corpus, run_id, curation.version(cache, corpus))
    return time.perf_counter() - start


async def visit_every_page(base: str, corpora: list[str], pages: list[str]) -> int:
    """Open a session on this very server and run each page of each corpus once, as a
    visitor would: Streamlit's own first-session costs, each page's first script run and
    the per-run memos are paid here, not by the first visitor. The pages run, or 0 when the
    server could not be reached (a unix socket, or a Host list without 127.0.0.1)."""
    from websockets.asyncio.client import connect

    await asyncio.to_thread(_get, base + "/")  # the page and its cookies, as a browser
    stream = base.replace("http://", "ws://", 1) + "/_stcore/stream"
    done = 0
    async with connect(stream, subprotocols=["streamlit"], max_size=None) as ws:
        for corpus in corpora:
            for page in pages:
                await run_page(ws, page, urlencode({"corpus": corpus}))
                done += 1
    return done


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=WARM_TIMEOUT_S) as response:
        response.read()


async def run_page(ws: Any, page: str, query: str) -> None:
    """One rerun of `page`; returns when its script has finished."""
    msg = BackMsg()
    msg.rerun_script.page_name = page
    msg.rerun_script.query_string = query
    await ws.send(msg.SerializeToString())
    while True:
        forward = ForwardMsg()
        forward.ParseFromString(await asyncio.wait_for(ws.recv(), WARM_TIMEOUT_S))
        if forward.WhichOneof("type") == "script_finished" and (
            forward.script_finished != ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
        ):
            return


async def _warm_visit() -> None:
    """Visit every page once the server accepts, then let health checks pass."""
    try:
        if not _own_url():
            return
        from explorer import artifacts
        from explorer.names import list_corpora
        from explorer.view.ui.router import PAGE_PATHS

        corpora = list_corpora(artifacts.default_cache_dir())
        start = time.perf_counter()
        done = await asyncio.wait_for(
            visit_every_page(_own_url(), corpora, list(PAGE_PATHS)), WARM_BUDGET_S
        )
        _log.info("%d pages run in %.1f s; taking visitors", done, time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - a cold first visit is slower, not broken
        _log.warning("warm-up visit skipped: %s", str(exc)[:200])
    finally:
        WARM.set()


def _own_url() -> str | None:
    address = config.get_option("server.address") or "127.0.0.1"
    if address.startswith("unix:"):
        return None
    if address in ("0.0.0.0", "::", ""):  # noqa: S104 - every interface includes loopback
        address = "127.0.0.1"
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{config.get_option('server.port')}"


@contextlib.asynccontextmanager
async def lifespan(_app: object) -> AsyncIterator[None]:
    """Load the corpora before the server accepts anyone (in a thread: the loop stays
    free), then visit every page while health checks answer 503 (WARMING)."""
    seconds = await asyncio.to_thread(warm_up)
    _log.info("corpora loaded in %.1f s", seconds)
    task = asyncio.create_task(_warm_visit())
    yield
    task.cancel()
