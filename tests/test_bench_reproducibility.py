"""bench/reproducibility.py re-measuring some corpora keeps the rest of the stored result,
each part dated when it was measured (row 12's cells must not borrow a later date)."""

import json

import bench.reproducibility as R


def _stored(tmp_path, monkeypatch) -> dict:
    stored = {
        "when": "2026-12-05T11:47:14",
        "corpora": {
            "icml": {"name": "ICML", "now": {"seed_topic_ari": 0.1}},
            "nips": {"name": "NeurIPS", "now_measured": "2026-12-04T01:00:00", "now": {}},
        },
        "quality": {"now": {"mix_venue_homogeneity": 0.69}},
        "cold_icml": {"now": {"wall_s": 92.7}},
    }
    (tmp_path / "reproducibility.json").write_text(json.dumps(stored))
    monkeypatch.setattr(R, "RESULTS", tmp_path)
    return stored


def test_corpora_not_measured_again_are_kept_with_their_dates(tmp_path, monkeypatch):
    _stored(tmp_path, monkeypatch)
    kept = R._kept({"corpora": {}}, ["icml"])
    assert list(kept["corpora"]) == ["nips"]  # icml is measured again, not kept
    nips = kept["corpora"]["nips"]
    assert nips["now_measured"] == "2026-12-04T01:00:00"  # its own date wins
    assert nips["before_measured"] == "2026-12-05T11:47:14"  # else the stored result's
    assert kept["quality"]["measured"] == kept["cold_icml"]["measured"] == "2026-12-05T11:47:14"


def test_nothing_stored_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "RESULTS", tmp_path)
    assert R._kept({"corpora": {}}, ["icml"]) == {"corpora": {}}


def test_a_split_made_by_one_build_only_is_told_apart():
    import pandas as pd

    topics = ["0"] * 4 + ["1"] * 4
    x = pd.DataFrame({"topic_id": topics, "subtopic_id": ["0.0", "0.0", "0.1", "0.1"] + [""] * 4})
    # y splits topic 0 alike, and topic 1, which x left whole
    y = pd.DataFrame({"topic_id": topics, "subtopic_id": ["0.0", "0.0", "0.1", "0.1", "1.0", "1.0", "1.1", "1.1"]})  # fmt: skip
    found = R.split_agreement(x, y)
    assert found["split_in_one_share"] == 0.5
    assert found["leaf_ari_splits_alike"] == 1.0  # alike where both split: no other difference
    y_moved = y.assign(subtopic_id=["0.0", "0.1", "0.0", "0.1", "1.0", "1.0", "1.1", "1.1"])
    assert R.split_agreement(x, y_moved)["leaf_ari_splits_alike"] < 1.0


def test_row_12d_judges_seed_42_and_shows_every_seed_beside_it():
    from bench.table_quality import reproducibility_rows

    def side(hit: float, seven: float) -> dict:
        keywords = {"www_keyword_lift": 2.0, "www_label_hit": hit}
        seeds = {"42": keywords, "7": {"www_keyword_lift": 3.0, "www_label_hit": seven}}
        return {"mix_venue_homogeneity": 0.7, **keywords, "www_seeds": seeds}

    result = {"corpora": {}, "targets": {}, "when": "2026-12-07T18:00:00"}
    result["quality"] = {"now": side(0.40, 0.60), "before": side(0.45, 0.30)}
    (row,) = reproducibility_rows(result)
    assert "**fail**" in row  # seed 42: 40% against 45%
    assert "label hit 40.0% / 60.0%, mean 50.0%; keyword lift mean 2.500" in row
