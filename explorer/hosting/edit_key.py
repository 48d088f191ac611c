"""The host's edit key at start: configured (the environment, else `.streamlit/secrets.toml`)
or fresh for this start only, handed to Streamlit's processes in their environment (or
read-only), and the one line that tells the host how to edit. The app checks it on every
write (explorer/view/ui/editing.py, docs/hosting.md "Who can edit").
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import tomllib

from explorer.hosting.settings import (
    EDIT_KEY_ENV,
    MIN_KEY_CHARS,
    READ_ONLY_ENV,
    SECRETS_FIELD,
    SECRETS_SECTION,
    ServeError,
)


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
