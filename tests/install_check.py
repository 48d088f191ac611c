"""`make install-check`: the package installed from a wheel, as a user installs it, serves
and publishes like a source checkout (issue 30, item 4). Slow (it installs torch into a fresh
virtualenv), so it runs outside `make test`.

A fresh venv under a temporary folder gets `pip install "<copy of the sources>[build]"`
(not editable; the copy is deleted before anything runs, so nothing can come from a source
folder), then, from an empty working folder: `explorer build` of the seed abstracts,
`explorer publish` (the folder must hold the app), `explorer serve --workers 1` and
`explorer dashboard` (each must answer its health check, refuse a foreign Host with the
hardened config, and serve the app from the installed share/ folder).

    python -m tests.install_check [--keep]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from explorer.hosting.processes import free_port
from tests.handshake import handshake_status

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # the CPU wheel this machine's pip serves (Makefile: TORCH)
# Not copied: what is not the package's source (the top-level build/ is setuptools' output,
# not explorer/build/, hence the check on the folder).
TOP_IGNORE = {".venv", "cache", ".git", "bench", "tests", "build", "dist", "data"}


def _ignore(folder: str, names: list[str]) -> set[str]:
    skip = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    return skip | (TOP_IGNORE & set(names) if Path(folder) == ROOT else set())


def run(*command: str, cwd: Path, timeout: float = 1800) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:4])}... failed:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        )
    return done.stdout


def status(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while status(url + "/_stcore/health") != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"not healthy at {url} (exit {proc.poll()})")
        time.sleep(1)


def check_server(command: list[str], cwd: Path, port: int) -> None:
    """Start, wait for health, check the app page and the Host check, stop."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        assert status(url + "/") == 200, "the app page does not answer"
        assert handshake_status(port, "evil.example") == 403, "a foreign Host was served"
        assert handshake_status(port, f"127.0.0.1:{port}") == 101, "the app's own Host was refused"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    keep = "--keep" in sys.argv
    work = Path(tempfile.mkdtemp(prefix="explorer-install-"))
    try:
        source, venv, here = work / "src", work / "venv", work / "cwd"
        shutil.copytree(ROOT, source, ignore=_ignore)
        here.mkdir()
        run(sys.executable, "-m", "venv", str(venv), cwd=work)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        print("installing torch and the package (non-editable)…", flush=True)
        run(*pip, TORCH, cwd=work)
        run(*pip, f"{source}[build]", cwd=work)
        shutil.rmtree(source)  # from here on, only the installed package exists
        explorer = str(venv / "bin" / "explorer")
        seeds = here / "seeds"
        shutil.copytree(ROOT / "data" / "icml2025", seeds)
        print("explorer build…", flush=True)
        run(explorer, "build", str(seeds), "--name", "seed", "--no-progress", cwd=here)
        print("explorer publish…", flush=True)
        run(explorer, "publish", "seed", str(work / "site"), cwd=here)
        for name in (
            "app.py",
            "serve.py",
            "Dockerfile",
            "pages/overview.py",
            ".streamlit/config.toml",
        ):
            assert (work / "site" / name).is_file(), f"the published folder lacks {name}"
        print("explorer serve…", flush=True)
        port = free_port()
        check_server([explorer, "serve", "--workers", "1", "--port", str(port)], here, port)
        print("explorer dashboard…", flush=True)
        port = free_port()
        check_server([explorer, "dashboard", "--port", str(port)], here, port)
        print(f"install check passed (installed app: {venv}/share/topic-explorer)")
        return 0
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
