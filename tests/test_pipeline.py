"""The seed corpus end to end with the real packaged model: artifacts, manifest,
determinism, reuse, incremental embedding and the CLI contract."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from explorer import artifacts
from explorer.build.pipeline import build
from explorer.cli import main
from explorer.errors import ArtifactError
from explorer.manifest import SCHEMA_VERSION
from explorer.names import LATEST, latest_run_id
from explorer.view.store.papers import EXPORT_COLUMNS
from tests.conftest import SEED_ARGS, SEED_DIR, build_config

QUIET = {"progress": False, "log": lambda m: None}


def test_seed_build_writes_every_artifact(seed_run):
    m = seed_run.manifest
    assert m.schema_version == SCHEMA_VERSION
    assert m.counts.papers == 38 and m.counts.topics >= 1
    assert set(m.timings) == {
        "read",
        "embed",
        "neighbors",
        "topics",
        "projection",
        "summaries",
        "write",
        "encoder",
    }
    assert m.config.embedding_model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(m.inputs) == 2 and all(len(i.sha256) == 64 for i in m.inputs)
    for name in artifacts.TABLES:
        assert f"{name}.parquet" in m.files
    assert "model/topic_embeddings.safetensors" in m.files
    assert not any(name.endswith((".pkl", ".pickle", ".bin")) for name in m.files)
    latest = seed_run.path.parent / LATEST
    assert latest.read_text().strip() == seed_run.run_id


def test_seed_tables_are_consistent(seed_run):
    papers, topics = seed_run.table("papers"), seed_run.table("topics")
    assert papers["paper_id"].is_unique and len(papers) == 38
    assert papers["title_derived"].all() and (papers["venue"] == "ICML").all()
    assert papers["topic_id"].map(type).eq(str).all()  # ids are text in every table
    assert topics["topic_id"].map(type).eq(str).all()
    real = topics[topics.topic_id != "-1"]
    assert real["size"].sum() + (papers.topic_id == "-1").sum() == 38
    assert all(len(k) > 0 for k in real["keywords"]) and real["label"].str.len().gt(0).all()
    assert set(papers["topic_id"]) <= set(topics["topic_id"])
    neighbors = seed_run.table("neighbors")
    assert (neighbors.groupby("paper_id").size() == 10).all()
    assert (neighbors.paper_id != neighbors.neighbor_id).all()
    assert papers["probability"].between(0, 1).all()
    keywords = seed_run.table("keywords")
    year = keywords[(keywords.dimension == "year") & (keywords.value == "2025")]
    vocab = seed_run.table("vocab")
    assert dict(zip(year.term, year.df, strict=True)) == {
        t: d for t, d in zip(vocab.term, vocab.df, strict=True)
    }
    indptr = seed_run.array("doc_terms_indptr")
    assert len(indptr) == 39 and indptr[-1] == len(seed_run.array("doc_terms_indices"))


def test_build_is_deterministic_and_reused(seed_cache, seed_run, tmp_path):
    # A fresh cache (embeddings copied, as the model is deterministic on one machine):
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    again = build(build_config("seed", [SEED_DIR]), cache_dir=tmp_path, **QUIET)
    assert not again.reused and again.run.run_id == seed_run.run_id
    a, b = seed_run.table("papers"), again.run.table("papers")
    assert a["topic_id"].tolist() == b["topic_id"].tolist()
    assert np.allclose(a[["x", "y"]].to_numpy(), b[["x", "y"]].to_numpy())
    assert seed_run.table("topics")["label"].tolist() == again.run.table("topics")["label"].tolist()
    reused = build(build_config("seed", [SEED_DIR]), cache_dir=tmp_path, **QUIET)
    assert reused.reused and reused.run.run_id == seed_run.run_id


def test_refit_and_added_papers_embed_only_new_texts(seed_cache, tmp_path, capsys):
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    refit = build(
        build_config("s", [SEED_DIR], min_topic_size=4),
        cache_dir=tmp_path,
        **QUIET,
    )
    assert refit.run.manifest.counts.embedded_new == 0
    assert "it/s" not in capsys.readouterr().err  # no progress bar (BERTopic's included)
    extra = tmp_path / "extra.txt"
    extra.write_text(
        "ICML 2025 extra\n\nA brand new abstract about protein folding with diffusion models.\n"
    )
    added = build(build_config("s", [SEED_DIR, extra]), cache_dir=tmp_path, **QUIET)
    counts = added.run.manifest.counts
    assert counts.embedded_new == 1 and counts.embedded_cached == 38 and counts.papers == 39


def test_cli_info_export_list(seed_cache, tmp_path, capsys):
    assert main(["--cache-dir", str(seed_cache), "info", "seed", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == 38 and info["topics"] >= 2 and "topics" in info["timings"]
    assert main(["--cache-dir", str(seed_cache), "info", "seed"]) == 0  # the text form too
    text = capsys.readouterr().out
    assert "  levels: 0 areas, " in text and "largest leaf" in text and "NPMI" in text
    out = tmp_path / "seed.csv"
    assert main(["--cache-dir", str(seed_cache), "export", "seed", "--out", str(out)]) == 0
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert tuple(frame.columns) == EXPORT_COLUMNS and len(frame) == 38
    # 6 topics: no area level, so no stand-in areas in the export or the levels line.
    assert (frame["area_id"] == "").all() and info["levels"]["areas"] == 0
    assert set(frame["topic_id"]) <= {str(t) for t in range(-1, 40)}
    capsys.readouterr()
    assert main(["--cache-dir", str(seed_cache), "list"]) == 0
    assert capsys.readouterr().out.startswith("seed\t")


@pytest.mark.parametrize("name", ["../evil", "a/b", "embeddings", "", "x" * 65, "bad name"])
def test_cli_refuses_unsafe_corpus_names(tmp_path, capsys, name):
    assert (
        main(["--cache-dir", str(tmp_path), "build", str(SEED_DIR), "--name", name, *SEED_ARGS])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("explorer: error: corpus name") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_cli_bad_input_changes_nothing(tmp_path, capsys):
    empty = tmp_path / "in" / "empty.txt"
    empty.parent.mkdir()
    empty.write_text("\n\n")
    cache = tmp_path / "cache"
    assert main(["--cache-dir", str(cache), "build", str(empty), "--name", "x"]) == 2
    assert capsys.readouterr().err.strip() == f"explorer: error: {empty}: file is empty"
    assert not cache.exists()


def test_tampered_run_is_refused(seed_cache, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(seed_cache / "seed", copy / "seed")
    run_id = latest_run_id(copy, "seed")
    papers = copy / "seed" / run_id / "papers.parquet"
    papers.write_bytes(papers.read_bytes()[:-10])
    with pytest.raises(
        ArtifactError, match="changed since it was built; rebuild it with: explorer build"
    ):
        artifacts.open_run(copy, "seed")


def test_other_schema_is_refused(seed_cache, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(seed_cache / "seed", copy / "seed")
    run_dir = copy / "seed" / latest_run_id(copy, "seed")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["schema_version"] = 0
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match=f"schema 0, this version reads {SCHEMA_VERSION}"):
        artifacts.open_run(copy, "seed")
