"""`explorer publish NAME DIR`: a self-contained folder that serves one corpus, viewer only.

The folder holds the app (app.py, pages/, the viewer's part of the explorer package, by
allow-list), the corpus's latest run (copied, integrity-checked first), a requirements.txt
with only what serving needs, the production Streamlit config, a Dockerfile and a README
on deploying it. It runs with ``pip install -r requirements.txt && streamlit run app.py``,
or on every core with ``python serve.py --workers N`` (haproxy in front; explorer/hosting/serve.py).

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
import tempfile
from pathlib import Path

from explorer import artifacts, curation
from explorer.atomic_files import atomic_write_text, file_record, sha256_file
from explorer.errors import ExplorerError
from explorer.hosting.app_home import app_dir
from explorer.hosting.checks import check_hosts
from explorer.hosting.publish_safety import (
    APP_FILES,
    MARKER,
    STAGING_PREFIX,
    STREAMLIT_CONFIG,
    check_destination,
    check_replaceable,
    is_publishable,
    previous_files,
)
from explorer.hosting.publish_texts import published_config, readme, requirements
from explorer.manifest import Manifest
from explorer.names import LATEST, MANIFEST

# Readable by every user, writable by the owner: a published folder is served by other
# accounts (a web server's, a container's), whatever the umask and the cache's modes.
FILE_MODE = 0o644
FOLDER_MODE = 0o755
# What of the explorer package a published folder carries: the contract (with onnx_encoder.py,
# which runs the exported query encoder) and the view world, plus the model encoder's modules
# (explorer.view.query_encoder's declared exception: semantic search falls back to them where a run
# has no ONNX export and the host installs the model packages), the curation overlay the
# viewer applies, and the serving modules the folder's own serve.py runs to serve with N
# workers behind haproxy.
PACKAGE_ALLOW = (
    "__init__.py", "artifacts.py", "node_ids.py", "manifest.py", "atomic_files.py", "curation", "errors.py", "names.py", "vectors.py", "onnx_encoder.py", "view",
    "hosting/__init__.py", "hosting/settings.py", "hosting/options.py", "hosting/checks.py",
    "hosting/edit_key.py", "hosting/haproxy.py", "hosting/processes.py", "hosting/supervisor.py",
    "hosting/serve.py",
    "build/__init__.py", "build/models.py", "build/memory.py", "build/settings.py",
)  # fmt: skip


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
    previous = previous_files(dest)
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
        p.relative_to(staging).as_posix(): sha256_file(p)
        for p in sorted(staging.rglob("*"))
        if p.is_file()
    }
    unlisted = [name for name in written if not is_publishable(name)]
    if unlisted:  # the marker's rule must admit what publish writes, or a republish fails
        raise ExplorerError(f"publish wrote {unlisted[0]!r}, outside its own list (a bug)")
    check_replaceable(dest, previous, written, force=force)
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
    atomic_write_text(dest / MARKER, json.dumps(marker, indent=1, sort_keys=True))
    (dest / MARKER).chmod(FILE_MODE)


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
    for name in APP_FILES:
        shutil.copy2(source / name, folder / name)
    (folder / STREAMLIT_CONFIG).parent.mkdir(parents=True)
    (folder / STREAMLIT_CONFIG).write_text(published_config(allowed_hosts), encoding="utf-8")
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(source / "pages", folder / "pages", ignore=skip)
    package = Path(__file__).resolve().parents[1]  # explorer/
    for name in PACKAGE_ALLOW:
        source, target = package / name, folder / "explorer" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=skip)
        else:
            shutil.copy2(source, target)
    shutil.copytree(run.path, folder / "cache" / run.corpus / run.run_id)
    _keep_file_names(folder / "cache" / run.corpus / run.run_id)
    atomic_write_text(folder / "cache" / run.corpus / LATEST, run.run_id)
    _copy_curation(folder, run)
    semantic = _copy_encoder(folder, run)
    (folder / "requirements.txt").write_text(requirements())
    text = readme(
        run.corpus, run.run_id, run.manifest.counts, semantic=semantic, hosts=allowed_hosts
    )
    (folder / "README.md").write_text(text)
    artifacts.open_run(folder / "cache", run.corpus)  # the copy verifies like the original
    for path in folder.rglob("*"):
        path.chmod(FOLDER_MODE if path.is_dir() else FILE_MODE)


def _keep_file_names(run_dir: Path) -> None:
    """Input paths become file names in a run's copy (the manifest's inputs, the papers'
    `source_file`, any message quoting them): a published run tells how its data was
    named, never where it lay on the build host. The manifest's record of the papers table
    is updated, so the copy still verifies."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    manifest = Manifest.read(run_dir)
    full = sorted({i.path for i in manifest.inputs}, key=len, reverse=True)
    renamed = _renamed(manifest.to_json(), {path: Path(path).name for path in full})
    manifest = Manifest.from_json(renamed, "", run_dir / MANIFEST)
    table_file = run_dir / "papers.parquet"
    table = pq.read_table(table_file)
    if "source_file" in table.column_names:
        names = [Path(v).name if v else v for v in table.column("source_file").to_pylist()]
        column = table.schema.get_field_index("source_file")
        field = table.schema.field(column)
        table = table.set_column(column, field, pa.array(names, type=field.type))
        pq.write_table(table, table_file)
        files = {**manifest.files, table_file.name: file_record(table_file)}
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
