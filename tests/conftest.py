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
    from explorer.build.pipeline import BuildConfig, build

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


def shown(markdown: object) -> str:
    """What a reader sees of Markdown that `explorer.view.text.md` escaped (for AppTest, which
    reports the Markdown source): backslash escapes resolved, word joiners removed."""
    import re

    from explorer.view.text import WORD_JOINER

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown)).replace(WORD_JOINER, "")
