"""explorer/build/isolated.py: torch-heavy steps run in a forked child, so the build's own
process never imports torch; results and one-line errors come back. Each case runs in a
fresh interpreter (this test session has usually imported torch, which keeps the step in
process, as the module intends)."""

import subprocess
import sys
import textwrap

SCRIPT = """
import os, signal, sys
from explorer.build.isolated import in_child
from explorer.errors import ExplorerError, InputError

def heavy():
    import torch  # noqa: F401
    return os.getpid(), "torch" in sys.modules

def refuse():
    raise InputError("paper.csv, line 3: no abstract")

def die():
    os.kill(os.getpid(), signal.SIGKILL)

pid, had_torch = in_child(heavy)
print("child", pid != os.getpid(), had_torch, "torch" in sys.modules)
try:
    in_child(refuse)
except InputError as exc:
    print("error", exc)
try:
    in_child(die)
except ExplorerError as exc:
    print("died", exc)
import torch  # noqa: F401  now this process holds torch: the step runs here
print("here", in_child(os.getpid) == os.getpid())
"""


def test_a_step_runs_in_a_child_and_its_answer_or_error_comes_back():
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "child True True False"  # torch came and went with the child
    assert lines[1] == "error paper.csv, line 3: no abstract"  # the same one line
    assert lines[2] == "died the embedding process ended without a result (exit code -9)"
    assert lines[3] == "here True"


def test_after_ray_is_imported_the_step_runs_here():
    """Ray's threads make a fork unsafe (a Ray build's child hung on a lock): once it is
    imported the step runs in this process."""
    script = (
        "import os, sys\n"
        "from explorer.build.isolated import in_child\n"
        "print(in_child(os.getpid) != os.getpid())\n"
        "import ray  # noqa: F401\n"
        "print(in_child(os.getpid) == os.getpid())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]
