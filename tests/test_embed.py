import numpy as np

from explorer.embed import EmbeddingCache, embed_texts, model_id


class CountingModel:
    """Stands in for a SentenceTransformer: deterministic vectors, counts what it embeds."""

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts, **kwargs):
        self.seen.extend(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_cache_embeds_only_unseen_texts(tmp_path):
    model = CountingModel()
    first, new = embed_texts(["aa", "b", "aa"], cache_root=tmp_path, model=model, progress=False)
    assert new == 2 and sorted(model.seen) == ["aa", "b"]
    assert first.shape == (3, 3) and np.array_equal(first[0], first[2])
    again, new = embed_texts(["b", "ccc", "aa"], cache_root=tmp_path, model=model, progress=False)
    assert new == 1 and model.seen[-1] == "ccc" and len(model.seen) == 3
    assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])


def test_cache_is_per_model_and_survives_a_torn_shard(tmp_path):
    model = CountingModel()
    embed_texts(["x"], cache_root=tmp_path, model=model, progress=False)
    cache = EmbeddingCache(tmp_path, "all-MiniLM-L6-v2")
    (cache.directory / "shard-0-torn.npz").write_bytes(b"PK\x03\x04 truncated")
    assert len(cache.load()) == 1
    _, new = embed_texts(
        ["x"], cache_root=tmp_path, model_name="other/model", model=model, progress=False
    )
    assert new == 1
    assert model_id("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
