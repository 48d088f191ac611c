"""Run ids name the code that made a run, and results do not depend on input order."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from explorer import artifacts
from explorer.build import plan as planning
from explorer.build.pipeline import build, plan_build
from explorer.build.sources import read_inputs
from explorer.names import MANIFEST
from tests.conftest import ROOT, SEED_DIR, build_config

QUIET = {"progress": False, "log": lambda m: None}


def _plan(*inputs, cache):
    return plan_build(build_config("seed", inputs), cache_dir=cache, progress=False)


def test_input_order_changes_neither_the_run_id_nor_the_paper_order(tmp_path):
    a, b = sorted(SEED_DIR.glob("*.txt"))
    forward, backward = _plan(a, b, cache=tmp_path), _plan(b, a, cache=tmp_path)
    assert forward.run_id == backward.run_id
    assert forward.corpus.papers == backward.corpus.papers


def test_run_id_covers_pipeline_version_and_model_packages(tmp_path, monkeypatch):
    base = _plan(SEED_DIR, cache=tmp_path)
    monkeypatch.setattr(planning, "PIPELINE_VERSION", planning.PIPELINE_VERSION + 1)
    assert _plan(SEED_DIR, cache=tmp_path).run_id != base.run_id
    monkeypatch.undo()
    real = planning.metadata.version
    for package in planning.MODEL_PACKAGES:
        monkeypatch.setattr(
            planning.metadata, "version", lambda n, p=package: "0.0-other" if n == p else real(n)
        )
        assert _plan(SEED_DIR, cache=tmp_path).run_id != base.run_id, package
    monkeypatch.undo()
    assert _plan(SEED_DIR, cache=tmp_path).run_id == base.run_id


def test_a_run_made_by_older_code_is_rebuilt_and_says_why(
    seed_cache, seed_run, tmp_path, monkeypatch
):
    shutil.copytree(seed_cache / "seed", tmp_path / "seed")
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    lines: list[str] = []
    config = build_config("seed", [SEED_DIR])
    assert build(config, cache_dir=tmp_path, progress=False, log=lines.append).reused
    monkeypatch.setattr(planning, "PIPELINE_VERSION", planning.PIPELINE_VERSION + 1)
    lines.clear()
    result = build(config, cache_dir=tmp_path, progress=False, log=lines.append)
    assert not result.reused and result.run.run_id != seed_run.run_id
    expected = (
        f"Rebuilding 'seed': its run {seed_run.run_id} was made by pipeline version "
        f"{planning.PIPELINE_VERSION - 1}; this is {planning.PIPELINE_VERSION}."
    )
    assert expected in lines, lines
    assert result.run.manifest.pipeline_version == planning.PIPELINE_VERSION


def test_rebuild_reason_names_the_changed_package(seed_run, tmp_path):
    plan = _plan(SEED_DIR, cache=tmp_path)
    copy = tmp_path / "copy" / "seed" / seed_run.run_id
    copy.mkdir(parents=True)
    shutil.copy(seed_run.path / MANIFEST, copy)
    current = artifacts.read_prior_run(tmp_path / "copy", "seed")
    assert current.run_id == seed_run.run_id
    assert current.embedding_precision == seed_run.manifest.config.embedding_precision
    previous = replace(current, versions={**current.versions, "bertopic": "0.16.0"})
    reason = planning.rebuild_reason(previous, plan)
    assert reason == (
        f"its run {seed_run.run_id} was made with bertopic 0.16.0 -> "
        f"{plan.code['packages']['bertopic']}"
    )
    previous = replace(current, embedding_weights="0" * 16)
    assert "weights changed" in planning.rebuild_reason(previous, plan)
    assert planning.rebuild_reason(current, plan) is None


def test_a_run_of_an_older_schema_still_explains_the_rebuild(tmp_path):
    """Manifest.read refuses another schema; the rebuild line must still name the version."""
    run = tmp_path / "c" / "old1"
    run.mkdir(parents=True)
    (run / MANIFEST).write_text(
        json.dumps({"schema_version": 1, "pipeline_version": 3, "config": {"seed": 1}})
    )
    prior = artifacts.read_prior_run(tmp_path, "c")
    assert prior.run_id == "old1" and prior.embedding_precision == "float32"
    plan = _plan(SEED_DIR, cache=tmp_path)
    assert "made by pipeline version 3" in planning.rebuild_reason(prior, plan)
    (run / MANIFEST).write_text("[1, 2]")
    assert artifacts.read_prior_run(tmp_path, "c") is None


def test_make_run_always_asks_explorer_build(tmp_path):
    """`make run` rebuilds a stale default corpus: it runs `explorer build` (a no-op when the
    run is current) instead of checking only that some run exists."""
    recipe = (ROOT / "Makefile").read_text().split("build-default:")[1].split("\n\n")[0]
    assert "explorer build data/icml2025 --name $(DEFAULT_CORPUS)" in recipe
    assert "explorer info" not in recipe


@pytest.mark.parametrize("field", ["title", "abstract"])
def test_readers_drop_tex_text_commands(tmp_path, field):
    rows = [
        {"id": f"p{i}", "title": f"Paper {i}", "abstract": f"Abstract {i} about things."}
        for i in range(3)
    ]
    rows[0][field] = r"We \emph{robustly} fit $\mathcal{F}$ models"
    source = tmp_path / "icml2019.json"
    source.write_text(json.dumps(rows))
    values = {getattr(p, field) for p in read_inputs([source]).papers}
    assert r"We robustly fit $\mathcal{F}$ models" in values


def test_renaming_an_input_that_names_the_venue_changes_the_run(tmp_path):
    """Venue and year can come from a file's name: the run id covers the papers as read."""
    rows = [
        {"id": f"p{i}", "title": f"T{i}", "abstract": f"Abstract number {i}."} for i in range(12)
    ]
    first, second = tmp_path / "icml2019.json", tmp_path / "neurips2020.json"
    first.write_text(json.dumps(rows))
    a = _plan(first, cache=tmp_path)
    first.rename(second)
    b = _plan(second, cache=tmp_path)
    assert {p.venue for p in b.corpus.papers} == {"NeurIPS"} and a.run_id != b.run_id


def test_a_damaged_run_of_the_same_id_is_rebuilt_not_reused(seed_cache, seed_run, tmp_path):
    shutil.copytree(seed_cache / "seed", tmp_path / "seed")
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    target = tmp_path / "seed" / seed_run.run_id / "topics.parquet"
    target.write_bytes(target.read_bytes() + b"x")
    lines: list[str] = []
    config = build_config("seed", [SEED_DIR])
    result = build(config, cache_dir=tmp_path, progress=False, log=lines.append)
    assert not result.reused and result.run.run_id == seed_run.run_id
    assert any(
        line.startswith(f"Rebuilding run {seed_run.run_id}:") and "changed since" in line
        for line in lines
    ), lines
    assert build(config, cache_dir=tmp_path, progress=False, log=lines.append).reused


def test_the_neighbour_method_is_in_the_run_id_only_above_the_threshold(tmp_path):
    from explorer.build.projection import NNDESCENT

    base = _plan(SEED_DIR, cache=tmp_path)
    assert "neighbours" not in base.recorded  # below it: ids as before approximate graphs
    raised = plan_build(
        build_config("seed", [SEED_DIR], exact_neighbours_up_to=10**9),
        cache_dir=tmp_path, progress=False,
    )  # fmt: skip
    assert raised.run_id == base.run_id
    above = plan_build(
        build_config("seed", [SEED_DIR], exact_neighbours_up_to=len(base.corpus) - 1),
        cache_dir=tmp_path, progress=False,
    )  # fmt: skip
    assert above.recorded["neighbours"] == NNDESCENT and above.run_id != base.run_id
