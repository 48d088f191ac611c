"""A real two-node Ray cluster on this machine, in a private network namespace.

`run_in_namespace("tests.ray_cluster", ...)` runs `python -m tests.ray_cluster ...` under
`unshare -n -p -f --mount-proc` (Python 3.11 has no os.unshare): a network namespace of
its own, where only the loopback interface exists (brought up with `ip link set lo up`),
so Ray's nodes bind to 127.0.0.1 and nothing Ray tries to reach outside (its IP probe of a
public DNS address, a cloud-metadata probe, a usage ping) leaves the machine; and a PID
namespace of its own, so `ray stop --force` sees only this cluster's processes and every
one of them dies with the namespace when the scenario ends.

Inside, `Cluster` starts `ray start --head` and a second node joining it, each with one
CPU, a 100 MB object store and usage stats off, and stops both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PORT = 6390
OBJECT_STORE = 100 * 1024 * 1024  # bytes; Ray's minimum is 75 MiB
START_ATTEMPTS = 3
ROOT = Path(__file__).resolve().parents[1]


def namespace_tools() -> str | None:
    """Why a namespace cannot be made here, or None."""
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            return f"{tool} not found (apt-get install util-linux iproute2)"
    if os.geteuid() != 0:
        return "making a network namespace needs root here (CI runs as root)"
    return None


def run_in_namespace(module: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`python -m MODULE ARGS` in a private network and PID namespace."""
    ip = shutil.which("ip") or "/usr/sbin/ip"
    script = f'{ip} link set lo up && exec "$0" -m {module} "$@"'
    command = ["unshare", "-n", "-p", "-f", "--mount-proc", "sh", "-c", script, sys.executable]
    return subprocess.run(
        [*command, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ray_environment(),
    )


def ray_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RAY_USAGE_STATS_ENABLED="0",
        # A Ray started by ray.init() turns token authentication on and writes a token to
        # ~/.ray, which nodes started later would then send to a head that expects none:
        # these clusters live in a private namespace and run without tokens, and nothing
        # here reads or writes the user's ~/.ray.
        RAY_AUTH_MODE="disabled",
        # Ray pings its usage server once even with usage stats off: send it nowhere.
        RAY_USAGE_STATS_REPORT_URL="http://127.0.0.1:9/",
        **(extra or {}),
    )
    return env


def ray_cli() -> str:
    return str(Path(sys.executable).with_name("ray"))


class Cluster:
    """A head node and one worker node (one CPU each), started and stopped here."""

    def __init__(self, workdir: Path, node_env: dict[str, str] | None = None) -> None:
        self.address = f"127.0.0.1:{PORT}"
        # Ray's socket paths must stay short (108 bytes): its files go under /tmp, in a
        # folder of this cluster's own (pids repeat from one PID namespace to the next).
        self.temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
        self.workdir = workdir
        # Both nodes get it: which node's actor Ray Data hands a chunk to first depends on
        # which started sooner, so a hook for one node only may never fire.
        self.node_env = node_env or {}

    def _start(self, *args: str, env: dict[str, str] | None = None) -> None:
        common = [
            "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
            "--object-store-memory", str(OBJECT_STORE), "--disable-usage-stats",
        ]  # fmt: skip
        command = [ray_cli(), "start", *args, *common]
        for attempt in range(START_ATTEMPTS):  # a node joining a head still starting may fail
            done = subprocess.run(
                command, capture_output=True, text=True, env=ray_environment(env), timeout=120
            )
            if done.returncode == 0:
                return
            time.sleep(2 * (attempt + 1))
        raise RuntimeError(
            f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )

    def __enter__(self) -> Cluster:
        try:
            self._start(
                "--head", "--port", str(PORT), "--temp-dir", str(self.temp),
                "--include-dashboard=false", env=self.node_env,
            )  # fmt: skip
            self._start("--address", self.address, env=self.node_env)
        except BaseException:
            self.__exit__()
            raise
        return self

    def nodes(self) -> int:
        """Alive nodes, as a driver joining the cluster sees them."""
        code = "import ray; ray.init(address=%r); print(sum(n['Alive'] for n in ray.nodes()))"
        out = subprocess.run(
            [sys.executable, "-c", code % self.address],
            capture_output=True, text=True, env=ray_environment(), timeout=120, check=True,
        )  # fmt: skip
        return int(out.stdout.strip().splitlines()[-1])

    def __exit__(self, *exc) -> None:
        subprocess.run([ray_cli(), "stop", "--force"], capture_output=True, timeout=120)
        shutil.rmtree(self.temp, ignore_errors=True)


def explorer(*args: str) -> dict:
    """`explorer ARGS` as a user runs it: exit status, stderr, seconds."""
    start = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("explorer")), *args],
        capture_output=True, text=True, env=ray_environment(), timeout=600,
    )  # fmt: skip
    return {
        "status": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr,
        "seconds": round(time.perf_counter() - start, 2),
    }


def build_scenario(workdir: Path, corpus: str, seed: str) -> dict:
    """The seed corpus built three times with build seed `seed` (the tests'
    EXPLORER_TEST_SEED), each into a cold cache of its own: through the cluster, locally,
    and through the cluster while a node's actor dies (FAULT_ENV)."""
    from explorer.build.ray_engine import FAULT_ENV
    from tests.conftest import PRECISION_ARGS

    fault = workdir / "fault"
    result: dict[str, object] = {}
    with Cluster(workdir, node_env={FAULT_ENV: str(fault)}) as cluster:
        result["nodes"] = cluster.nodes()
        ray = ["--engine", "ray", "--ray-address", cluster.address]
        # float32 forced: `auto` times the encoders in each cold cache, and two probes under
        # the cluster's load may choose differently; the builds must match bit for bit.
        build = [
            "build",
            corpus,
            "--name",
            "seed",
            "--no-progress",
            "--seed",
            seed,
            *PRECISION_ARGS,
        ]
        result["ray"] = explorer("--cache-dir", str(workdir / "ray"), *build, *ray)
        result["local"] = explorer("--cache-dir", str(workdir / "local"), *build)
        fault.mkdir()  # arms the hook: the first actor to finish a chunk exits, losing it
        # Chunks of 16, the model's batch: three chunks, each one of the local engine's
        # batches, so the vectors stay bit-identical (embed.BATCH_SIZE).
        result["fault"] = explorer(
            "--cache-dir", str(workdir / "fault-cache"), *build, *ray, "--ray-batch-size", "16"
        )
        result["fault_marker"] = (fault / "fault").is_file()
    return result


def main(argv: list[str]) -> int:
    scenario, workdir, *rest = argv
    workdir = Path(workdir)
    if scenario == "build":
        result = build_scenario(workdir, *rest)  # corpus, seed
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    (workdir / "result.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
