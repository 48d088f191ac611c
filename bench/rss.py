"""Run a command and print its peak RSS (the child's ru_maxrss) as PEAK_RSS_KB= on stderr.

    python -m bench.rss PROGRAM [ARGS...]

os.wait4 gives the rusage of exactly that child, so parallel or earlier children do not
leak into the figure (RUSAGE_CHILDREN would report the maximum over all of them).
"""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> int:
    proc = subprocess.Popen(sys.argv[1:])
    _, status, usage = os.wait4(proc.pid, 0)
    print(f"PEAK_RSS_KB={usage.ru_maxrss}", file=sys.stderr, flush=True)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
