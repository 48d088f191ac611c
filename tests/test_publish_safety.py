"""`explorer publish` never destroys what it did not write (tests/e2e/test_publish.py serves
the folder; these check what it may and may not replace)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from explorer import cli
from explorer.errors import ExplorerError
from explorer.hosting.publish import publish
from explorer.hosting.publish_safety import MARKER, STAGING_PREFIX
from tests.conftest import ROOT
from tests.synthetic import write_synthetic_run


@pytest.fixture
def cache(tmp_path) -> Path:
    cache = tmp_path / "cache"
    write_synthetic_run(cache, "syn", 200, n_topics=5)
    return cache


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_first_publish_lists_every_file_it_wrote(cache, tmp_path):
    dest = publish(cache, "syn", tmp_path / "site")
    marker = json.loads((dest / MARKER).read_text())
    on_disk = {n for n in _snapshot(dest) if n != MARKER}
    assert set(marker["files"]) == on_disk and "app.py" in on_disk
    assert "explorer/artifacts.py" in on_disk  # the contract, and the view world:
    assert any(n.startswith("explorer/view/store") for n in on_disk)
    # By allow-list: no build-world module but the query encoder's own.
    built = {n for n in on_disk if n.startswith("explorer/build/")}
    assert built == {
        "explorer/build/__init__.py",
        "explorer/build/models.py",
        "explorer/build/memory.py",
        "explorer/build/settings.py",
    }
    assert not any(n.startswith(("explorer/cli", "explorer/hosting/publish")) for n in on_disk)
    # The serving modules the folder's serve.py runs, and the settings the view reads.
    assert {"explorer/hosting/serve.py", "explorer/hosting/settings.py"} <= on_disk


def test_republish_replaces_exactly_its_own_files(cache, tmp_path):
    dest = publish(cache, "syn", tmp_path / "site")
    (dest / ".git").mkdir()
    (dest / ".git" / "config").write_text("[core]\n")
    (dest / "notes.txt").write_text("mine")
    (dest / "pages" / "mine.py").write_text("# the user's own page")
    # A file the last publish wrote that this one no longer writes is removed.
    marker = json.loads((dest / MARKER).read_text())
    for name, text in {"explorer/old_module.py": "# older", "app.py": "# stale copy"}.items():
        (dest / name).write_text(text)
        marker["files"][name] = hashlib.sha256(text.encode()).hexdigest()
    (dest / MARKER).write_text(json.dumps(marker))
    write_synthetic_run(cache, "syn", 300, n_topics=5, seed=1)  # a newer run to publish

    publish(cache, "syn", dest)
    assert (dest / ".git" / "config").read_text() == "[core]\n"
    assert (dest / "notes.txt").read_text() == "mine"
    assert (dest / "pages" / "mine.py").exists()
    assert not (dest / "explorer" / "old_module.py").exists()
    assert (dest / "app.py").read_bytes() == (ROOT / "app.py").read_bytes()
    assert len(list((dest / "cache" / "syn").iterdir())) == 2  # one run and `latest`


def test_an_edited_published_file_needs_force(cache, tmp_path):
    dest = publish(cache, "syn", tmp_path / "site")
    (dest / "README.md").write_text("my own deployment notes")
    with pytest.raises(ExplorerError, match="README.md: edited since it was published"):
        publish(cache, "syn", dest)
    assert (dest / "README.md").read_text() == "my own deployment notes"
    publish(cache, "syn", dest, force=True)
    assert "topic explorer" in (dest / "README.md").read_text()


@pytest.mark.parametrize("force", [False, True])
def test_a_foreign_non_empty_folder_is_refused_with_or_without_force(cache, tmp_path, force):
    dest = tmp_path / "mydocs"
    (dest / "mydocs").mkdir(parents=True)
    (dest / "mydocs" / "thesis.txt").write_text("four years of work")
    before = _snapshot(dest)
    with pytest.raises(ExplorerError, match="not empty and not written by explorer publish"):
        publish(cache, "syn", dest, force=force)
    assert _snapshot(dest) == before
    assert not list(tmp_path.glob(".mydocs.tmp-*"))


def test_a_user_file_in_the_way_is_refused_before_anything_changes(cache, tmp_path):
    dest = publish(cache, "syn", tmp_path / "site")
    (dest / "requirements.txt").unlink()
    marker = json.loads((dest / MARKER).read_text())
    del marker["files"]["requirements.txt"]  # as if the user made requirements.txt
    (dest / MARKER).write_text(json.dumps(marker))
    (dest / "requirements.txt").write_text("my pins")
    before = _snapshot(dest)
    with pytest.raises(ExplorerError, match="requirements.txt: exists and was not written"):
        publish(cache, "syn", dest, force=True)
    assert _snapshot(dest) == before


@pytest.mark.parametrize("which", ["root", "home", "project", "cache", "inside-cache", "parent"])
def test_protected_folders_are_refused(cache, tmp_path, monkeypatch, which):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    dest = {
        "root": Path("/"),
        "home": home,
        "project": ROOT,
        "cache": cache,
        "inside-cache": cache / "site",
        "parent": ROOT.parent,
    }[which]
    with pytest.raises(ExplorerError, match="refusing to publish"):
        publish(cache, "syn", dest, force=True)


def test_cli_refusal_is_one_line(cache, tmp_path, capsys):
    dest = tmp_path / "mydocs"
    dest.mkdir()
    (dest / "thesis.txt").write_text("x")
    code = cli.main(["--cache-dir", str(cache), "publish", "syn", str(dest), "--force"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"explorer: error: {dest}: not empty")
    assert (dest / "thesis.txt").read_text() == "x"


def test_a_symbolic_link_never_leads_a_publish_out_of_the_folder(cache, tmp_path):
    dest = publish(cache, "syn", tmp_path / "site")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".bashrc").write_text("precious")
    (outside / "mine.py").write_text("precious")
    (dest / "explorer" / "x").symlink_to(outside)  # a name a publish could have written
    marker = json.loads((dest / MARKER).read_text())
    marker["files"]["explorer/x/mine.py"] = [hashlib.sha256(b"precious").hexdigest()]
    (dest / MARKER).write_text(json.dumps(marker))
    with pytest.raises(ExplorerError, match="x: is a symbolic link"):
        publish(cache, "syn", dest, force=True)
    assert (outside / "mine.py").read_text() == "precious"
    (dest / "explorer" / "x").unlink()
    (dest / "pages").rename(dest / "pages-real")
    (dest / "pages").symlink_to(outside)  # a folder it writes into, replaced by a link
    with pytest.raises(ExplorerError, match="pages: is a symbolic link"):
        publish(cache, "syn", dest, force=True)
    assert sorted(p.name for p in outside.iterdir()) == [".bashrc", "mine.py"]


def test_a_publish_killed_midway_is_finished_by_the_next(cache, tmp_path, monkeypatch):
    from explorer.hosting import publish as module

    dest = publish(cache, "syn", tmp_path / "site")
    write_synthetic_run(cache, "syn", 300, n_topics=5, seed=2)
    real, moved = os.replace, []

    def dying_replace(src, dst):
        if len(moved) == 5:
            raise KeyboardInterrupt  # as if killed after five files
        moved.append(dst)
        real(src, dst)

    monkeypatch.setattr(module.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        publish(cache, "syn", dest)
    monkeypatch.setattr(module.os, "replace", real)
    (dest / f"{STAGING_PREFIX}left").mkdir()  # as a SIGKILL would leave it
    publish(cache, "syn", dest)  # no --force needed: every file is known to be ours
    assert not list(dest.glob(f"{STAGING_PREFIX}*"))
    latest = (dest / "cache" / "syn" / "latest").read_text()
    assert (dest / "cache" / "syn" / latest / "manifest.json").is_file()


def test_a_folder_inside_the_apps_sources_is_refused(cache):
    with pytest.raises(ExplorerError, match="inside the cache or the app's sources"):
        publish(cache, "syn", ROOT / "pages" / "site")
    assert not (ROOT / "pages" / "site").exists()
