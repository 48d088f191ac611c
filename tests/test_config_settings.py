"""The build's settings table is the one home of every build option: the parser, BuildConfig
and the modules that use a default all read it, and `--add` is the plan's, not the CLI's."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from explorer.build import models, projection, sample, settings, topics
from explorer.build.config import BuildConfig
from explorer.build.plan import with_latest_inputs
from explorer.build.sources import ReadOptions
from explorer.cli import _parser, main
from explorer.errors import ArtifactError, InputError
from tests.conftest import SEED_ARGS, SEED_DIR, build_config


def _build_parser() -> argparse.ArgumentParser:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["build"]


def _defaults(cls: type) -> dict[str, object]:
    return {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }


def test_the_parser_adds_every_flagged_setting_with_its_default_and_help():
    parser = _build_parser()
    actions = {a.dest: a for a in parser._actions}
    flagged = [row for row in settings.SETTINGS if row.flag is not None]
    for row in flagged:
        action = actions[row.name]
        assert action.option_strings == [row.flag]
        assert action.default == row.default and action.help == row.help_text()
        assert (tuple(action.choices) if action.choices else None) == row.choices
        assert action.metavar == row.metavar
    names = {row.name for row in flagged}
    assert [a.dest for a in parser._actions if a.dest in names] == [r.name for r in flagged]


def test_buildconfig_and_read_options_take_their_defaults_from_the_table():
    config, read = _defaults(BuildConfig), _defaults(ReadOptions)
    for row in settings.SETTINGS:
        if row.part == settings.CONFIG:
            assert config[row.name] == row.default, row.name
        elif row.part == settings.READ_OPTIONS:
            assert read[row.name] == row.default, row.name
    assert set(read) == {r.name for r in settings.SETTINGS if r.part == settings.READ_OPTIONS}


def test_the_modules_read_their_defaults_from_the_table():
    assert settings.default("embedding_model") == models.DEFAULT_MODEL
    assert settings.default("sample_above") == sample.SAMPLE_ABOVE
    assert settings.default("sample_size") == sample.SAMPLE_SIZE
    assert settings.default("seed") == topics.DEFAULT_SEED
    assert settings.default("exact_neighbours_up_to") == projection.EXACT_UP_TO
    assert settings.setting("embedding_precision").choices == ("auto", *settings.PRECISIONS)


SAMPLE = "--sample-above N: N at least 0; --sample-size N: N at least 10"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sample_size": settings.MIN_DOCUMENTS - 1}, SAMPLE),
        ({"sample_above": -1}, SAMPLE),
        ({"embedding_precision": "half"}, "--embedding-precision: one of auto, float32, "
         "bfloat16, onnx, not 'half'"),
        ({"engine": "spark"}, "--engine: one of local, ray, not 'spark'"),
    ],
)  # fmt: skip
def test_validate_checks_the_tables_bounds_and_choices(options, message):
    """The messages as they were before the table: same numbers, same words."""
    with pytest.raises(InputError) as raised:
        BuildConfig(name="x", inputs=("a",), **options).validate()
    assert str(raised.value) == message


def test_add_without_a_previous_run_is_one_line(tmp_path, capsys):
    argv = ["--cache-dir", str(tmp_path), "build", str(SEED_DIR), "--name", "new", "--add"]
    assert main([*argv, *SEED_ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("explorer: error: corpus 'new' has no complete build") and (
        err.count("\n") == 1
    )


def test_without_add_the_inputs_are_as_given(tmp_path):
    config = build_config("x", [SEED_DIR])
    assert with_latest_inputs(config, tmp_path) is config
    with pytest.raises(ArtifactError):
        with_latest_inputs(dataclasses.replace(config, add=True), tmp_path)


def test_add_keeps_the_latest_runs_inputs_first(seed_cache, seed_run, tmp_path):
    extra = tmp_path / "extra.txt"
    known = [i.path for i in seed_run.manifest.inputs]
    config = build_config("seed", [extra, known[0]], add=True)
    assert with_latest_inputs(config, seed_cache).inputs == (*known, str(extra))
