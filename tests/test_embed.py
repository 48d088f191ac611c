import json
import threading

import numpy as np
import pytest

from explorer.build import embed, models
from explorer.build.embed import _MEMORY, EmbeddingCache, embed_texts, text_key
from explorer.build.models import Embedder, model_id
from explorer.names import MANIFEST


class CountingModel:
    """Stands in for a SentenceTransformer: deterministic vectors, counts what it embeds.
    A text's tokens are its characters, as far as `encode_chunk` asks."""

    max_seq_length = 64

    def __init__(self):
        self.seen: list[str] = []

    def preprocess(self, texts):
        width = max(len(t) for t in texts)
        return {"attention_mask": np.array([[1] * len(t) + [0] * (width - len(t)) for t in texts])}

    def encode(self, texts, **kwargs):
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_cache_embeds_only_unseen_texts(tmp_path):
    model = CountingModel()
    first, new = embed_texts(
        ["aa", "b", "aa"], Embedder.of(cache_root=tmp_path), model=model, progress=False
    )
    assert new == 2 and sorted(model.seen) == ["aa", "b"]
    assert first.shape == (3, 3) and np.array_equal(first[0], first[2])
    again, new = embed_texts(
        ["b", "ccc", "aa"], Embedder.of(cache_root=tmp_path), model=model, progress=False
    )
    assert new == 1 and model.seen[-1] == "ccc" and len(model.seen) == 3
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])


def test_cache_is_per_model_and_survives_a_torn_shard(tmp_path):
    model = CountingModel()
    embed_texts(["x"], Embedder.of(cache_root=tmp_path), model=model, progress=False)
    cache = EmbeddingCache(
        tmp_path, "all-MiniLM-L6-v2", weights=models.weights_fingerprint(models.DEFAULT_MODEL)
    )
    (cache.directory / "shard-0-torn.npz").write_bytes(b"PK\x03\x04 truncated")
    assert len(cache.load()) == 1
    other = Embedder.of("other/model", cache_root=tmp_path, weights="0123")
    _, new = embed_texts(["x"], other, model=model, progress=False)
    assert new == 1
    assert model_id("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"


def test_shards_written_by_another_process_are_picked_up_and_compacted(tmp_path):
    model = CountingModel()
    embed_texts(["a"], Embedder.of(cache_root=tmp_path), model=model, progress=False)
    cache = EmbeddingCache(
        tmp_path, "all-MiniLM-L6-v2", weights=models.weights_fingerprint(models.DEFAULT_MODEL)
    )
    # Another build (another process) adds a shard behind this process's in-memory copy.
    other = np.array([text_key("zz")], dtype="S64")
    np.savez(cache.directory / "shard-9-other.npz", keys=other, vectors=np.ones((1, 3)))
    _, new = embed_texts(["a", "zz"], Embedder.of(cache_root=tmp_path), model=model, progress=False)
    assert new == 0 and model.seen == ["a"]
    for i in range(5):
        embed_texts([f"t{i}"], Embedder.of(cache_root=tmp_path), model=model, progress=False)
    before = {k: v.copy() for k, v in cache.load().items()}
    cache.compact(max_shards=3)
    assert len(list(cache.directory.glob("shard-*.npz"))) == 1
    _MEMORY.clear()  # a fresh process reads the merged shard from disk
    after = EmbeddingCache(
        tmp_path, "all-MiniLM-L6-v2", weights=models.weights_fingerprint(models.DEFAULT_MODEL)
    ).load()
    assert after.keys() == before.keys()
    assert all(np.array_equal(after[k], before[k]) for k in before)


def test_bfloat16_vectors_match_float32_and_are_cached_apart(tmp_path):
    """The real packaged model: bfloat16 stays within 1e-3 cosine, in its own cache folder."""
    from explorer.build.models import load_model

    model = load_model()
    texts = [
        "We study regret bounds for contextual bandits with adversarial contexts.",
        "A diffusion model for protein structure generation conditioned on sequence.",
        "Graph neural networks fail to count substructures; we propose a fix.",
    ]
    exact, new = embed_texts(texts, Embedder.of(cache_root=tmp_path), model=model, progress=False)
    assert new == 3
    fast, new = embed_texts(
        texts, Embedder.of(cache_root=tmp_path, precision="bfloat16"), model=model, progress=False
    )
    assert new == 3  # float32 vectors are never handed out as bfloat16 ones, or back
    assert fast.dtype == np.float32
    cosine = (exact * fast).sum(1) / np.linalg.norm(exact, axis=1) / np.linalg.norm(fast, axis=1)
    assert cosine.min() > 0.999
    folders = sorted(p.name for p in (tmp_path / "embeddings").iterdir())
    weights = models.weights_fingerprint(models.DEFAULT_MODEL)
    tag = (
        f"@bfloat16-amx{embed.AMX_BATCHING}" if models.bfloat16_kernels() == "amx" else "@bfloat16"
    )
    assert folders == [
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}.v{embed.CACHE_VERSION}",
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}{tag}.v{embed.CACHE_VERSION}",
    ]
    _, new = embed_texts(
        texts, Embedder.of(cache_root=tmp_path, precision="bfloat16"), model=model, progress=False
    )
    assert new == 0


def test_bfloat16_vectors_from_amx_are_cached_apart_unless_onednn_is_capped(monkeypatch, tmp_path):
    """AMX rounds bfloat16 otherwise than AVX512-BF16: one folder never mixes the two."""
    monkeypatch.setattr(models, "cpu_flags", lambda: ["amx_bf16", "amx_tile", "avx512_bf16"])
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    folder = lambda: EmbeddingCache(tmp_path, "m", weights="w", precision="bfloat16").directory.name  # noqa: E731
    for cap, kernels in ((None, "amx"), ("ALL", "amx"), ("AVX512_CORE_AMX", "amx"),
                         ("avx512_core_bf16", "avx512"), ("AVX2", "avx512")):  # fmt: skip
        if cap is None:
            monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
        else:
            monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
        assert models.bfloat16_kernels() == kernels, cap
        amx = f"@bfloat16-amx{embed.AMX_BATCHING}.v2"
        assert folder().endswith(amx if kernels == "amx" else "@bfloat16.v2")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX512_CORE_BF16")  # oneDNN's older name
    assert models.bfloat16_kernels() == "avx512"
    monkeypatch.delenv("DNNL_MAX_CPU_ISA")
    monkeypatch.setattr(models, "cpu_flags", lambda: ["avx512_bf16"])
    assert models.bfloat16_kernels() == "avx512" and folder().endswith("@bfloat16.v2")
    fp32 = EmbeddingCache(tmp_path, "m", weights="w", precision="float32").directory.name
    assert "@" not in fp32


class RecordingModel(CountingModel):
    """A CountingModel as both torch paths call it, recording each batch's (rows, width)
    and the threads that tokenized: `encode` for float32; for bfloat16, `preprocess` of one
    batch, then a forward pass."""

    def __init__(self):
        super().__init__()
        self.batches: list[tuple[int, int]] = []
        self.tokenized_on: set[int] = set()

    def eval(self):
        return self

    def encode(self, texts, batch_size, processing_kwargs, **kwargs):
        width = processing_kwargs["text"]["max_length"]
        self.batches += [(len(texts[i : i + batch_size]), width) for i in range(0, len(texts), batch_size)]  # fmt: skip
        return super().encode(texts)

    def preprocess(self, texts, processing_kwargs=None):
        if processing_kwargs is None:  # counting tokens
            return super().preprocess(texts)
        self.tokenized_on.add(threading.get_ident())
        self.batches.append((len(texts), processing_kwargs["text"]["max_length"]))
        return {"texts": texts}

    def __call__(self, features):
        import torch

        return {"sentence_embedding": torch.from_numpy(super().encode(features["texts"]))}


def test_every_bfloat16_batch_of_one_width_has_the_same_number_of_rows():
    """AMX rounds a bfloat16 product by its row count: a text alone, or in a short last
    batch, would get other bits than among a full batch. The count is the width's alone
    (short texts get more rows). Fill texts are never returned, and only the calling
    thread tokenizes (the model's one tokenizer is not thread-safe)."""
    texts = ["a" * n for n in (3, 5, 20, 20, 40)] + ["b" * 30] * 17 + ["c"] + ["d" * 90] * 9
    for precision, full in (("bfloat16", True), ("float32", False)):
        model = RecordingModel()
        vectors = embed.encode_chunk(model, texts, precision)
        assert np.array_equal(vectors, CountingModel().encode(texts))
        fixed = all(rows == embed.bfloat16_rows(width) for rows, width in model.batches)
        assert fixed == full, (precision, model.batches)
        assert model.tokenized_on <= {threading.get_ident()}
    assert embed.bfloat16_rows(16) > embed.bfloat16_rows(64) > embed.BFLOAT16_ROWS
    assert embed.bfloat16_rows(256) == embed.BFLOAT16_ROWS  # abstracts: as before


def test_the_probe_s_one_shape_pads_every_text_to_at_least_its_own_width():
    """encoder_choice times every encoder on one shape; a longer text is never cut."""
    texts = ["a" * 3, "b" * 20, "c" * 40]  # own widths 16, 32, 48
    for precision in ("float32", "bfloat16"):
        model = RecordingModel()
        vectors = embed.encode_chunk(model, texts, precision, width=32)
        assert {width for _, width in model.batches} == {48}, precision
        assert np.array_equal(vectors, CountingModel().encode(texts))
        model = RecordingModel()
        embed.encode_chunk(model, texts[:2], precision, width=32)
        assert {width for _, width in model.batches} == {32}, precision


def test_auto_precision_follows_the_cpu(monkeypatch):
    monkeypatch.setattr(models, "native_bfloat16", lambda: True)
    assert models.resolve_precision("auto") == "bfloat16"
    monkeypatch.setattr(models, "native_bfloat16", lambda: False)
    assert models.resolve_precision("auto") == "float32"
    assert models.resolve_precision("bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="float16"):
        models.resolve_precision("float16")


def test_auto_keeps_the_corpus_precision_so_a_refit_reuses_its_embeddings(tmp_path, monkeypatch):
    """A new corpus asks encoder_choice.decide (a measurement); a corpus with a run keeps
    its precision without measuring; a forced precision is taken as given."""
    from explorer.build import encoder_choice
    from explorer.build.config import BuildConfig
    from explorer.build.corpus import Corpus
    from explorer.build.plan import _precision

    asked = []

    def decide(embedder, texts, *, engine, log):
        asked.append(engine)
        return encoder_choice.Choice("onnx", {"float32": 10.0, "onnx": 13.0}, "measured")

    monkeypatch.setattr(encoder_choice, "decide", decide)
    embedder = Embedder("m", "w", "float32", tmp_path)
    corpus = Corpus(papers=[], skipped=[], merged=[])
    config = BuildConfig(name="c", inputs=("x",))
    precision, choice = _precision(config, embedder, corpus, print)
    assert (precision, choice.how, asked) == ("onnx", "measured", ["local"])  # a new corpus
    run = tmp_path / "c" / "r1"
    run.mkdir(parents=True)
    (run / MANIFEST).write_text(json.dumps({"config": {"seed": 42}}))
    precision, choice = _precision(config, embedder, corpus, print)
    assert precision == "float32" and choice.how == "kept from run r1"  # made before precisions
    (run / MANIFEST).write_text(json.dumps({"config": {"embedding_precision": "bfloat16"}}))
    assert _precision(config, embedder, corpus, print)[0] == "bfloat16"
    explicit = BuildConfig(name="c", inputs=("x",), embedding_precision="float32")
    assert _precision(explicit, embedder, corpus, print) == ("float32", None)
    assert asked == ["local"]  # measured once, for the new corpus only


def test_changed_weights_under_the_same_name_never_reuse_old_vectors(tmp_path):
    model = CountingModel()
    embed_texts(
        ["x", "y"], Embedder.of(cache_root=tmp_path, weights="aaaa"), model=model, progress=False
    )
    _, new = embed_texts(
        ["x", "y"], Embedder.of(cache_root=tmp_path, weights="bbbb"), model=model, progress=False
    )
    assert new == 2 and model.seen == ["x", "y", "x", "y"]
    _, new = embed_texts(
        ["x"], Embedder.of(cache_root=tmp_path, weights="aaaa"), model=model, progress=False
    )
    assert new == 0


def test_weights_fingerprint_hashes_every_model_file(tmp_path):
    from explorer.errors import ExplorerError

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights v1")
    first = models.weights_fingerprint(str(folder))
    assert models.weights_fingerprint(str(folder)) == first  # cached, and stable
    (folder / "config.json").write_text('{"max_seq_length": 128}')  # settings count too
    second = models.weights_fingerprint(str(folder))
    (folder / "model.safetensors").write_bytes(b"weights v2")
    assert len({first, second, models.weights_fingerprint(str(folder))}) == 3
    (folder / "model.safetensors").unlink()
    with pytest.raises(ExplorerError, match="no weights file"):
        models.weights_fingerprint(str(folder))
    packaged = models.weights_fingerprint(models.DEFAULT_MODEL)
    assert len(packaged) == 16 and packaged == models.weights_fingerprint("all-MiniLM-L6-v2")


def test_a_model_that_is_not_here_is_one_line(tmp_path):
    from explorer.errors import ExplorerError

    with pytest.raises(ExplorerError, match="is not on this machine"):
        models.weights_fingerprint("nobody/no-such-model")


def test_each_text_is_padded_to_its_own_length_bucket():
    model = CountingModel()
    texts = ["a", "b" * 16, "c" * 17, "d" * 60, "e" * 99]
    widths = embed.bucket_widths(model, texts)
    assert widths == [16, 16, 32, 64, 64]  # multiples of 16, at most the model's maximum
    assert embed.bucket_widths(model, texts[:2]) == widths[:2]  # its own, whatever its company


VARIED = [
    "Regret bounds for contextual bandits.",
    "We study regret bounds for contextual bandits with adversarial contexts and show that "
    "a simple algorithm matches the lower bound up to logarithmic factors.",
    "A diffusion model for protein structure generation conditioned on sequence, trained on "
    "a curated set of structures; it improves designability and novelty over prior work. " * 3,
    "Graph neural networks fail to count substructures; we propose a fix.",
    "Sparse attention. " * 90,  # past the model's maximum length: truncated
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    """A cache holding the model's ONNX export (made once for this module)."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    embed.load_encoder(Embedder.of(cache_root=cache, precision="onnx"), progress=False)
    return cache


def _encoder(precision: str, cache, threads: int | None = None):
    """The encoder of `precision`; for onnx at `threads` session threads (default: all)."""
    if precision != "onnx":
        return models.load_model(progress=False)
    from explorer.build import encoder_export
    from explorer.onnx_encoder import OnnxEncoder

    folder, facts = encoder_export.ensure(Embedder.of(cache_root=cache, precision="onnx"))
    return OnnxEncoder(folder, facts, threads=threads or 2)


@pytest.mark.parametrize("precision", ["float32", "bfloat16", "onnx"])
def test_a_vector_does_not_depend_on_its_batch_or_the_thread_count(precision, onnx_cache):
    """The same bits alone, in any company, in any order and at 1, 2 or 4 threads
    (onnxruntime: 1 or 2): what a cache held before can no longer change a vector (bfloat16
    is emulated where the CPU lacks it: slower, never skipped). Every encoder `auto` can
    choose is held to it."""
    import torch

    from explorer.build.embed import encode_chunk

    model = _encoder(precision, onnx_cache)
    together = encode_chunk(model, VARIED, precision)
    assert together.dtype == np.float32 and together.shape == (len(VARIED), 384)
    alone = np.stack([encode_chunk(model, [t], precision)[0] for t in VARIED])
    assert np.array_equal(alone, together)
    order = [3, 0, 4, 2, 1]
    shuffled = encode_chunk(model, [VARIED[i] for i in order] + ["Another text."] * 20, precision)
    assert np.array_equal(shuffled[: len(order)], together[order])
    if precision == "onnx":  # its session's thread count is fixed when it is made
        for count in (1, 2):
            alone = _encoder(precision, onnx_cache, threads=count)
            assert np.array_equal(encode_chunk(alone, VARIED, precision), together), count
        return
    threads = torch.get_num_threads()
    try:
        for count in (1, 2, 4):  # 4 on two cores too: what a larger host would split
            torch.set_num_threads(count)
            assert np.array_equal(encode_chunk(model, VARIED, precision), together), count
    finally:
        torch.set_num_threads(threads)


def test_onnx_vectors_match_torch_float32_on_the_seed_corpus(onnx_cache):
    """Every seed abstract: onnxruntime's vector within 1e-4 cosine of torch float32's."""
    from explorer.build.embed import encode_chunk
    from explorer.build.sources import ReadOptions, read_inputs
    from tests.conftest import SEED_DIR

    texts = [p.text for p in read_inputs((str(SEED_DIR),), ReadOptions()).papers]
    ours = encode_chunk(_encoder("onnx", onnx_cache), texts, "onnx")
    theirs = encode_chunk(models.load_model(progress=False), texts, "float32")
    cosine = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert len(texts) > 30 and cosine.min() >= 0.9999


def test_onnx_vectors_have_their_own_cache_folder(onnx_cache):
    """Keyed by the engine and onnxruntime's version; float32's folder name is unchanged."""
    from importlib import metadata

    weights = models.weights_fingerprint(models.DEFAULT_MODEL)
    onnx = EmbeddingCache(onnx_cache, models.DEFAULT_MODEL, weights=weights, precision="onnx")
    plain = EmbeddingCache(onnx_cache, models.DEFAULT_MODEL, weights=weights)
    assert onnx.directory.name == (
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}"
        f"@onnxruntime-{metadata.version('onnxruntime')}.v{embed.CACHE_VERSION}"
    )
    assert plain.directory.name == (
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}.v{embed.CACHE_VERSION}"
    )
