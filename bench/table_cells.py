"""The two helpers every part of bench/README.md's results table uses: a benchmark's stored
result (bench/results/<name>.json), and one row of the table with its verdict.
"""

from __future__ import annotations

import json

from bench.common import RESULTS


def stored(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def row(target: str, ours, stock, ratio, ok: bool | None, when: str) -> str:
    verdict = "—" if ok is None else ("pass" if ok else "**fail**")
    return f"| {target} | {ours} | {stock} | {ratio} | {verdict} | {when} |"
