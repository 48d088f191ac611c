"""The query encoder's ONNX export: the model's own vectors and rankings without torch, made
once per model and weights and atomically, and the viewer's fallback order."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest

from explorer import artifacts
from explorer.build import encoder_export
from explorer.build.models import DEFAULT_MODEL, Embedder, load_model
from explorer.errors import ArtifactError, ExplorerError
from explorer.manifest import Manifest
from explorer.onnx_encoder import load_onnx_encoder
from explorer.view import query_encoder, search_scores
from tests.conftest import ROOT
from tests.synthetic import write_synthetic_run

LONG = " ".join(
    f"Section {i}: we study variational inference for Gaussian processes under covariate "
    "shift, with regret bounds and experiments on molecules."
    for i in range(20)
)
QUERIES = [
    "spiking neural networks",
    "risk-averse training of neural processes",
    "cheaper image generation by using smaller models at some decoding steps",
    "papers about uncertainty in robot learning",
    "graph neural networks for molecules",
    "large language model alignment with human feedback",
    "diffusion models",
    "bandit regret bounds",
    "Théorie des jeux et apprentissage par renforcement multi-agent",
    "Lösungen für naïve Bayes-Klassifikatoren",
    "深度学习中的不确定性估计",
    "трансформеры для временных рядов",
    "emoji 🤖 robots and ∑ ∫ math symbols",
    "  leading and trailing spaces  ",
    "a",
    "UPPER CASE QUERY ABOUT CONVEX OPTIMIZATION",
    "federated learning privacy",
    "protein structure prediction",
    "in-context learning theory",
    LONG,
]


@pytest.fixture(scope="module")
def ref(seed_cache, seed_run) -> artifacts.EncoderRef:
    found = artifacts.encoder_ref(seed_cache, seed_run.manifest)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def ours(ref):
    return load_onnx_encoder(ref)


@pytest.fixture(scope="module")
def model():
    return load_model(DEFAULT_MODEL, progress=False)


def _cosine_gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return 1 - cosine


def test_the_run_names_its_export(seed_run, ref):
    record = seed_run.manifest.query_encoder
    weights = seed_run.manifest.config.embedding_weights
    assert record["format"] == "onnx"
    assert record["folder"] == f"models/onnx/sentence-transformers_all-MiniLM-L6-v2-{weights}"
    facts = artifacts.read_encoder_facts(ref)
    assert facts["pooling"] == "mean" and facts["normalize"] is True
    assert facts["max_seq_length"] == 256 and facts["dimension"] == 384
    assert facts["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert set(facts["files"]) == {"model.onnx", "model.onnx.data", "tokenizer.json"}
    assert "encoder" in seed_run.manifest.timings


def test_onnx_vectors_match_sentence_transformers(ours, model):
    assert len(model[0].tokenizer(LONG)["input_ids"]) > 256  # truncation is exercised
    theirs = np.asarray(model.encode(QUERIES), dtype=np.float32)
    batch = ours.encode(QUERIES)  # padded to the longest
    one_by_one = np.stack([ours.encode([q])[0] for q in QUERIES])
    assert batch.dtype == np.float32 and batch.shape == theirs.shape
    assert _cosine_gap(batch, theirs).max() <= 1e-4
    assert _cosine_gap(one_by_one, theirs).max() <= 1e-4
    assert np.allclose(np.linalg.norm(one_by_one, axis=1), 1, atol=1e-5)


def test_top_ten_over_the_seed_corpus_is_the_same(seed_run, ours, model):
    embeddings = seed_run.array("embeddings")
    everyone = np.arange(len(embeddings))
    for query in QUERIES:
        a = search_scores.semantic_scores(embeddings, ours.encode([query])[0])
        b = search_scores.semantic_scores(embeddings, model.encode([query])[0])
        top_a, top_b = search_scores.top(a, everyone, 10), search_scores.top(b, everyone, 10)
        for x, y in zip(top_a, top_b, strict=True):
            # A swap is allowed only between papers the model itself scores within 1e-3.
            assert x == y or abs(b[x] - b[y]) < 1e-3, (query, x, y, b[x], b[y])


def test_the_export_is_cached_by_weights(seed_cache, seed_run, tmp_path, monkeypatch):
    shutil.copytree(seed_cache / "models", tmp_path / "models")
    weights = seed_run.manifest.config.embedding_weights
    exported = []

    def export(name, folder, weights):
        exported.append(folder.name)
        raise encoder_export.ExportSkipped("not in this test")

    monkeypatch.setattr(encoder_export, "_export", export)
    logs: list[str] = []
    record = encoder_export.export_query_encoder(
        Embedder(DEFAULT_MODEL, weights, "float32", tmp_path), log=logs.append
    )
    assert exported == [] and logs == []  # the second build of the model: nothing exported
    assert record == seed_run.manifest.query_encoder
    other = Embedder(DEFAULT_MODEL, "0" * 16, "float32", tmp_path)  # another folder: exported
    record = encoder_export.export_query_encoder(other, log=logs.append)
    assert exported == ["sentence-transformers_all-MiniLM-L6-v2-" + "0" * 16]
    assert record == {"format": None, "skipped": "not in this test"}


def test_a_damaged_export_is_redone(seed_cache, seed_run, tmp_path, monkeypatch):
    shutil.copytree(seed_cache / "models", tmp_path / "models")
    (folder,) = (tmp_path / "models" / "onnx").iterdir()
    with (folder / "model.onnx.data").open("r+b") as handle:
        handle.truncate(1000)
    assert not encoder_export.intact(folder)
    ref = artifacts.encoder_ref(tmp_path, seed_run.manifest)
    with pytest.raises(ArtifactError, match="model.onnx.data: changed since it was built"):
        artifacts.read_encoder_facts(ref)
    weights = seed_run.manifest.config.embedding_weights
    record = encoder_export.export_query_encoder(
        Embedder(DEFAULT_MODEL, weights, "float32", tmp_path), log=lambda m: None
    )
    assert record == seed_run.manifest.query_encoder  # the export is deterministic
    assert artifacts.read_encoder_facts(ref)["pooling"] == "mean"


def test_a_failed_export_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(model, folder, facts):
        assert (folder / "model.onnx.data").stat().st_size > 1_000_000  # written, unchecked
        raise KeyboardInterrupt

    monkeypatch.setattr(encoder_export, "_check_export", interrupted)
    (tmp_path / "models" / "onnx").mkdir(parents=True)
    stale = tmp_path / "models" / "onnx" / ".tmp-older-export-999999999"  # a killed build's
    stale.mkdir()
    with pytest.raises(KeyboardInterrupt):
        encoder_export.export_query_encoder(
            Embedder(DEFAULT_MODEL, "1" * 16, "float32", tmp_path), log=lambda m: None
        )
    assert list((tmp_path / "models" / "onnx").iterdir()) == []


def _odd_model(tmp_path, modules: list[str], pooling: dict):
    model = tmp_path / "odd-model"
    (model / "1_Pooling").mkdir(parents=True)
    listed = [
        {"idx": i, "name": str(i), "path": "1_Pooling" if kind == "Pooling" else "", "type": kind}
        for i, kind in enumerate(modules)
    ]
    (model / "modules.json").write_text(json.dumps(listed))
    (model / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return model


def test_an_early_export_skipped_is_reported_once_by_the_encoder_stage(tmp_path, monkeypatch):
    """A build exports right after its embedding (export_early; a skip is kept, not said);
    its encoder stage says why there is no export, without trying again, and only once."""
    model = _odd_model(tmp_path, ["Transformer", "Pooling"], {"pooling_mode_max_tokens": True})
    early: list[str] = []
    encoder_export.export_early(
        Embedder(str(model), "3" * 16, "float32", tmp_path), log=early.append
    )
    assert early == []  # nothing exported, nothing said yet
    checked = []
    real_check = encoder_export._check_supported
    monkeypatch.setattr(
        encoder_export, "_check_supported", lambda d: (checked.append(d), real_check(d))
    )
    logs: list[str] = []
    for _ in range(2):
        record = encoder_export.export_query_encoder(
            Embedder(str(model), "3" * 16, "float32", tmp_path), log=logs.append
        )
        assert record["format"] is None and "pooling (max)" in record["skipped"]
    assert len(logs) == 2 and len(checked) == 1  # the second call is a new attempt


@pytest.mark.parametrize(
    ("modules", "pooling", "reason"),
    [
        (["Transformer", "Pooling"], {"pooling_mode_max_tokens": True}, "pooling (max)"),
        (["Transformer", "Pooling", "Dense"], {"pooling_mode": "mean"}, "are not Transformer"),
        (["Transformer", "Pooling"], {"pooling_mode": ["mean", "cls"]}, "pooling (mean+cls)"),
    ],
)
def test_a_pipeline_numpy_cannot_finish_is_skipped(tmp_path, modules, pooling, reason):
    model = _odd_model(tmp_path, modules, pooling)
    logs: list[str] = []
    record = encoder_export.export_query_encoder(
        Embedder(str(model), "2" * 16, "float32", tmp_path), log=logs.append
    )
    assert record["format"] is None and reason in record["skipped"]
    assert len(logs) == 1 and reason in logs[0]
    run_dir = write_synthetic_run(tmp_path / "synthetic", "syn", 50, n_topics=8)
    manifest = replace(Manifest.read(run_dir), query_encoder=record)
    assert artifacts.encoder_ref(tmp_path, manifest) is None


def test_fallback_order(ref, monkeypatch):
    assert query_encoder.load_encoder(DEFAULT_MODEL, ref).kind == "onnx"
    assert query_encoder.load_encoder(DEFAULT_MODEL, None).kind == "sentence-transformers"
    gone = ref._replace(folder=ref.folder.parent / "missing")  # the export was removed
    assert query_encoder.load_encoder(DEFAULT_MODEL, gone).kind == "sentence-transformers"
    monkeypatch.setattr(query_encoder, "runtime_available", lambda: False)  # no onnxruntime
    assert query_encoder.load_encoder(DEFAULT_MODEL, ref).kind == "sentence-transformers"
    monkeypatch.setattr(query_encoder, "model_available", lambda: False)  # nor the model packages
    assert not query_encoder.encoder_available(ref)
    with pytest.raises(ExplorerError, match="no encoder here"):
        query_encoder.load_encoder(DEFAULT_MODEL, ref)
    monkeypatch.undo()
    monkeypatch.setattr(query_encoder, "model_available", lambda: False)
    with pytest.raises(ExplorerError, match="its ONNX export failed: .*missing"):
        query_encoder.load_encoder(DEFAULT_MODEL, gone)


@pytest.fixture
def app(seed_cache, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from explorer.view.ui import search_box
    from explorer.view.ui.data import load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(seed_cache))
    monkeypatch.chdir(ROOT)
    load_run.clear()
    search_box._model.clear()
    search_box._query_vector.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    search_box._model.clear()
    search_box._query_vector.clear()


def _ask(app, query: str) -> str:
    from tests.conftest import shown

    app.run()
    app.switch_page("pages/papers.py")
    app.query_params["ask"] = query
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return " ".join(shown(i.value) for i in app.info)


def test_the_page_says_why_when_neither_encoder_is_there(app, monkeypatch):
    monkeypatch.setattr(query_encoder, "runtime_available", lambda: False)
    monkeypatch.setattr(query_encoder, "model_available", lambda: False)
    notices = _ask(app, "spiking neural networks")
    assert "Keyword (TF-IDF) ranking, not semantic search" in notices
    assert "onnxruntime and tokenizers are not installed here" in notices


def test_the_page_uses_the_model_when_the_export_is_missing(app, monkeypatch):
    monkeypatch.setattr(query_encoder, "runtime_available", lambda: False)
    assert "Keyword (TF-IDF)" not in _ask(app, "spiking neural networks")


def test_a_query_through_the_viewer_never_imports_torch(seed_cache):
    """The viewer's own path (the papers page with ?ask=, in a fresh interpreter) embeds the
    query with the ONNX export: torch is never imported, and the ranking is semantic."""
    script = textwrap.dedent(
        f"""
        import os, sys
        os.environ["EXPLORER_CACHE_DIR"] = {str(seed_cache)!r}
        os.chdir({str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file("app.py", default_timeout=60).run()
        at.switch_page("pages/papers.py")
        at.query_params["ask"] = "spiking neural networks"
        at.run()
        assert not at.exception, at.exception
        assert not [i for i in at.info if "TF-IDF" in i.value], [i.value for i in at.info]
        heavy = {{"torch", "sentence_transformers", "transformers"}}
        print("HEAVY=" + ",".join(sorted({{m.split(".")[0] for m in sys.modules}} & heavy)))
        print("ONNX=" + str("onnxruntime" in sys.modules))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HEAVY=\n" in out.stdout and "ONNX=True" in out.stdout, out.stdout


def test_an_up_to_date_build_restores_a_removed_export(seed_cache, seed_run, tmp_path):
    from explorer.build.pipeline import build
    from tests.conftest import SEED_DIR, build_config

    shutil.copytree(seed_cache / "seed", tmp_path / "seed")  # the run, not its export
    config = build_config("seed", [SEED_DIR])
    result = build(config, cache_dir=tmp_path, progress=False, log=lambda m: None)
    assert result.reused and result.run.run_id == seed_run.run_id
    ref = artifacts.encoder_ref(tmp_path, result.run.manifest)
    assert artifacts.read_encoder_facts(ref)["weights"] in ref.folder.name  # as recorded


def test_publish_refuses_a_damaged_export(seed_cache, tmp_path):
    from explorer.hosting.publish import publish

    shutil.copytree(seed_cache / "seed", tmp_path / "cache" / "seed")
    shutil.copytree(seed_cache / "models", tmp_path / "cache" / "models")
    (graph,) = (tmp_path / "cache" / "models" / "onnx").glob("*/model.onnx")
    graph.write_bytes(graph.read_bytes() + b"\0")
    with pytest.raises(ArtifactError, match="model.onnx: changed since it was built"):
        publish(tmp_path / "cache", "seed", tmp_path / "site")
    assert not (tmp_path / "site").exists()  # nothing half-written: not even the folder


def test_a_build_with_every_vector_cached_still_exports_before_the_fit(seed_cache, tmp_path):
    """The export comes after the embedding whatever was embedded: a new corpus whose
    vectors are all cached, with no export in the cache, exports it (and says so) before
    the neighbours and the fit, and its manifest names it."""
    from explorer.build.pipeline import build
    from tests.conftest import SEED_DIR, build_config

    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    logs: list[str] = []
    result = build(build_config("again", [SEED_DIR]), cache_dir=tmp_path, progress=False,
                   log=logs.append)  # fmt: skip
    assert result.run.manifest.counts.embedded_new == 0
    exported = next(i for i, m in enumerate(logs) if m.startswith("Exporting the query encoder"))
    assert exported < next(i for i, m in enumerate(logs) if m.startswith("Finding nearest"))
    assert result.run.manifest.query_encoder["format"] == "onnx"
    ref = artifacts.encoder_ref(tmp_path, result.run.manifest)
    assert artifacts.read_encoder_facts(ref)["pooling"] == "mean"
