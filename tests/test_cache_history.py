"""A run does not depend on what the cache held before it.

The seed corpus is built twice: once into an empty cache, once into a cache that already
holds another corpus's embeddings and a half-overlapping corpus's (their abstracts, and the
keyword candidates their topics embedded). Every file of the two runs must be the same,
byte for byte, in float32 and in bfloat16 (emulated where the CPU has no bfloat16: slower,
never skipped). Before bucketed padding (explorer/build/embed.py) a text's vector depended
on which other texts were embedded in its batch, and so on what the cache already held.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from explorer.artifacts import Run
from explorer.build.pipeline import build
from explorer.build.sources import read_inputs
from tests.conftest import SEED_DIR, build_config

pytestmark = [pytest.mark.slow, pytest.mark.realbuild]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    return path


def _other_corpora(folder: Path) -> tuple[Path, Path]:
    """Another corpus (each seed abstract with its sentences in reverse order: new texts on
    the same subjects, so their topics embed many of the same keyword candidates), and one
    that shares half its abstracts with the seed corpus."""
    seeds = read_inputs([SEED_DIR]).papers
    other = [
        {"id": f"o{i}", "title": f"Other {i}", "year": 2024,
         "abstract": " ".join(reversed(re.split(r"(?<=\.) ", p.abstract)))}
        for i, p in enumerate(seeds)
    ]  # fmt: skip
    same = [{"id": f"s{i}", "title": p.title, "abstract": p.abstract} for i, p in enumerate(seeds)]
    half = len(seeds) // 2
    return (
        _write_jsonl(folder / "other.jsonl", other),
        _write_jsonl(folder / "half.jsonl", same[:half] + other[half:]),
    )


def _build(cache: Path, name: str, source: Path, precision: str) -> Run:
    config = build_config(name, (str(source),), embedding_precision=precision)
    return build(config, cache_dir=cache, progress=False, log=lambda m: None).run


def _differences(cold: Run, warm: Run) -> list[str]:
    """Each file that differs, with the first table column that differs when it is a table."""
    files = cold.manifest.files
    out = []
    for name, facts in files.items():
        if warm.manifest.files.get(name) == facts:
            continue
        detail = ""
        if name.endswith(".parquet"):
            a, b = cold.table(name[: -len(".parquet")]), warm.table(name[: -len(".parquet")])
            columns = [c for c in a.columns if c not in b or not a[c].equals(b[c])]
            detail = f" (columns {columns})" if a.shape == b.shape else f" {a.shape} vs {b.shape}"
        out.append(name + detail)
    return out


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_a_run_is_identical_cold_and_in_a_cache_with_history(tmp_path, precision):
    other, half = _other_corpora(tmp_path)
    cold = _build(tmp_path / "cold", "seed", SEED_DIR, precision)
    warm_cache = tmp_path / "warm"
    _build(warm_cache, "other", other, precision)
    _build(warm_cache, "half", half, precision)
    warm = _build(warm_cache, "seed", SEED_DIR, precision)

    assert cold.manifest.config.embedding_precision == precision
    counts = warm.manifest.counts
    assert counts.embedded_cached >= counts.papers // 2  # the history was used
    assert cold.manifest.counts.embedded_cached == 0
    assert cold.run_id == warm.run_id
    assert sorted(cold.manifest.files) == sorted(warm.manifest.files)
    assert _differences(cold, warm) == []
    pd.testing.assert_frame_equal(cold.table("papers"), warm.table("papers"))
