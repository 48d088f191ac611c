"""The edit gate: only the host changes a shared dashboard's curation.

Mechanism (docs/hosting.md, "Who can edit"): one secret per server, the *edit key*, known to the
host. Like Jupyter's token, `explorer dashboard` (`make run`) and `explorer serve --edit`
make a fresh random key at every start, hand it to their Streamlit processes in the
environment and print a one-click link carrying it; a host who wants a stable password
puts `edit_key` under `[explorer]` in `.streamlit/secrets.toml` (never published, never
committed) or sets EXPLORER_EDIT_KEY. Streamlit's `st.login` (OIDC) would need an identity
provider and a network path to it that most hosts of a conference map do not have, and
it still leaves "which identities may edit" to us: a shared secret is the smallest thing
that holds, and the one a host can rotate by restarting.

Everything here is decided on the server, per Streamlit session: the client only ever
sends a candidate key (from the link or the sign-in form), compared in constant time.
A session that presented the key is an *editing session* until it signs out or
SESSION_HOURS pass; every write asks `require_editor` again, which also rate-limits the
session. Wrong keys are limited per session and per source address (per process: each
`explorer serve` worker counts its own). Without a key configured, or in a published
folder, nobody edits through the dashboard; `explorer curate` works for whoever can
write the cache.
"""

from __future__ import annotations

import collections
import hmac
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from explorer.artifacts import PUBLISH_MARKER
from explorer.hosting.settings import (
    EDIT_KEY_ENV,
    MIN_KEY_CHARS,
    READ_ONLY_ENV,
    SECRETS_FIELD,
    SECRETS_SECTION,
)
from explorer.view.text import md, md_format
from explorer.view.ui import clients

# EDIT_KEY_ENV and `[explorer] edit_key` in secrets.toml hold the key; a configured key
# shorter than MIN_KEY_CHARS is ignored. READ_ONLY_ENV (set by `explorer serve` without
# --edit) overrides both. Who a client is: view/ui/clients.py (a header only when trusted).
URL_PARAM = "edit_key"
MAX_KEY_CHARS = 256  # a candidate longer than any key is refused unread
SESSION_TRIES = 5
SOURCE_TRIES = 20
SOURCE_WINDOW_S = 15 * 60
SESSION_HOURS = 8
WRITES_PER_MINUTE = 30
_EDITOR = "_editing_session"  # session-state key; no widget has it, so no client sets it


class EditRefused(Exception):
    """This session may not write now; the message says why (plain text)."""


@dataclass
class EditingSession:
    """A session that presented the key: until when, and its recent writes."""

    expires: float
    writes: collections.deque = field(default_factory=collections.deque)


class Attempts:
    """Wrong keys per source address within a sliding window, shared by the sessions of
    this process (threads: Streamlit runs each session's script in its own)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit, self.window_s = limit, window_s
        self._lock = threading.Lock()
        self._seen: dict[str, collections.deque] = {}

    def _recent(self, source: str, now: float) -> collections.deque:
        times = self._seen.setdefault(source, collections.deque())
        while times and now - times[0] > self.window_s:
            times.popleft()
        return times

    def blocked(self, source: str) -> bool:
        with self._lock:
            return len(self._recent(source, time.monotonic())) >= self.limit

    def failed(self, source: str) -> None:
        with self._lock:
            self._recent(source, time.monotonic()).append(time.monotonic())
            if len(self._seen) > 10_000:  # bounded: forget the quietest sources
                for stale in [s for s, t in self._seen.items() if not t][:5_000]:
                    del self._seen[stale]


SOURCES = Attempts(SOURCE_TRIES, SOURCE_WINDOW_S)


def published(app_dir: Path) -> bool:
    """A published folder (it carries publish's marker) is read-only, key or not."""
    return (Path(app_dir) / PUBLISH_MARKER).is_file()


def host_key(app_dir: Path) -> str | None:
    """The edit key this server accepts, or None: nobody edits through the dashboard."""
    if published(app_dir) or os.environ.get(READ_ONLY_ENV):
        return None
    key = os.environ.get(EDIT_KEY_ENV) or _secrets_key()
    return key if key and len(key) >= MIN_KEY_CHARS else None


def _secrets_key() -> str | None:
    try:
        section = st.secrets.get(SECRETS_SECTION, {})
    except (FileNotFoundError, OSError, ValueError):  # no or unreadable secrets.toml
        return None
    key = section.get(SECRETS_FIELD) if hasattr(section, "get") else None
    return key if isinstance(key, str) else None


def source() -> str:
    """Who is asking, for the per-source limit: the trusted header's address when the server
    trusts one (serve's haproxy, or a TLS proxy named by --client-address-header), else the
    socket's address (view/ui/clients.py)."""
    header = clients.trusted_header()
    # Every line of the header, in order: a proxy may add its own line after the client's.
    value = ", ".join(st.context.headers.get_all(header)) if header else None
    address = clients.client_address(value or None, None)
    if address:
        return address
    address = st.context.ip_address  # None on loopback (Streamlit hides 127.0.0.1 and ::1)
    return (
        address[: clients.MAX_ADDRESS_CHARS] if isinstance(address, str) and address else "loopback"
    )


def is_editor(app_dir: Path) -> bool:
    """Whether this session may edit now (signed in, not expired, key still configured)."""
    session = st.session_state.get(_EDITOR)
    if session is None or host_key(app_dir) is None:
        return False
    if time.time() >= session.expires:
        del st.session_state[_EDITOR]
        return False
    return True


def sign_in(app_dir: Path, candidate: str) -> str | None:
    """Check one candidate key; None when this session now edits, else why not."""
    key = host_key(app_dir)
    if key is None:
        return "Editing is off on this server."
    tries = st.session_state.setdefault("_editing_tries", 0)
    who = source()
    if tries >= SESSION_TRIES or SOURCES.blocked(who):
        return "Too many wrong keys: sign-in is closed for a while."
    given = candidate.encode("utf-8", "surrogateescape")[:MAX_KEY_CHARS]
    if len(candidate) > MAX_KEY_CHARS or not hmac.compare_digest(given, key.encode("utf-8")):
        st.session_state["_editing_tries"] = tries + 1
        SOURCES.failed(who)
        return "Wrong edit key."
    st.session_state[_EDITOR] = EditingSession(time.time() + SESSION_HOURS * 3600)
    return None


def sign_in_from_url(app_dir: Path) -> str | None:
    """Take the one-click link's key out of the address bar (so neither the browser's
    history nor "Link to this view" keeps it), then try it. Returns a refusal, if any."""
    if URL_PARAM not in st.query_params:
        return None
    candidate = st.query_params.get(URL_PARAM, "")
    del st.query_params[URL_PARAM]
    return sign_in(app_dir, candidate)


def sign_out() -> None:
    st.session_state.pop(_EDITOR, None)


def require_editor(app_dir: Path) -> None:
    """Before every write: raise EditRefused unless this session edits and is within its
    rate. Checked on the server at the moment of writing, whatever the page showed."""
    if not is_editor(app_dir):
        raise EditRefused("Only the host can change this dashboard: sign in first.")
    writes = st.session_state[_EDITOR].writes
    now = time.monotonic()
    while writes and now - writes[0] > 60:
        writes.popleft()
    if len(writes) >= WRITES_PER_MINUTE:
        raise EditRefused(f"At most {WRITES_PER_MINUTE} changes a minute: wait a moment.")
    writes.append(now)


def sidebar(app_dir: Path, refusal: str | None) -> None:
    """The host's corner of the sidebar: sign in (only where a key is configured), or who
    is editing and a way to stop."""
    if host_key(app_dir) is None:
        return
    if is_editor(app_dir):
        until = time.strftime("%H:%M", time.localtime(st.session_state[_EDITOR].expires))
        st.caption(md_format("Editing as the host until {until} (server time).", until=until))
        if st.button("Sign out", key="editor_sign_out"):
            sign_out()
            st.rerun()
        return
    with st.popover("Host sign-in"), st.form("editor_sign_in", clear_on_submit=True):
        given = st.text_input("Edit key", type="password", max_chars=MAX_KEY_CHARS)
        if st.form_submit_button("Sign in"):
            refusal = sign_in(app_dir, given)
            if refusal is None:
                st.rerun()
    if refusal:
        st.sidebar.error(md(refusal))
