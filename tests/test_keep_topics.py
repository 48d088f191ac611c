"""Adding papers to a fitted model without refitting (`explorer/build/assign.py`, `keep.py`)
on small vectors whose right answers are known, and `--keep-topics`'s one-line refusals.
Real rebuilds with curation are in test_curation_rebuild.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts
from explorer.build import assign
from explorer.build.keep import Base, Kept, keep_topics, load_base, renumbered
from explorer.cli import main
from explorer.errors import InputError
from explorer.vectors import normalise_rows
from tests.conftest import SEED_DIR

OUT = artifacts.OUTLIER


def blobs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three tight clusters of unit vectors around axes 0, 1, 2 (dim 8), with 2-D places
    near (0, 0), (10, 0) and (0, 10)."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], 20)
    unit = normalise_rows(np.eye(8)[labels] + 0.05 * rng.standard_normal((60, 8)))
    centres = np.array([[0, 0], [10, 0], [0, 10]], dtype=np.float32)
    coords = centres[labels] + rng.standard_normal((60, 2)).astype(np.float32)
    return unit.astype(np.float32), labels, coords


def test_a_new_paper_joins_the_most_similar_topic_or_stays_an_outlier():
    unit, labels, _ = blobs()
    new = normalise_rows(np.array([np.eye(8)[1], np.eye(8)[2], np.eye(8)[7]])).astype(np.float32)
    got = assign.nearest_topics(new, unit, labels, threshold=0.5)
    assert got.tolist() == [1, 2, OUT]  # the last is like no topic
    assert assign.nearest_topics(new, unit, labels, threshold=-1.0)[2] in (0, 1, 2)


def test_outliers_of_the_reference_are_no_topic_to_join():
    unit, labels, _ = blobs()
    labels = labels.copy()
    labels[labels == 2] = OUT
    got = assign.nearest_topics(unit[40:41], unit, labels, threshold=-1.0)
    assert got[0] in (0, 1)


def test_a_new_paper_lands_inside_its_topics_cloud():
    unit, labels, coords = blobs()
    new = normalise_rows(np.eye(8)[[2, 0]] + 0.01).astype(np.float32)
    placed = assign.place(new, np.array([2, 0]), unit, labels, coords)
    for point, topic in zip(placed, (2, 0), strict=True):
        cloud = coords[labels == topic]
        assert (cloud.min(axis=0) <= point).all() and (point <= cloud.max(axis=0)).all()


def test_batches_give_the_same_answer(monkeypatch):
    unit, labels, coords = blobs()
    whole = assign.place(unit, labels, unit, labels, coords)
    monkeypatch.setattr(assign, "BATCH", 7)
    np.testing.assert_allclose(assign.place(unit, labels, unit, labels, coords), whole)


def test_subtopics_follow_the_nearest_subtopic_centroid_of_the_topic():
    unit, labels, _ = blobs()
    subs = np.array([""] * 60, dtype=object)
    subs[:10], subs[10:20] = "0.0", "0.1"  # topic 0 split in two halves; 1 and 2 unsplit
    got = assign.nearest_subtopics(unit[[3, 15, 30]], np.array([0, 0, 1]), unit, labels, subs)
    assert got[2] == "" and set(got[:2]) <= {"0.0", "0.1"}


def base_of(unit, labels, coords) -> Base:
    papers = pd.DataFrame(
        {
            "paper_id": [f"p{i}" for i in range(len(labels))],
            "topic_id": labels,
            "subtopic_id": [f"{t}.0" if t == 0 else "" for t in labels],
            "x": coords[:, 0],
            "y": coords[:, 1],
        }
    )
    return Base(
        run_id="r1",
        papers=papers,
        params={},
        embedding_model="m",
        threshold=0.5,
        area_of_topic={0: "A0", 1: "A0", 2: "A1"},
        unsplit={1: "too few papers to split"},
    )


def test_kept_papers_keep_their_path_and_place_and_gone_papers_leave():
    unit, labels, coords = blobs()
    base = base_of(unit, labels, coords)
    ids = [f"p{i}" for i in range(1, 60)] + ["new"]  # p0 left the corpus, one arrived
    vectors = np.vstack([unit[1:], unit[:1]])  # the newcomer repeats p0's vector
    kept = keep_topics(base, ids, vectors)
    assert (kept.kept, kept.added) == (59, 1)
    assert kept.labels[:-1].tolist() == labels[1:].tolist()
    np.testing.assert_array_equal(kept.coords[:-1], coords[1:])
    assert kept.labels[-1] == 0 and kept.levels.subtopic[-1] == "0.0"
    assert kept.levels.area_of_topic == base.area_of_topic


def test_no_paper_in_common_is_refused():
    unit, labels, coords = blobs()
    with pytest.raises(InputError, match="no paper of run r1"):
        keep_topics(base_of(unit, labels, coords), ["x", "y"], unit[:2])


def test_renumbering_by_size_carries_subtopics_and_areas_along():
    labels = np.array([0, 0, 1, 1, 1])
    kept = Kept(
        labels=labels,
        levels=assign_levels(),
        coords=np.zeros((5, 2), dtype=np.float32),
        kept=4,
        added=1,
    )
    swapped = renumbered(kept, np.array([1, 1, 0, 0, 0]))
    assert swapped.levels.subtopic.tolist() == ["1.0", "1.1", "", "", ""]
    assert swapped.levels.area_of_topic == {1: "A0", 0: "A1"}
    assert swapped.levels.unsplit == {0: "no structure among its papers"}


def assign_levels():
    from explorer.build.levels import Levels

    return Levels(
        area_of_topic={0: "A0", 1: "A1"},
        subtopic=np.array(["0.0", "0.1", "", "", ""], dtype=object),
        unsplit={1: "no structure among its papers"},
    )


def test_keeping_the_topics_of_a_corpus_never_built_is_one_line(tmp_path):
    with pytest.raises(InputError, match="^--keep-topics: ") as caught:
        load_base(tmp_path, "nothing")
    assert "\n" not in str(caught.value)


def test_the_cli_refuses_keep_topics_without_a_run_and_with_stability(seed_cache, tmp_path, capsys):
    cases = [
        (tmp_path / "cache", "seed", (), "--keep-topics: "),  # no run of this corpus
        (seed_cache, "seed", ("--stability", "2"), "no --stability to score"),
    ]
    for cache, name, extra, message in cases:
        before = sorted(p.name for p in (cache / name).glob("*")) if cache.exists() else []
        argv = ["--cache-dir", str(cache), "build", str(SEED_DIR), "--name", name]
        assert main([*argv, "--keep-topics", "--no-progress", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        after = sorted(p.name for p in (cache / name).glob("*")) if cache.exists() else []
        assert after == before, "nothing written"
