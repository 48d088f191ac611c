"""`explorer publish NAME DIR`: a self-contained folder that serves one corpus, viewer only.

The folder holds the app (app.py, pages/, the viewer's part of the explorer package, by
allow-list), the corpus's latest run (copied, integrity-checked first), a requirements.txt
with only what serving needs, the production Streamlit config, a Dockerfile and a README
on deploying it. It runs with ``pip install -r requirements.txt && streamlit run app.py``,
or on every core with ``python serve.py --workers N`` (haproxy in front; explorer/serve.py).

Publishing never destroys what it did not write. A marker file lists every file a publish
wrote (with its hash); publishing again into that folder replaces exactly those files and
leaves everything else (a `.git`, notes) alone. Any other non-empty folder is refused, as
are the home folder, `/`, the project and the cache. A marker naming anything a publish
never writes (`.git/HEAD`, `../x`, an absolute path) is refused before anything changes.

A published folder is served by other users (a web server's, a container's): every file is
0644 and every folder it makes 0755, whatever the umask and the cache's own modes. It
carries input file names, never the host's paths. Its Streamlit config listens wherever
its host runs it (no `address`) and answers only to loopback names plus the names given
with `--allowed-host` (DNS rebinding; docs/hosting.md, "Host names", for naming hosts at serve time).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path, PurePosixPath

from explorer import artifacts, curation
from explorer.app_home import app_dir
from explorer.errors import ExplorerError
from explorer.names import LATEST, NAME_RE
from explorer.serve import ALLOWED_HOSTS_ENV, LOOPBACK_HOSTS, check_hosts

# The viewer's runtime dependencies, pinned to what this machine runs (a published
# folder should not change under its users when a new release appears).
VIEWER_PACKAGES = ("streamlit", "plotly", "pandas", "pyarrow", "numpy", "onnxruntime", "tokenizers")
_APP_FILES = ("app.py", "Dockerfile", "serve.py")
STREAMLIT_CONFIG = ".streamlit/config.toml"
# Every file at the folder's top that a publish writes (the rest is under pages/,
# explorer/ and cache/: `_is_publishable`).
_TOP_FILES = (*_APP_FILES, STREAMLIT_CONFIG, "requirements.txt", "README.md")
# Readable by every user, writable by the owner: a published folder is served by other
# accounts (a web server's, a container's), whatever the umask and the cache's modes.
FILE_MODE = 0o644
FOLDER_MODE = 0o755
# What of the explorer package a published folder carries: the contract (with onnx_encoder.py,
# which runs the exported query encoder) and the view world, plus the model encoder's modules
# (explorer.view.encoder's declared exception: semantic search falls back to them where a run
# has no ONNX export and the host installs the model packages), and serve.py, which
# the folder's own serve.py runs to serve with N workers behind haproxy.
PACKAGE_ALLOW = (
    "__init__.py", "artifacts.py", "curation.py", "curation_apply.py", "curation_log.py", "errors.py", "names.py", "vectors.py", "onnx_encoder.py", "view", "serve.py",
    "build/__init__.py", "build/embed.py", "build/memory.py",
)  # fmt: skip
MARKER = artifacts.PUBLISH_MARKER
STAGING_PREFIX = ".explorer-publish-tmp-"
# Folders the publish copies from: a destination inside one would copy into itself.
_SOURCE_FOLDERS = ("pages", "explorer", ".streamlit")


def _requirements() -> str:
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


# The folder's README.md, filled by `_readme` (str.format fields: the corpus, its counts, the
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


def _readme(
    corpus: str, run_id: str, counts: artifacts.Counts, *, semantic: bool, hosts: tuple[str, ...]
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


def publish(
    cache_dir: Path,
    corpus: str,
    dest: Path,
    *,
    force: bool = False,
    allowed_hosts: tuple[str, ...] = (),
) -> Path:
    """Write (or refresh) the folder; `force` also replaces published files edited since.
    `allowed_hosts`: the names visitors will use, besides the loopback ones."""
    check_hosts(allowed_hosts)
    run = artifacts.open_run(cache_dir, corpus)  # verified: a tampered run is not shipped
    dest = Path(dest).expanduser().resolve()
    check_destination(dest, Path(cache_dir))
    previous = _previous_files(dest)
    made = [path for path in (dest, *dest.parents) if not path.exists()]
    created = bool(made)
    dest.mkdir(parents=True, exist_ok=True)
    for path in made:  # folders publish makes are readable by all; yours keep their mode
        path.chmod(FOLDER_MODE)
    # Staged inside the destination: same file system, so every move is a rename.
    staging = Path(tempfile.mkdtemp(dir=dest, prefix=STAGING_PREFIX))
    try:
        _write_folder(staging, run, allowed_hosts)
        _publish_into(dest, staging, run, corpus, previous, force=force)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:  # a failed first publish leaves no empty folder behind
            with contextlib.suppress(OSError):
                dest.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return dest


def _publish_into(
    dest: Path,
    staging: Path,
    run: artifacts.Run,
    corpus: str,
    previous: dict[str, set[str]],
    *,
    force: bool,
) -> None:
    """Check what the staged folder may replace, then swap it in, marker first."""
    written = {
        p.relative_to(staging).as_posix(): artifacts.sha256_file(p)
        for p in sorted(staging.rglob("*"))
        if p.is_file()
    }
    unlisted = [name for name in written if not _is_publishable(name)]
    if unlisted:  # the marker's rule must admit what publish writes, or a republish fails
        raise ExplorerError(f"publish wrote {unlisted[0]!r}, outside its own list (a bug)")
    _check_replaceable(dest, previous, written, force=force)
    # First record every file that may be ours during the swap (old or new content),
    # so a publish killed midway leaves a folder the next publish can still replace.
    pending = {name: sorted({*previous.get(name, ()), digest}) for name, digest in written.items()}
    for name in set(previous) - set(written):
        pending[name] = sorted(previous[name])
    _write_marker(dest, corpus, run.run_id, pending)
    _swap_in(staging, dest, previous, written)
    _write_marker(dest, corpus, run.run_id, {n: [d] for n, d in written.items()})


def _write_marker(dest: Path, corpus: str, run_id: str, files: dict[str, list[str]]) -> None:
    marker = {"corpus": corpus, "run_id": run_id, "files": files}
    artifacts.atomic_write_text(dest / MARKER, json.dumps(marker, indent=1, sort_keys=True))
    (dest / MARKER).chmod(FILE_MODE)


def check_destination(dest: Path, cache_dir: Path) -> None:
    """Refuse folders a publish must never write into, whatever they hold."""
    protected = {
        Path("/"): "the file system root",
        Path.home().resolve(): "your home folder",
        app_dir(): "the Topic Explorer project",
        cache_dir.resolve(): "the cache",
    }
    for path, what in protected.items():
        if dest == path or path.is_relative_to(dest):
            raise ExplorerError(f"{dest}: refusing to publish into {what}; pick a new folder")
    sources = (cache_dir.resolve(), *(app_dir() / name for name in _SOURCE_FOLDERS))
    if any(dest.is_relative_to(source) for source in sources):
        raise ExplorerError(
            f"{dest}: refusing to publish inside the cache or the app's sources; pick a new folder"
        )
    for path in (dest, *dest.parents):
        if path.exists():
            if not path.is_dir():
                raise ExplorerError(f"{dest}: {path} is a file, not a folder; pick a new folder")
            break


def _previous_files(dest: Path) -> dict[str, set[str]]:
    """What an earlier publish wrote into `dest`, name -> accepted sha256s ({} if new).

    A marker naming anything a publish never writes is refused before anything changes.
    Then leftover staging folders of a killed publish are removed (only they match its
    prefix).
    """
    if not dest.is_dir() or not any(dest.iterdir()):
        return {}
    try:
        files = json.loads((dest / MARKER).read_text(encoding="utf-8"))["files"]
        previous = {str(k): {v} if isinstance(v, str) else set(v) for k, v in files.items()}
    except FileNotFoundError:
        raise ExplorerError(
            f"{dest}: not empty and not written by explorer publish; "
            "nothing was changed (publish into a new or empty folder)"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise ExplorerError(f"{dest / MARKER}: unreadable; nothing was changed") from None
    for name in previous:
        if not _is_publishable(name):
            raise ExplorerError(
                f"{dest / MARKER}: lists {name!r}, which explorer publish never writes; "
                "nothing was changed"
            )
    for leftover in dest.glob(f"{STAGING_PREFIX}*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover)
    return previous


def _is_publishable(name: str) -> bool:
    """Whether `name` (relative, POSIX) is a path some publish writes: a top file, a page,
    a module of the package (any: an older publish may have copied one this one no longer
    does), or a corpus's run, `latest`, curation or query encoder under cache/. Nothing
    hidden (`.git`), nothing outside (`..`, `/etc`)."""
    path = PurePosixPath(name)
    if path.as_posix() != name or path.is_absolute() or not path.parts:
        return False  # only normalised names: no "./x", "x//y", "x/"
    if name in _TOP_FILES:
        return True
    top, *rest = path.parts
    if any(part.startswith(".") for part in path.parts) or not rest:
        return False
    if top in ("pages", "explorer"):
        return True
    return top == "cache" and _is_cache_file(rest)


def _is_cache_file(parts: list[str]) -> bool:
    if "/".join(parts).startswith(f"{artifacts.ENCODER_ROOT}/"):
        return True
    if not NAME_RE.fullmatch(parts[0]):
        return False
    if len(parts) == 2:
        return parts[1] in (LATEST, curation.FILE)
    return NAME_RE.fullmatch(parts[1]) is not None  # a run's files


def _check_replaceable(
    dest: Path, previous: dict[str, set[str]], written: dict[str, str], *, force: bool
) -> None:
    """Before anything changes: nothing of the user's is in the way, no edit is lost."""
    for name in sorted({*previous, *written}):
        target = dest / name
        _check_inside(dest, name)
        in_the_way = [dest / p for p in Path(name).parents[:-1] if (dest / p).is_file()]
        if name in written and target.is_file() and name not in previous:
            in_the_way.append(target)
        for path in in_the_way:
            raise ExplorerError(
                f"{path}: exists and was not written by explorer publish; nothing was changed"
            )
        edited = name in previous and target.is_file() and not force
        if edited and artifacts.sha256_file(target) not in previous[name]:
            raise ExplorerError(
                f"{target}: edited since it was published; nothing was changed "
                "(--force replaces it)"
            )


def _check_inside(dest: Path, name: str) -> None:
    """Refuse a path that would lead out of `dest` through a symbolic link, or that is a
    folder or special file where the publish puts a file."""
    for part in [*reversed(Path(name).parents[:-1]), Path(name)]:
        if (dest / part).is_symlink():
            raise ExplorerError(f"{dest / part}: is a symbolic link; nothing was changed")
    target = dest / name
    if target.exists() and not target.is_file():
        raise ExplorerError(f"{target}: is not a regular file; nothing was changed")


def _swap_in(
    staging: Path, dest: Path, previous: dict[str, set[str]], written: dict[str, str]
) -> None:
    """Remove the files the last publish wrote that this one does not, move the new ones in."""
    for name in sorted(set(previous) - set(written)):
        (dest / name).unlink(missing_ok=True)
        _remove_empty_parents(dest / name, dest)
    for name in written:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, target)
        for parent in Path(name).parents[:-1]:  # the folders it is in, made or not by us
            (dest / parent).chmod(FOLDER_MODE)


def _remove_empty_parents(path: Path, root: Path) -> None:
    for parent in path.parents:
        if parent == root or not parent.is_relative_to(root):
            return
        try:
            parent.rmdir()  # only succeeds when empty
        except OSError:
            return


def _copy_encoder(folder: Path, run: artifacts.Run) -> bool:
    """Copy the run's ONNX query encoder (verified first) next to the run, as the viewer
    looks for it; False when the run has none."""
    cache_dir = run.path.parents[1]
    source = artifacts.encoder_ref(cache_dir, run.manifest)
    if source is None:
        return False
    artifacts.read_encoder_facts(source)  # a damaged export is not shipped
    target = folder / "cache" / source.folder.relative_to(cache_dir)
    shutil.copytree(source.folder, target)
    artifacts.read_encoder_facts(artifacts.encoder_ref(folder / "cache", run.manifest))
    return True


def _copy_curation(folder: Path, run: artifacts.Run) -> None:
    """The corpus's curation overlay (its log, or a schema-1 file not yet migrated, and the
    stored members), checked, so the folder shows the curator's names; the folder's viewer
    cannot edit it (it carries the publish marker). Old logs kept beside it stay behind."""
    cache_dir, corpus = run.path.parents[1], run.corpus
    curation.read(cache_dir, corpus)  # a damaged overlay is not shipped
    for source in (curation.path(cache_dir, corpus), curation.legacy_path(cache_dir, corpus)):
        if source.is_file():
            shutil.copy2(source, folder / "cache" / corpus / source.name)
            break
    members = cache_dir / corpus / curation.MEMBERS
    if members.is_dir():
        shutil.copytree(members, folder / "cache" / corpus / curation.MEMBERS)


def _write_folder(folder: Path, run: artifacts.Run, allowed_hosts: tuple[str, ...]) -> None:
    """Everything the published folder holds, into a fresh `folder`, readable by all."""
    source = app_dir()
    for name in _APP_FILES:
        shutil.copy2(source / name, folder / name)
    (folder / STREAMLIT_CONFIG).parent.mkdir(parents=True)
    (folder / STREAMLIT_CONFIG).write_text(published_config(allowed_hosts), encoding="utf-8")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(source / "pages", folder / "pages", ignore=skip)
    package = Path(__file__).resolve().parent
    for name in PACKAGE_ALLOW:
        source, target = package / name, folder / "explorer" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=skip)
        else:
            shutil.copy2(source, target)
    shutil.copytree(run.path, folder / "cache" / run.corpus / run.run_id)
    _keep_file_names(folder / "cache" / run.corpus / run.run_id)
    artifacts.atomic_write_text(folder / "cache" / run.corpus / artifacts.LATEST, run.run_id)
    _copy_curation(folder, run)
    semantic = _copy_encoder(folder, run)
    (folder / "requirements.txt").write_text(_requirements())
    readme = _readme(
        run.corpus, run.run_id, run.manifest.counts, semantic=semantic, hosts=allowed_hosts
    )
    (folder / "README.md").write_text(readme)
    artifacts.open_run(folder / "cache", run.corpus)  # the copy verifies like the original
    for path in folder.rglob("*"):
        path.chmod(FOLDER_MODE if path.is_dir() else FILE_MODE)


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


def _keep_file_names(run_dir: Path) -> None:
    """Input paths become file names in a run's copy (the manifest's inputs, the papers'
    `source_file`, any message quoting them): a published run tells how its data was
    named, never where it lay on the build host. The manifest's record of the papers table
    is updated, so the copy still verifies."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    manifest = artifacts.Manifest.read(run_dir)
    full = sorted({i.path for i in manifest.inputs}, key=len, reverse=True)
    renamed = _renamed(manifest.to_json(), {path: Path(path).name for path in full})
    manifest = artifacts.Manifest.from_json(renamed, "", run_dir / artifacts.MANIFEST)
    table_file = run_dir / "papers.parquet"
    table = pq.read_table(table_file)
    if "source_file" in table.column_names:
        names = [Path(v).name if v else v for v in table.column("source_file").to_pylist()]
        column = table.schema.get_field_index("source_file")
        field = table.schema.field(column)
        table = table.set_column(column, field, pa.array(names, type=field.type))
        pq.write_table(table, table_file)
        files = {**manifest.files, table_file.name: artifacts.file_record(table_file)}
        manifest = dataclasses.replace(manifest, files=files)
    manifest.write(run_dir)


def _renamed(value: object, names: dict[str, str]) -> object:
    """`value` (JSON) with every string's input paths replaced by their file names, and any
    string that is an absolute path (a model given as a local folder) by its last part."""
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, str):
        if Path(value).is_absolute():
            return Path(value).name
        for path, name in names.items():
            value = value.replace(path, name)
    return value
