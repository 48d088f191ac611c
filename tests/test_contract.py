"""The typed contract: the node-id grammar and the Manifest (read, checked, written in one place).

These tests may read manifest keys by string and take ids apart by hand: they check the
contract itself against the file format it promises.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer import node_ids
from explorer.errors import ArtifactError, NodeIdError
from explorer.manifest import (
    SCHEMA_VERSION,
    LevelCounts,
    LevelQuality,
    Manifest,
    SampleCounts,
    StabilityCounts,
)
from explorer.names import MANIFEST
from tests.synthetic import write_synthetic_run

index = st.integers(min_value=0, max_value=10**6)

# --- node ids --------------------------------------------------------------------------------


@given(index)
def test_an_area_id_round_trips(n):
    node = node_ids.area_id(n)
    assert node_ids.level_of(node) == "area"
    assert node_ids.parent_of(node) is None
    assert node_ids.id_order(node) == (n,)


@given(index)
def test_a_topic_id_round_trips(n):
    node = node_ids.topic_id(n)
    assert node == str(n)
    assert node_ids.level_of(node) == "topic"
    assert node_ids.topic_of(node) == node
    assert node_ids.parent_of(node) is None


@given(index, index)
def test_a_subtopic_id_round_trips(topic, part):
    node = node_ids.subtopic_id(topic, part)
    assert node_ids.level_of(node) == "subtopic"
    assert node_ids.topic_of(node) == node_ids.parent_of(node) == node_ids.topic_id(topic)
    assert node_ids.subtopic_index(node) == part
    assert node_ids.subtopic_id(node_ids.topic_of(node), node_ids.subtopic_index(node)) == node
    assert node_ids.id_order(node) == (topic, part)


def test_the_outliers_id_is_a_topic_of_its_own():
    assert node_ids.topic_id(node_ids.OUTLIER) == node_ids.OUTLIER_ID
    assert node_ids.level_of(node_ids.OUTLIER_ID) == "topic"
    assert node_ids.topic_of(node_ids.OUTLIER_ID) == node_ids.OUTLIER_ID
    assert node_ids.parent_of(node_ids.OUTLIER_ID) is None


def test_numeric_order_sorts_ids_as_numbers():
    ids = ["12", "A10", "3.10", "-1", "3.2", "A2"]
    topics = sorted((i for i in ids if node_ids.level_of(i) != "area"), key=node_ids.id_order)
    assert topics == ["-1", "3.2", "3.10", "12"]
    assert sorted(["A10", "A2"], key=node_ids.id_order) == ["A2", "A10"]


@pytest.mark.parametrize(
    "bad", ["", "A", "a3", "A03", "03", "3.", ".3", "3.1.2", "-2", "-1.0", " 3", "3 ", "x", None, 3]
)
def test_a_text_that_is_no_node_id_is_refused_in_one_line(bad):
    parsers = [node_ids.level_of, node_ids.topic_of, node_ids.parent_of]
    for parse in parsers + ([node_ids.id_order] if isinstance(bad, str) else []):
        with pytest.raises(NodeIdError) as caught:
            parse(bad)
        message = str(caught.value)
        assert "\n" not in message and repr(bad) in message and "not a node id" in message


def test_asking_an_area_for_its_topic_or_a_topic_for_its_part_is_an_error():
    with pytest.raises(NodeIdError, match="area"):
        node_ids.topic_of("A3")
    with pytest.raises(NodeIdError, match="not a subtopic"):
        node_ids.subtopic_index("3")
    assert issubclass(NodeIdError, ValueError)  # what a parser's caller expects to catch


# --- the manifest ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return write_synthetic_run(cache, "syn", 200, n_topics=12)


def _raw(run_dir) -> dict:
    return json.loads((run_dir / MANIFEST).read_text())


def _rewrite(run_dir, tmp_path, change) -> object:
    """A copy of the run whose manifest.json has had `change(raw)` applied."""
    raw = _raw(run_dir)
    change(raw)
    target = tmp_path / "syn" / run_dir.name
    target.mkdir(parents=True)
    (target / MANIFEST).write_text(json.dumps(raw))
    return target


def test_read_then_write_gives_the_same_json(run_dir, tmp_path):
    manifest = Manifest.read(run_dir)
    assert manifest.to_json() == _raw(run_dir)
    out = tmp_path / "out"
    out.mkdir()
    manifest.write(out)
    assert Manifest.read(out) == manifest
    assert list(_raw(out)) == list(_raw(run_dir))  # the keys in the file's order


def test_the_manifest_reads_typed(run_dir):
    m = Manifest.read(run_dir)
    assert m.schema_version == SCHEMA_VERSION and m.corpus == "syn"
    assert m.counts.papers == 200 and isinstance(m.counts.levels, LevelCounts)
    assert m.config.embedding_precision == "float32" and m.config.sample is None
    assert isinstance(m.counts.years, tuple) and isinstance(m.inputs, tuple)


def test_optional_sections_round_trip_as_the_build_writes_them(run_dir, tmp_path):
    m = Manifest.read(run_dir)
    counts = replace(
        m.counts,
        sample=SampleCounts(fitted=10, assigned=5),
        stability=StabilityCounts(refits=2, mean_ari=0.8, median=0.9, below_half=1),
        levels=replace(
            m.counts.levels,
            quality={"topic": LevelQuality(coherence=None, diversity=0.5, low_coherence=0)},
        ),
    )
    from explorer.build.projection import approximate_method

    config = replace(
        m.config,
        clusterer={"name": "toy", "params": {"k": 3}},
        neighbours=approximate_method(2, exact_up_to=1),  # as a plan records it
    )
    changed = replace(m, counts=counts, config=config, query_encoder={"format": None})
    out = tmp_path / "out"
    out.mkdir()
    changed.write(out)
    raw = _raw(out)
    assert raw["counts"]["sample"] == {"fitted": 10, "assigned": 5}
    assert raw["counts"]["stability"]["below_0.5"] == 1  # the file's own key
    assert raw["config"]["clusterer"] == {"name": "toy", "params": {"k": 3}}
    assert raw["config"]["neighbours"]["method"]
    assert "keep_topics_of" not in raw["config"] and "kept_topics" not in raw["counts"]
    assert Manifest.read(out) == changed


def test_keys_this_version_does_not_know_are_kept(run_dir, tmp_path):
    def add(raw):
        raw["later"] = {"x": 1}
        raw["counts"]["later"] = 2

    target = _rewrite(run_dir, tmp_path, add)
    manifest = Manifest.read(target)
    assert manifest.to_json()["later"] == {"x": 1} and manifest.counts.to_json()["later"] == 2


def test_an_older_run_of_this_schema_opens_with_defaults(run_dir, tmp_path):
    """Keys later pipeline versions added (stability, levels' quality, the encoder) may be
    missing from a run of the same schema: it still opens."""

    def strip(raw):
        del raw["query_encoder"], raw["config"]["stability"], raw["counts"]["stability"]
        del raw["counts"]["levels"]["quality"]

    m = Manifest.read(_rewrite(run_dir, tmp_path, strip))
    assert m.query_encoder is None and m.config.stability == 0 and m.counts.stability is None
    assert m.counts.levels.quality == {}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda raw: raw["counts"].pop("papers"), "counts.papers"),
        (lambda raw: raw["counts"].update(papers="many"), "counts.papers"),
        (lambda raw: raw["counts"].update(papers=True), "counts.papers"),
        (lambda raw: raw["config"].update(seed=None), "config.seed"),
        (lambda raw: raw.update(inputs={}), "inputs"),
        (lambda raw: raw["counts"]["levels"].update(has_areas="yes"), "counts.levels.has_areas"),
        (lambda raw: raw.update(config=[]), "config"),
        (lambda raw: raw["counts"].update(years=[2020, "x"]), "counts.years[1]"),
        (lambda raw: raw.pop("created_at"), "created_at"),
    ],
)
def test_a_malformed_manifest_is_refused_in_one_line_naming_file_and_field(
    run_dir, tmp_path, change, field
):
    target = _rewrite(run_dir, tmp_path, change)
    with pytest.raises(ArtifactError) as caught:
        Manifest.read(target)
    message = str(caught.value)
    assert "\n" not in message
    assert str(target / MANIFEST) in message and repr(field) in message


def test_another_schema_or_no_json_object_is_refused_in_one_line(run_dir, tmp_path):
    target = _rewrite(run_dir, tmp_path, lambda raw: raw.update(schema_version=0))
    with pytest.raises(ArtifactError, match="schema 0, this version reads"):
        Manifest.read(target)
    (target / MANIFEST).write_text("[1, 2]")
    with pytest.raises(ArtifactError, match="not a JSON object"):
        Manifest.read(target)
    (target / MANIFEST).write_text("{")
    with pytest.raises(ArtifactError, match="unreadable manifest"):
        Manifest.read(target)
