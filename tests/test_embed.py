import json

import numpy as np
import pytest

from explorer.build import embed
from explorer.build.embed import (
    _MEMORY,
    Embedder,
    EmbeddingCache,
    embed_texts,
    model_id,
    text_key,
)
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
        tmp_path, "all-MiniLM-L6-v2", weights=embed.weights_fingerprint(embed.DEFAULT_MODEL)
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
        tmp_path, "all-MiniLM-L6-v2", weights=embed.weights_fingerprint(embed.DEFAULT_MODEL)
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
        tmp_path, "all-MiniLM-L6-v2", weights=embed.weights_fingerprint(embed.DEFAULT_MODEL)
    ).load()
    assert after.keys() == before.keys()
    assert all(np.array_equal(after[k], before[k]) for k in before)


def test_bfloat16_vectors_match_float32_and_are_cached_apart(tmp_path):
    """The real packaged model: bfloat16 stays within 1e-3 cosine, in its own cache folder."""
    from explorer.build.embed import load_model

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
    weights = embed.weights_fingerprint(embed.DEFAULT_MODEL)
    assert folders == [
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}.v{embed.CACHE_VERSION}",
        f"sentence-transformers_all-MiniLM-L6-v2-{weights}@bfloat16.v{embed.CACHE_VERSION}",
    ]
    _, new = embed_texts(
        texts, Embedder.of(cache_root=tmp_path, precision="bfloat16"), model=model, progress=False
    )
    assert new == 0


def test_auto_precision_follows_the_cpu(monkeypatch):
    monkeypatch.setattr(embed, "native_bfloat16", lambda: True)
    assert embed.resolve_precision("auto") == "bfloat16"
    monkeypatch.setattr(embed, "native_bfloat16", lambda: False)
    assert embed.resolve_precision("auto") == "float32"
    assert embed.resolve_precision("bfloat16") == "bfloat16"
    with pytest.raises(ValueError, match="float16"):
        embed.resolve_precision("float16")


def test_auto_keeps_the_corpus_precision_so_a_refit_reuses_its_embeddings(tmp_path, monkeypatch):
    from explorer.build.config import BuildConfig
    from explorer.build.plan import _precision

    monkeypatch.setattr(embed, "native_bfloat16", lambda: True)
    config = BuildConfig(name="c", inputs=("x",))
    assert _precision(config, tmp_path) == "bfloat16"  # a new corpus: the CPU decides
    run = tmp_path / "c" / "r1"
    run.mkdir(parents=True)
    (run / MANIFEST).write_text(json.dumps({"config": {"seed": 42}}))
    assert _precision(config, tmp_path) == "float32"  # built before precisions existed
    (run / MANIFEST).write_text(json.dumps({"config": {"embedding_precision": "bfloat16"}}))
    monkeypatch.setattr(embed, "native_bfloat16", lambda: False)
    assert _precision(config, tmp_path) == "bfloat16"
    explicit = BuildConfig(name="c", inputs=("x",), embedding_precision="float32")
    assert _precision(explicit, tmp_path) == "float32"


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
    first = embed.weights_fingerprint(str(folder))
    assert embed.weights_fingerprint(str(folder)) == first  # cached, and stable
    (folder / "config.json").write_text('{"max_seq_length": 128}')  # settings count too
    second = embed.weights_fingerprint(str(folder))
    (folder / "model.safetensors").write_bytes(b"weights v2")
    assert len({first, second, embed.weights_fingerprint(str(folder))}) == 3
    (folder / "model.safetensors").unlink()
    with pytest.raises(ExplorerError, match="no weights file"):
        embed.weights_fingerprint(str(folder))
    packaged = embed.weights_fingerprint(embed.DEFAULT_MODEL)
    assert len(packaged) == 16 and packaged == embed.weights_fingerprint("all-MiniLM-L6-v2")


def test_a_model_that_is_not_here_is_one_line(tmp_path):
    from explorer.errors import ExplorerError

    with pytest.raises(ExplorerError, match="is not on this machine"):
        embed.weights_fingerprint("nobody/no-such-model")


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


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_a_vector_does_not_depend_on_its_batch_or_the_thread_count(precision):
    """The same bits alone, in any company, in any order and at 1 or 2 threads: what a
    cache held before can no longer change a vector (bfloat16 is emulated where the CPU
    lacks it: slower, never skipped)."""
    import torch

    from explorer.build.embed import encode_chunk, load_model

    model = load_model(progress=False)
    together = encode_chunk(model, VARIED, precision)
    assert together.dtype == np.float32 and together.shape == (len(VARIED), 384)
    alone = np.stack([encode_chunk(model, [t], precision)[0] for t in VARIED])
    assert np.array_equal(alone, together)
    order = [3, 0, 4, 2, 1]
    shuffled = encode_chunk(model, [VARIED[i] for i in order] + ["Another text."] * 20, precision)
    assert np.array_equal(shuffled[: len(order)], together[order])
    threads = torch.get_num_threads()
    try:
        for count in (1, 2):
            torch.set_num_threads(count)
            assert np.array_equal(encode_chunk(model, VARIED, precision), together), count
    finally:
        torch.set_num_threads(threads)
