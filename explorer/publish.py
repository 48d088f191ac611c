"""`explorer publish NAME DIR`: a self-contained folder that serves one corpus, viewer only.

The folder holds the app (app.py, pages/, the explorer package), the corpus's latest run
(copied, integrity-checked first), a requirements.txt with only what serving needs, the
production Streamlit config, a Dockerfile and a README on deploying it. It runs with
``pip install -r requirements.txt && streamlit run app.py``, from that folder.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from explorer import artifacts
from explorer.errors import ExplorerError

ROOT = Path(__file__).resolve().parents[1]
# The viewer's runtime dependencies, pinned to what this machine runs (a published
# folder should not change under its users when a new release appears).
VIEWER_PACKAGES = ("streamlit", "plotly", "pandas", "pyarrow", "numpy")
_APP_FILES = ("app.py", ".streamlit/config.toml", "Dockerfile")
# Modules the viewer never needs; left out so a published folder carries no model code.
# (embed.py stays: semantic search uses it if the host installs the model packages.)
_BUILD_ONLY = (
    "pipeline.py", "topics.py", "project.py", "summarise.py", "fetch.py", "publish.py", "cli.py",
    "sources",
)  # fmt: skip


def _requirements() -> str:
    from importlib import metadata

    lines = ["# Viewer only: serving prebuilt artifacts needs no model packages."]
    for name in VIEWER_PACKAGES:
        lines.append(f"{name}=={metadata.version(name)}")
    return "\n".join(lines) + "\n"


def _readme(corpus: str, run_id: str, counts: dict) -> str:
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return f"""# {corpus}: topic explorer

{counts["papers"]:,} papers, {counts["topics"]} topics (run {run_id}). Built with Topic Explorer;
this folder serves the dashboard and needs no model, GPU or internet access.

## Run it here

```bash
python -m venv .venv && .venv/bin/pip install -r requirements.txt
.venv/bin/streamlit run app.py        # http://localhost:8501
```

## Streamlit Community Cloud

1. Push this folder to a GitHub repository (the `cache/` folder included: it is the data).
2. On share.streamlit.io, "Create app": pick the repository, branch, and **main file `app.py`**.
3. Under "Advanced settings" choose **Python {python}**. Requirements are read from
   `requirements.txt`; `.streamlit/config.toml` is applied as is.

## Docker, or any host

```bash
docker build -t {corpus}-explorer .
docker run -p 8501:8501 {corpus}-explorer
```

The image runs as a non-root user and reports health on `/_stcore/health`. Without Docker,
any host with Python {python} runs the two commands above; put it behind a TLS proxy to share it.

## Sharing a view

Every filter lives in the URL: filter the map, then copy the address bar (or the sidebar's
"Link to this view") and send it, e.g. `https://<host>/topic_map?corpus={corpus}&q=diffusion`.
"""


def publish(cache_dir: Path, corpus: str, dest: Path, *, force: bool = False) -> Path:
    """Write the folder (to a temporary sibling, renamed into place when complete)."""
    run = artifacts.open_run(cache_dir, corpus)  # verified: a tampered run is not shipped
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise ExplorerError(f"{dest} exists and is not empty; pass --force to replace it")
        if (dest / "cache").resolve() == Path(cache_dir).resolve():
            raise ExplorerError(f"{dest} holds the cache being published from")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for name in _APP_FILES:
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp / name)
        shutil.copytree(ROOT / "pages", tmp / "pages", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(
            ROOT / "explorer",
            tmp / "explorer",
            ignore=shutil.ignore_patterns("__pycache__", *_BUILD_ONLY),
        )
        target = tmp / "cache" / corpus / run.run_id
        shutil.copytree(run.path, target)
        artifacts.atomic_write_text(tmp / "cache" / corpus / artifacts.LATEST, run.run_id)
        (tmp / "requirements.txt").write_text(_requirements())
        (tmp / "README.md").write_text(_readme(corpus, run.run_id, run.manifest["counts"]))
        artifacts.open_run(tmp / "cache", corpus)  # the copy verifies like the original
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
