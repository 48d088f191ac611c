"""Adding papers to a fitted model without refitting (`explorer/build/assign.py`, `keep.py`)
on small vectors whose right answers are known, and `--keep-topics`'s one-line refusals.
Real rebuilds with curation are in test_curation_rebuild.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts, node_ids
from explorer.build import assign
from explorer.build.keep import Base, Kept, keep_topics, load_base, renumbered
from explorer.cli import main
from explorer.errors import InputError
from explorer.manifest import SampleCounts
from explorer.vectors import normalise_rows
from tests.conftest import SEED_ARGS, SEED_DIR, build_config

OUT = node_ids.OUTLIER


def blobs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three tight clusters of unit vectors around axes 0, 1, 2 (dim 8), with 2-D places
    near (0, 0), (10, 0) and (0, 10)."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], 20)
    unit = normalise_rows(np.eye(8)[labels] + 0.05 * rng.standard_normal((60, 8)))
    centres = np.array([[0, 0], [10, 0], [0, 10]], dtype=np.float32)
    coords = centres[labels] + rng.standard_normal((60, 2)).astype(np.float32)
    return unit.astype(np.float32), labels, coords


def test_a_new_paper_joins_the_topic_of_its_most_similar_papers():
    unit, labels, _ = blobs()
    new = normalise_rows(np.array([np.eye(8)[1], np.eye(8)[2], np.eye(8)[0]])).astype(np.float32)
    assert assign.nearest_topics(new, unit, labels).tolist() == [1, 2, 0]


def test_a_paper_among_the_fits_outliers_stays_an_outlier():
    unit, labels, _ = blobs()
    labels = labels.copy()
    labels[labels == 2] = OUT  # the third cluster is all outliers
    got = assign.nearest_topics(unit[[40, 5]], unit, labels)
    assert got.tolist() == [OUT, 0]  # its neighbours vote "outlier"; topic 0's vote 0


def test_the_vote_follows_neighbours_not_centroids():
    # Topic 0 is a long arc; a new point at its tip is nearer topic 1's centroid than
    # topic 0's, but its nearest papers are topic 0's.
    angles = np.linspace(0, 1.2, 30)
    arc = np.stack([np.cos(angles), np.sin(angles), np.zeros(30)], axis=1)
    blob = normalise_rows(np.array([[0.3, 0.95, 0.2]] * 5) + 0.01 * np.arange(5)[:, None])
    ref = np.vstack([arc, blob]).astype(np.float32)
    ref_labels = np.array([0] * 30 + [1] * 5)
    tip = normalise_rows(np.array([[np.cos(1.22), np.sin(1.22), 0.0]])).astype(np.float32)
    centres = [normalise_rows(ref[ref_labels == t].mean(0, keepdims=True)) for t in (0, 1)]
    assert (tip @ centres[1].T).item() > (tip @ centres[0].T).item()  # the premise
    assert assign.nearest_topics(tip, ref, ref_labels).tolist() == [0]


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
    batched = assign.place(unit, labels, unit, labels, coords)
    np.testing.assert_allclose(batched, whole, rtol=1e-5)  # BLAS rounding varies with shape


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


def test_the_cli_refuses_keep_topics_without_a_run_and_retired_stability(
    seed_cache, tmp_path, capsys
):
    cases = [
        (tmp_path / "cache", "seed", (), "--keep-topics: "),  # no run of this corpus
        (seed_cache, "seed", ("--stability", "2"), "--stability is retired"),
    ]
    for cache, name, extra, message in cases:
        before = sorted(p.name for p in (cache / name).glob("*")) if cache.exists() else []
        argv = ["--cache-dir", str(cache), "build", str(SEED_DIR), "--name", name, *SEED_ARGS]
        assert main([*argv, "--keep-topics", "--no-progress", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        after = sorted(p.name for p in (cache / name).glob("*")) if cache.exists() else []
        assert after == before, "nothing written"


# --- fit on a sample, assign the rest (explorer/build/sample.py) -----------------------


def papers_by_stratum(sizes: dict[tuple[str, int], int]):
    from explorer.build.corpus import Paper

    return [
        Paper(paper_id=f"{venue}-{year}-{i}", title="t", abstract="a", venue=venue, year=year)
        for (venue, year), n in sizes.items()
        for i in range(n)
    ]


def test_the_sample_keeps_each_venue_and_year_in_proportion_and_repeats():
    from explorer.build.sample import stratified_sample

    papers = papers_by_stratum({("icml", 2019): 600, ("icml", 2020): 300, ("nips", 2019): 100})
    rows = stratified_sample(papers, 100, seed=1)
    assert len(rows) == len(set(rows)) == 100 and list(rows) == sorted(rows)
    strata = pd.Series([(papers[i].venue, papers[i].year) for i in rows]).value_counts()
    assert strata.to_dict() == {("icml", 2019): 60, ("icml", 2020): 30, ("nips", 2019): 10}
    np.testing.assert_array_equal(rows, stratified_sample(papers, 100, seed=1))
    assert not np.array_equal(rows, stratified_sample(papers, 100, seed=2))


def test_largest_remainders_fill_the_sample_exactly():
    from explorer.build.sample import stratified_sample

    papers = papers_by_stratum({("a", 1): 5, ("b", 1): 5, ("c", 1): 5})
    assert len(stratified_sample(papers, 10, seed=0)) == 10


def test_sampling_applies_only_above_the_threshold():
    from explorer.build.sample import applies

    assert applies(60_000, 50_000, 20_000)
    assert not applies(40_000, 50_000, 20_000)
    assert not applies(60_000, 0, 20_000)  # 0: never
    assert not applies(60_000, 50_000, 70_000)  # a sample as large as the corpus


def test_a_sample_fit_looks_for_the_corpus_grain_but_never_below_its_floor():
    from explorer.build.sample import SAMPLE_MIN_TOPIC_SHARE, sample_params

    def smallest(n_papers: int, size: int, given: int | None = None) -> int:
        return sample_params(n_papers, size, min_topic_size=given, seed=0).min_topic_size

    floor = round(SAMPLE_MIN_TOPIC_SHARE * 20_000)
    assert floor >= 5
    # A million papers' grain (40) scaled to 20,000 is 0.8: HDBSCAN's noise.
    assert smallest(1_000_000, 20_000) == floor
    # Above the floor the scaled grain stands (40 papers in 60,000: 13 in 20,000).
    assert smallest(60_000, 20_000) == 13
    assert smallest(38, 25) == 2  # a tiny sample keeps HDBSCAN's least
    assert smallest(1_000_000, 20_000, given=100) == 2  # what the user asked, scaled


def test_parallel_assignment_gives_the_one_process_answer(monkeypatch):
    unit, labels, coords = blobs()
    subs = np.where(labels == 0, "0.0", "").astype(object)
    ref = assign.Reference(unit, labels, subs, coords)
    rng = np.random.default_rng(3)
    new = normalise_rows(unit[rng.integers(0, 60, 50)] + 0.02 * rng.standard_normal((50, 8)))
    new = new.astype(np.float32)
    alone = assign.assign_rows(ref, new)
    monkeypatch.setattr(assign, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(assign, "PARALLEL_BATCH", 16)  # 4 batches over a process pool
    pooled = assign.assign_all(ref, new)
    np.testing.assert_array_equal(alone[0], pooled[0])  # topics
    np.testing.assert_array_equal(alone[1], pooled[1])  # subtopics
    np.testing.assert_allclose(alone[2], pooled[2], rtol=1e-5)  # places (BLAS rounding)


def test_a_build_above_the_threshold_fits_a_sample_and_assigns_the_rest(seed_cache, tmp_path):
    import shutil

    from explorer.build.pipeline import build

    cache = tmp_path / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")  # vectors only
    lines: list[str] = []
    config = build_config("s", [SEED_DIR], sample_above=20, sample_size=25)
    run = build(config, cache_dir=cache, progress=False, log=lines.append).run
    counts = run.manifest.counts
    assert counts.sample == SampleCounts(fitted=25, assigned=13)
    assert run.manifest.config.sample == {"above": 20, "size": 25}
    assert "  25 papers in the sample, 13 assigned to its topics" in lines
    papers = run.table("papers")
    assert len(papers) == 38 and papers[["x", "y"]].notna().all().all()
    topics = set(papers["topic_id"]) - {node_ids.OUTLIER_ID}
    assert topics and topics <= set(run.table("nodes")["node_id"])
    # Below the threshold nothing is sampled, and the run id does not mention sampling.
    whole = build(
        build_config("s", [SEED_DIR], sample_above=50, sample_size=25),
        cache_dir=cache, progress=False, log=lines.append,
    ).run  # fmt: skip
    assert whole.manifest.config.sample is None and whole.run_id != run.run_id
    assert whole.run_id == artifacts.open_run(seed_cache, "seed").run_id
