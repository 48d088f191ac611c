"""The published folder's own texts: its README (how to run, deploy and name the host of
this corpus's dashboard), its viewer-only requirements.txt, and its Streamlit config
(the project's, without a listening address and with the host names it answers to).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from explorer.hosting.app_home import app_dir
from explorer.hosting.publish_safety import STREAMLIT_CONFIG
from explorer.hosting.settings import ALLOWED_HOSTS_ENV, LOOPBACK_HOSTS

if TYPE_CHECKING:
    from explorer.manifest import Counts

# The viewer's runtime dependencies, pinned to what this machine runs (a published
# folder should not change under its users when a new release appears).
VIEWER_PACKAGES = ("streamlit", "plotly", "pandas", "pyarrow", "numpy", "onnxruntime", "tokenizers")


def requirements() -> str:
    from importlib import metadata

    lines = [
        "# Viewer only, no model packages: semantic search runs the corpus's model from its",
        "# ONNX export (cache/models/onnx/) with onnxruntime and tokenizers.",
    ]
    for name in VIEWER_PACKAGES:
        lines.append(f"{name}=={metadata.version(name)}")
    return "\n".join(lines) + "\n"


# The published README's line on semantic search, by whether the run has an ONNX export.
_SEMANTIC = {
    True: 'Semantic search ("Ask in your own words") works out of the box: the corpus\'s model\n'
    "ships exported to ONNX in `cache/models/onnx/` and runs with onnxruntime.",
    False: 'This build has no ONNX export of its model, so "Ask in your own words" ranks papers\n'
    "by keywords (TF-IDF) unless sentence-transformers is installed too.",
}


# The folder's README.md, filled by `readme` (str.format fields: the corpus, its counts, the
# search it offers, the Python version and the host names it answers to).
_README = """# {corpus}: topic explorer

{papers:,} papers, {topics} topics (run {run_id}). Built with Topic Explorer;
this folder serves the dashboard and needs no GPU, torch or internet access.
{semantic}

## Run it here

```bash
python -m venv .venv && .venv/bin/pip install -r requirements.txt
.venv/bin/streamlit run app.py        # http://localhost:8501
```

## Streamlit Community Cloud

1. Push this folder to a GitHub repository (the `cache/` folder included: it is the data).
2. On share.streamlit.io, "Create app": pick the repository, branch, and **main file `app.py`**.
3. Under "Advanced settings" choose **Python {python}**. Requirements are read from
   `requirements.txt`; `.streamlit/config.toml` is applied as is, so publish with
   `--allowed-host <your-app>.streamlit.app` (see "Host names").

## Docker, or any host

```bash
docker build -t {corpus}-explorer .
docker run -p 8501:8501 {corpus}-explorer
# visitors use another name: docker run -p 8501:8501 \\
#   -e {ALLOWED_HOSTS_ENV}="localhost 127.0.0.1 explorer.example.org" {corpus}-explorer
```

The image runs as a non-root user and reports health on `/_stcore/health`. Without Docker,
any host with Python {python} runs the two commands above; put it behind a TLS proxy to share it.

## Every core: N workers behind haproxy

One Streamlit process runs on one core. `serve.py` runs one per core behind haproxy: each
browser stays on its worker (a `SERVERID` cookie), websockets are proxied, a worker failing its
health check is taken out of rotation and one that exits is restarted. Ctrl-C (or SIGTERM)
stops haproxy and every worker.

```bash
apt-get install haproxy                    # as root; Debian/Ubuntu (macOS: brew install haproxy)
.venv/bin/python serve.py --workers 4      # http://127.0.0.1:8501
```

`--workers` defaults to the cores available, `--port` to 8501 and `--address` to 127.0.0.1
(this machine only; `--address 0.0.0.0` listens on every interface). The generated haproxy
config and one log per worker are in `cache/.serve/<port>/`.

## Host names

The dashboard answers only to the host names it was told (a defence against DNS
rebinding: a web page on another name that resolves to this machine cannot drive it). This
folder answers to {named}; a browser reaching it by any other name gets a page that never
connects. Name the host your visitors use in one of three ways:

- publish again with `explorer publish NAME DIR --allowed-host explorer.example.org`
  (repeatable), which writes the names into `.streamlit/config.toml`;
- at serve time, in Streamlit's environment variable, space-separated; it **replaces** the
  list in the config, so include the loopback names you still use:
  `{ALLOWED_HOSTS_ENV}="localhost 127.0.0.1 explorer.example.org" streamlit run app.py`
  (with Docker: `docker run -e {ALLOWED_HOSTS_ENV}=...`);
- with `serve.py`, which answers to the names above (the config's, or the variable's when
  set) plus any `--allowed-host NAME` it is given: `python serve.py --allowed-host
  explorer.example.org`. Its haproxy refuses every request naming another host, not only
  the websocket.

Streamlit checks the name on the websocket only: `/_stcore/health` (Docker's health
check) answers any name.

The config sets no listening address: `streamlit run app.py` listens on every interface
(as Docker and Streamlit Community Cloud need); `serve.py` listens on 127.0.0.1 unless
given `--address`.

## Sharing a view

Every filter lives in the URL: filter the map, then copy the address bar (or the sidebar's
"Link to this view") and send it, e.g. `https://<host>/topic_map?corpus={corpus}&q=diffusion`.
"""


def readme(
    corpus: str, run_id: str, counts: Counts, *, semantic: bool, hosts: tuple[str, ...]
) -> str:
    """The folder's README: how to run, deploy and name the host of this corpus's dashboard."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    named = ", ".join(f"`{h}`" for h in (*LOOPBACK_HOSTS, *hosts))
    return _README.format(
        corpus=corpus,
        run_id=run_id,
        papers=counts.papers,
        topics=counts.topics,
        semantic=_SEMANTIC[semantic],
        python=python,
        named=named,
        ALLOWED_HOSTS_ENV=ALLOWED_HOSTS_ENV,
    )


def published_config(allowed_hosts: tuple[str, ...]) -> str:
    """The project's Streamlit config for a published folder: without `address` (its hosts
    listen on every interface: Docker, Community Cloud, a server) and answering to the
    loopback names plus `allowed_hosts` (DNS rebinding)."""
    hosts = list(dict.fromkeys([*LOOPBACK_HOSTS, *(h.strip().lower() for h in allowed_hosts)]))
    out: list[str] = []
    comments: list[str] = []  # an option's comment lines go (or stay) with it
    for line in (app_dir() / STREAMLIT_CONFIG).read_text(encoding="utf-8").splitlines():
        key = line.split("=", 1)[0].strip() if "=" in line else None
        if line.startswith("#"):
            comments.append(line)
            continue
        if key == "address":
            line = ""  # and its comment lines with it
        elif key == "allowedHosts":
            out += _HOSTS_COMMENT + [f"allowedHosts = {json.dumps(hosts)}"]
            line = ""
        else:
            out += comments
        comments = []
        if line or key is None:
            out.append(line)
    return "\n".join(out) + "\n"


_HOSTS_COMMENT = [
    "# DNS rebinding: the websocket answers only to these names (`explorer publish",
    "# --allowed-host NAME` adds one). Name others at serve time (README, Host names):",
    f'# {ALLOWED_HOSTS_ENV}="localhost 127.0.0.1 explorer.example.org" (it replaces this',
    "# list); `python serve.py` answers to these plus its --allowed-host names.",
]
