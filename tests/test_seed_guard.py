"""The tests' seed guard (tests/conftest.py): a build with another seed than
EXPLORER_TEST_SEED, or a real build in a test not marked `realbuild`, fails the test."""

from __future__ import annotations

import sys

import pytest

from tests import conftest
from tests.conftest import BUILD_SEED, SEED_ARGS, SEED_DIR, SeedGuardError, build_config


def test_every_build_goes_through_the_guard():
    from explorer.build import pipeline

    assert pipeline.plan_build.__module__ == "tests.conftest"  # wrapped for the session
    assert build_config("x", [SEED_DIR]).seed == BUILD_SEED
    assert SEED_ARGS[:2] == ("--seed", str(BUILD_SEED))


def test_a_build_with_another_seed_or_outside_realbuild_is_refused(tmp_path):
    from explorer.build import pipeline

    with pytest.raises(SeedGuardError, match=f"runs with seed {BUILD_SEED + 1}"):
        pipeline.plan_build(
            build_config("x", [SEED_DIR], seed=BUILD_SEED + 1), cache_dir=tmp_path, progress=False
        )
    with pytest.raises(SeedGuardError, match="mark the test `realbuild`"):
        pipeline.plan_build(build_config("x", [SEED_DIR]), cache_dir=tmp_path, progress=False)


@pytest.mark.realbuild
@pytest.mark.build_seeds(BUILD_SEED + 1)
def test_a_test_may_name_the_other_seeds_it_builds_with(tmp_path):
    from explorer.build import pipeline

    for seed in (BUILD_SEED, BUILD_SEED + 1):
        config = build_config("x", [SEED_DIR], seed=seed)
        assert pipeline.plan_build(config, cache_dir=tmp_path, progress=False).params.seed == seed


def test_explorer_build_command_lines_are_checked(tmp_path):
    import subprocess

    python = sys.executable
    assert conftest._explorer_build_seed([python, "-m", "explorer.cli", "list"]) is False
    assert conftest._explorer_build_seed(["/x/bin/explorer", "build", "d", *SEED_ARGS]) == (
        BUILD_SEED
    )
    assert conftest._explorer_build_seed(f"sh -c '{python} -m explorer.cli build d'") is None
    script = f"sh -c 'mount x && {python} -m explorer.cli build d --seed 5; code=$?'"
    assert conftest._explorer_build_seed(script) == 5
    other = ["--seed", str(BUILD_SEED + 1)]
    with pytest.raises(SeedGuardError, match=f"runs with seed {BUILD_SEED + 1}"):
        subprocess.Popen([python, "-m", "explorer.cli", "build", str(tmp_path), *other])
