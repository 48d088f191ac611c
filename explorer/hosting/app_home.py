"""Where the dashboard's own files live (app.py, pages/, .streamlit/config.toml, the
published folder's Dockerfile and serve.py): beside the package in a source checkout, and
under `<prefix>/share/topic-explorer/` when the package is installed from a wheel
(pyproject.toml's data-files put them there). One answer for `explorer dashboard`, `serve`
and `publish`, so an installed `explorer` serves exactly what a checkout serves.

Standard library only, as the serving code beside it; a published folder passes its own
folder instead.
"""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

from explorer.errors import ExplorerError

SHARE = ("share", "topic-explorer")
# What makes a folder the app's: checked, so an unrelated app.py is never served.
MARKERS = ("app.py", "pages/overview.py", ".streamlit/config.toml")


def _is_app(folder: Path) -> bool:
    return all((folder / marker).is_file() for marker in MARKERS)


def candidates() -> list[Path]:
    """The checkout, then the install's data folder (a venv's or the system's prefix, then
    the user's for `pip install --user`)."""
    data = [sysconfig.get_path("data"), sys.prefix, getattr(site, "USER_BASE", None)]
    return [
        Path(__file__).resolve().parents[2],  # explorer/hosting/ -> the checkout
        *(Path(root, *SHARE) for root in dict.fromkeys(d for d in data if d)),
    ]


def app_dir() -> Path:
    """The folder holding the app; an error naming where it looked when none does."""
    for folder in candidates():
        if _is_app(folder):
            return folder
    looked = ", ".join(str(f) for f in candidates())
    raise ExplorerError(
        f"the dashboard's files (app.py, pages/, .streamlit/) are not in {looked}: reinstall"
    )
