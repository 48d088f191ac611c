"""Any OSError while building or publishing (disk full, a path under a file) is one line on
stderr that names the path and what to do, and leaves nothing half-written.

Tests run as root, where chmod cannot make a folder read-only, so the failures are made
for real: a cache path under a regular file, and a 3 MB tmpfs mounted inside a private
mount namespace (`unshare -m`), which the test tears down with the namespace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from explorer import cli
from explorer.names import latest_run_id
from tests.conftest import ROOT, SEED_ARGS, SEED_DIR


def _explorer(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer.cli", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if line.startswith("explorer: error:")]
    assert len(errors) == 1 and stderr.rstrip().endswith(errors[0]), stderr[-3000:]
    return errors[0]


@pytest.mark.realbuild  # it starts a build (the guard in tests/conftest.py checks)
def test_a_cache_path_under_a_regular_file(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("not a folder")
    done = _explorer(
        "--cache-dir", str(blocker / "cache"), "build", str(SEED_DIR), "--name", "x", *SEED_ARGS
    )
    assert done.returncode == cli.EXIT_ERROR
    line = _error_line(done.stderr)
    assert str(blocker) in line and "part of this path is a file" in line
    assert blocker.read_text() == "not a folder"


def test_publish_under_a_regular_file(seed_cache, tmp_path, capsys):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    code = cli.main(["--cache-dir", str(seed_cache), "publish", "seed", str(blocker / "site")])
    err = capsys.readouterr().err
    assert code == cli.EXIT_ERROR and len(err.strip().splitlines()) == 1
    assert f"{blocker} is a file, not a folder" in err


def _can_unshare() -> str | None:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return "needs root and unshare(1) to mount a private tmpfs"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return None if probe.returncode == 0 else f"unshare -m refused: {probe.stderr[-200:]!r}"


@pytest.mark.realbuild
def test_a_full_disk_while_building(tmp_path):
    reason = _can_unshare()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    cache = tmp_path / "tiny"
    cache.mkdir()
    script = (
        f"mount -t tmpfs -o size=3m tmpfs {cache} && "
        f"{sys.executable} -m explorer.cli --cache-dir {cache} build {SEED_DIR} --name seed "
        f"--no-progress {' '.join(SEED_ARGS)}; code=$?; ls -A {cache}/seed > {tmp_path}/left.txt; exit $code"
    )
    # The program puts numba's cache under the cache folder itself (as on a user's machine).
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == cli.EXIT_ERROR, done.stderr[-3000:]
    line = _error_line(done.stderr)
    assert "No space left on device" in line and "free some space" in line
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr  # --no-progress
    assert str(cache) in line
    # Nothing half-written: no run, no temporary run folder, no `latest`.
    assert (tmp_path / "left.txt").read_text().split() == [".lock"]
    assert latest_run_id(cache, "seed") is None  # the tmpfs is gone: empty again
