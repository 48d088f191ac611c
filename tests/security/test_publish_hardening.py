"""A published folder is served by other users and names only its own files.

- modes: every file 0644 and every folder 0755 (the run, `latest`, manifest.json, the
  curation file, the marker), even under umask 077 and from a cache of 0600 files;
- the marker: a tampered `.explorer-publish.json` naming `.git/HEAD`, `../outside`, an
  absolute path or any file publish never writes makes a republish refuse in one line,
  and nothing anywhere is deleted;
- no host path: the build host's absolute paths (cache, inputs, project) appear in no
  published file, parquet values included, and the run still verifies;
- another uid: `streamlit run app.py` as `nobody` serves the corpus (root only).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import tomllib

from explorer import artifacts, cli, curation
from explorer.errors import ExplorerError
from explorer.hosting.publish import publish
from tests.conftest import ROOT, SEED_DIR, topic_ids
from tests.e2e.conftest import no_exception, start_server, stop_server, wait_for_app

pytestmark = pytest.mark.realbuild

MARKER = ".explorer-publish.json"


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def private_cache(seed_cache, tmp_path) -> Path:
    """A copy of the seed build (without the embeddings cache) whose files are all 0600 and
    folders 0700, as a cache made under umask 077 is, with a curation file."""
    cache = tmp_path / "cache"
    shutil.copytree(seed_cache, cache, ignore=shutil.ignore_patterns("embeddings", "numba"))
    run = artifacts.open_run(cache, "seed")
    shown = curation.of_run(run).nodes
    target = curation.EditTarget(cache, "seed", run.run_id, run.table("papers"))
    curation.record(target, shown, "rename", node=topic_ids(run)[0], label="Renamed", source="cli")
    for path in [cache, *cache.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    return cache


def modes(folder: Path) -> dict[str, int]:
    return {
        p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


def test_every_published_file_is_readable_by_all_under_umask_077(private_cache, tmp_path):
    dest = tmp_path / "new" / "site"  # both folders made by the publish
    for hosts in ((), ("explorer.example.org",)):  # a first publish, then a republish
        with umask(0o077):
            publish(private_cache, "seed", dest, allowed_hosts=hosts)
        found = modes(dest.parent)
        folders = {n: m for n, m in found.items() if (dest.parent / n).is_dir()}
        files = {n: m for n, m in found.items() if n not in folders}
        assert set(folders.values()) == {0o755}, folders
        assert set(files.values()) == {0o644}, {n: oct(m) for n, m in files.items() if m != 0o644}
        run_id = (dest / "cache/seed/latest").read_text()
        for name in (MARKER, "cache/seed/latest", f"cache/seed/{run_id}/manifest.json",
                     "cache/seed/curation.jsonl", ".streamlit/config.toml"):  # fmt: skip
            assert files[f"site/{name}"] == 0o644


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "listed", [".git/HEAD", ".git/config", "../outside", "/etc/x", "VICTIM", "notes.txt",
               "cache/.serve/8501/haproxy.cfg", "pages/../../outside", "./notes.txt"],
)  # fmt: skip
@pytest.mark.parametrize("force", [False, True])
def test_a_tampered_marker_is_refused_and_nothing_is_deleted(seed_cache, tmp_path, listed, force):
    """Each listed file exists, with the hash the marker gives it, so a publish trusting
    the marker would delete it as its own."""
    dest = tmp_path / "site"
    publish(seed_cache, "seed", dest)
    victim = tmp_path / "victim.txt"
    for path, text in ((dest / ".git/HEAD", "ref: refs/heads/main\n"),
                       (dest / ".git/config", "[core]\n"), (tmp_path / "outside", "mine\n"),
                       (dest / "notes.txt", "notes\n"), (victim, "victim\n"),
                       (dest / "cache/.serve/8501/haproxy.cfg", "global\n")):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    name = str(victim) if listed == "VICTIM" else listed
    target = victim if listed == "VICTIM" else Path(os.path.normpath(dest / name))
    marker = json.loads((dest / MARKER).read_text())
    marker["files"][name] = [_sha(target)] if target.is_file() else ["0" * 64]
    (dest / MARKER).write_text(json.dumps(marker))
    (dest / ".explorer-publish-tmp-left").mkdir()  # a killed publish's staging, kept too
    (dest / ".explorer-publish-tmp-left/x").write_text("x")
    before = _snapshot(tmp_path)
    with pytest.raises(ExplorerError) as refused:
        publish(seed_cache, "seed", dest, force=force)
    message = str(refused.value)
    assert "\n" not in message and repr(name) in message and "nothing was changed" in message
    assert _snapshot(tmp_path) == before  # not one file deleted or changed, anywhere


def _host_paths(cache: Path) -> set[str]:
    run = artifacts.open_run(cache, "seed")
    inputs = {i.path for i in run.manifest.inputs}
    assert any(Path(i).is_absolute() for i in inputs)  # the test is about such paths
    return {str(cache.resolve()), str(SEED_DIR.resolve()), str(ROOT), *inputs}


def test_no_host_path_in_the_published_folder(private_cache, tmp_path):
    """Inputs, the cache, the project, and a model named by its local folder."""
    run_dir = artifacts.open_run(private_cache, "seed").path
    manifest = json.loads((run_dir / "manifest.json").read_text())
    model = str(tmp_path / "models" / "my-local-model")  # as `--embedding-model DIR` records it
    manifest["config"]["embedding_model"] = manifest["config"]["embedding_model_id"] = model
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    dest = tmp_path / "site"
    publish(private_cache, "seed", dest)
    needles = {*_host_paths(private_cache), str(tmp_path)}
    for path in dest.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        assert not [n for n in needles if n.encode() in data], path
        if path.suffix == ".parquet":  # compressed: look at the values too
            for column in pq.read_table(path).to_pylist():
                for value in column.values():
                    text = json.dumps(value, default=str)
                    assert not [n for n in needles if n in text], (path, value)
    run = artifacts.open_run(dest / "cache", "seed")  # still verifies, byte for byte
    assert run.manifest.config.embedding_model == "my-local-model"
    built = artifacts.open_run(private_cache, "seed")
    names = [Path(i.path).name for i in built.manifest.inputs]
    assert [i.path for i in run.manifest.inputs] == names
    sources = run.table("papers")["source_file"]
    assert list(sources) == [Path(s).name for s in built.table("papers")["source_file"]]
    assert set(sources) <= set(names)


def test_the_published_config_listens_anywhere_and_names_its_hosts(seed_cache, tmp_path, capsys):
    dest = tmp_path / "site"
    publish_cli = ["--cache-dir", str(seed_cache), "publish", "seed", str(dest)]
    hosts = ["--allowed-host", "Explorer.Example.org", "--allowed-host", "10.0.0.5"]
    assert cli.main([*publish_cli, *hosts]) == 0
    server = tomllib.loads((dest / ".streamlit/config.toml").read_text())["server"]
    assert "address" not in server  # Docker, Community Cloud and servers listen on all
    hosts = ["localhost", "127.0.0.1", "::1", "explorer.example.org", "10.0.0.5"]
    assert server["allowedHosts"] == hosts
    readme = (dest / "README.md").read_text()
    assert "## Host names" in readme and "STREAMLIT_SERVER_ALLOWED_HOSTS" in readme
    capsys.readouterr()
    assert cli.main([*publish_cli, "--allowed-host", 'x"]\naddress = "0.0.0.0']) == 2
    error = capsys.readouterr().err
    assert "is not a host name" in error and len(error.strip().splitlines()) == 1
    assert "0.0.0.0" not in (dest / ".streamlit/config.toml").read_text()


@pytest.fixture
def shared_folder():
    """A world-traversable folder (pytest's tmp_path is 0700: no other user gets in)."""
    base = Path(tempfile.mkdtemp(prefix="explorer-pub-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base)


def test_a_published_folder_serves_its_corpus_as_another_user(seed_cache, shared_folder, page):
    """`streamlit run app.py` as `nobody` (no access to the cache, the project or
    root's home) from a folder published under umask 077 shows the corpus."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the server as another user (nobody)")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    with umask(0o077):
        dest = publish(seed_cache, "seed", shared_folder / "site")
    home = shared_folder / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    wrapper = shared_folder / "as-nobody"
    wrapper.write_text(
        f"#!/bin/sh\nHOME={home} exec {setpriv} --reuid=nobody --regid=nogroup "
        f'--clear-groups {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    proc, url = start_server(dest / "cache", python=str(wrapper), app_dir=dest, edit_key=None)
    try:
        owner = subprocess.run(["ps", "-o", "user=", "-p", str(proc.pid)], capture_output=True,
                               text=True, check=False).stdout.strip()  # fmt: skip
        assert owner == "nobody"  # setpriv execs streamlit in its own process
        page.goto(f"{url}/topics")
        wait_for_app(page)
        no_exception(page)
        text = page.inner_text("body")
        papers = artifacts.open_run(seed_cache, "seed").manifest.counts.papers
        assert f"{papers:,} papers" in text  # the sidebar's headline: the run loaded
        assert "Similarity heatmap" in text  # the Topics page drew down to its last tabs
    finally:
        stop_server(proc)
