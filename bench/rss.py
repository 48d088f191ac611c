"""Run a command and print its peak memory on stderr: PEAK_RSS_KB= (the child's own
ru_maxrss) and PEAK_TREE_PSS_KB= (the peak of the summed PSS of the child and every
process under it, sampled every SAMPLE_S).

    python bench/rss.py PROGRAM [ARGS...]

os.wait4 gives the rusage of exactly that child, so parallel or earlier children do not
leak into the figure (RUSAGE_CHILDREN would report the maximum over all of them). But a
build that runs worker processes (the consensus fits: explorer/build/consensus.py) holds
their memory at the same time as its own, which ru_maxrss never adds up: the tree's PSS
does (each shared page split between the processes mapping it, so nothing counts twice).
Sampling can miss a peak shorter than SAMPLE_S; for one process ru_maxrss is exact.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

SAMPLE_S = 0.2


def _tree(pid: int) -> list[int]:
    """pid and every process under it (Linux's /proc/<pid>/task/<tid>/children)."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            found += _tree(int(child))
    return found


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass  # gone meanwhile
    return 0


def _sample(pid: int, peak: list[int], done: threading.Event) -> None:
    while not done.wait(SAMPLE_S):
        peak[0] = max(peak[0], sum(_pss_kb(p) for p in _tree(pid)))


def main() -> int:
    proc = subprocess.Popen(sys.argv[1:])
    peak, done = [0], threading.Event()
    sampler = threading.Thread(target=_sample, args=(proc.pid, peak, done), daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    print(f"PEAK_RSS_KB={usage.ru_maxrss}", file=sys.stderr, flush=True)
    print(f"PEAK_TREE_PSS_KB={peak[0]}", file=sys.stderr, flush=True)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
