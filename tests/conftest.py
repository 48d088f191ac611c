"""Shared fixtures: tiny input files written by the tests, and one real build of the seed corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED_DIR = ROOT / "data" / "icml2025"
SHARED = ROOT.parent / "shared" / "data"

# One numba cache for the whole session: UMAP's kernels compile once, not once per build.
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / "cache" / "numba"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def seed_cache(tmp_path_factory) -> Path:
    """A cache directory holding a real build of the shipped seed corpus, named 'seed'."""
    from explorer.pipeline import BuildConfig, build

    cache = tmp_path_factory.mktemp("seed-cache")
    build(
        BuildConfig(name="seed", inputs=(str(SEED_DIR),)),
        cache_dir=cache,
        progress=False,
        log=lambda m: None,
    )
    return cache


@pytest.fixture(scope="session")
def seed_run(seed_cache):
    from explorer.artifacts import open_run

    return open_run(seed_cache, "seed")


HOSTILE_ABSTRACT = (
    "We attack renderers <img src=x onerror=alert(1)> and <script>alert(3)</script> with "
    "[a link](javascript:alert(4)) and stray $ signs, studying neural network robustness to "
    "adversarial examples in image classification."
)


@pytest.fixture(scope="session")
def hostile_cache(tmp_path_factory, seed_cache) -> Path:
    """A real build of the seed abstracts plus two papers whose every field is hostile."""
    import json
    import shutil

    from explorer.pipeline import BuildConfig, build
    from explorer.sources import read_inputs

    root = tmp_path_factory.mktemp("hostile")
    rows = [
        {"id": f"s{i}", "title": p.title, "abstract": p.abstract}
        for i, p in enumerate(read_inputs([SEED_DIR]).papers)
    ]
    rows += [
        {"id": "x1", "title": '<script>alert("title")</script> Hostile title', "abstract": HOSTILE_ABSTRACT,
         "authors": "<img src=x onerror=alert(2)>; Eve", "status": "Oral"},
        {"id": "x2", "title": "<b>Bold</b> [click](javascript:alert(5))", "abstract": HOSTILE_ABSTRACT + " Second copy.",
         "authors": "Mallory", "status": "Poster"},
    ]  # fmt: skip
    source = root / "icml2025.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    cache = root / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")
    build(
        BuildConfig(name="hostile", inputs=(str(source),)),
        cache_dir=cache,
        progress=False,
        log=lambda m: None,
    )
    return cache
