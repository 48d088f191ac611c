"""Sentence embeddings behind a content-addressed cache: a text is embedded once per model.

Layout: ``<cache>/embeddings/<model-slug>-<weights>[@bfloat16[-amx<n>]|@onnxruntime-<version>]
.v<version>/shard-*.npz``, each shard holding ``keys`` (sha256 of the text, with the cache
version) and ``vectors`` (float32). The key is (model id, weights hash, text hash, precision
or engine, cache version): vectors computed in bfloat16 (on AMX apart, as it rounds
otherwise), or by onnxruntime over the model's ONNX export, live in their own folder, a
changed model under the same name never reuses old ones, and vectors made under an older
batching (an older version) are never read. Shards are written to a temporary name and
renamed, so a killed build keeps every finished chunk and never leaves a torn file.

A text's vector is a function of the text alone (see `encode_chunk`), so a run never
depends on what the cache held before it: the same texts give the same bits cold or warm.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from explorer.artifacts import model_slug
from explorer.atomic_files import atomic_write
from explorer.build.memory import release_freed_memory
from explorer.build.models import (
    ONNX,
    Embedder,
    bfloat16_kernels,
    load_model,
    model_id,
    package_version,
    usable_cores,
)
from explorer.errors import ExplorerError

# 2: every text padded to its own length bucket (vectors no longer depend on the batch).
CACHE_VERSION = 2
# Texts per encode call: small enough that progress and the on-disk cache advance
# every ~20 s on two cores, large enough that batching is unaffected.
CHUNK_SIZE = 256
# Texts per forward pass. On two cores 8-16 are as fast as 32 (the CPU is saturated either
# way) and the activations of the longest abstracts peak lower: 512 longest ICML abstracts
# in bfloat16 peaked at 782 MB with 32, 703-726 MB with 16.
BATCH_SIZE = 16
# Rows of a bfloat16 batch of long texts. bfloat16 runs one batch per thread at once
# (`_bfloat16_batches`), so its batches are smaller: the 512 longest ICML abstracts peaked
# at 875 MB with 8 rows against 981 MB with 16 (float32, one batch of 16 at a time: 841 MB)
# and ran faster (85 against 78 abstracts/s on 2 cores with AMX: less filling).
BFLOAT16_ROWS = 8
# Tokens of a bfloat16 batch of short texts: a batch of width w has
# max(BFLOAT16_ROWS, BFLOAT16_TOKENS // w) rows (`bfloat16_rows`), a count fixed by the
# width, so a vector still depends on its text alone. 8 rows of a 16-token keyword spend
# most of a forward pass on its fixed costs: 1,024 ICML keywords ran at 678/s in batches of
# 8 and 1,592/s in 64 with AMX, 330 and 463/s on AVX512-BF16 (2026-12-06); the longest
# batch holds 8 x 256 tokens either way, so the peak is unchanged.
BFLOAT16_TOKENS = 1024
# AMX rounds a bfloat16 product by its row count, so its vectors are cached by the rule
# that sets the rows: bump when `bfloat16_rows` changes (AVX512-BF16's do not depend on it).
# 2: short texts' batches grew to BFLOAT16_TOKENS.
AMX_BATCHING = 2
# Every text is padded to the next multiple of this many tokens (or the model's maximum), a
# length that depends on the text alone. Padding to the longest text of the batch, as
# sentence-transformers does, changes the shapes of the matrix products a text goes
# through, and so the last bits of its vector, with whichever texts share its batch: which
# depends on what the cache already held. With the width fixed by the text itself, the
# rows of a batch are computed independently, so a vector is bit-identical in any batch,
# at any batch size and thread count (measured in float32, onnx and bfloat16 off AMX; on
# AMX bfloat16 also needs each batch full and on one thread, `_bfloat16_batches`;
# tests/test_embed.py checks it on the machine that runs the tests). Texts are embedded
# longest first, so a bucket's batches are mostly full; 16 keeps the padding to ~4% of a
# typical abstract's ~200 tokens. Measured against batch padding on ICML abstracts: 15-18%
# faster in both precisions (bench row 2b; fewer distinct shapes, and the characters
# sentence-transformers sorts by are a poor guide to tokens).
PAD_MULTIPLE = 16
# Shards beyond this count are merged into one, so a cache that has seen many small
# additions (keyword candidates, added papers) still opens with a few file reads.
MAX_SHARDS = 64
# Vectors already read in this process, per cache folder, with the shard files they came
# from: BERTopic asks for keyword embeddings once per topic, and re-reading every shard
# for each request cost 58 s of a 78 s fit on ICML 2013-2019.
_MEMORY: dict[Path, tuple[dict[str, np.ndarray], set[str]]] = {}


def text_key(text: str) -> str:
    """Content address of one text (the model is the cache folder)."""
    return hashlib.sha256(f"v{CACHE_VERSION}\x1f{text}".encode()).hexdigest()


class EmbeddingCache:
    """Append-only shards of (key, vector) for one model."""

    def __init__(self, root: Path, model: str, *, weights: str, precision: str = "float32") -> None:
        self.model = model_id(model)
        slug = model_slug(self.model, weights)
        if precision == ONNX:  # its own engine: keyed by the engine's version too
            slug = f"{slug}@onnxruntime-{package_version('onnxruntime')}"
        elif precision == "bfloat16" and bfloat16_kernels() == "amx":  # rounds otherwise
            slug = f"{slug}@bfloat16-amx{AMX_BATCHING}"
        elif precision != "float32":
            slug = f"{slug}@{precision}"
        self.directory = Path(root) / "embeddings" / f"{slug}.v{CACHE_VERSION}"

    @classmethod
    def of(cls, embedder: Embedder) -> EmbeddingCache:
        """The store of `embedder`'s model, weights and precision under its cache root."""
        return cls(
            embedder.cache_root,
            embedder.model_name,
            weights=embedder.weights,
            precision=embedder.precision,
        )

    def load(self) -> dict[str, np.ndarray]:
        """Every cached vector, by key; torn or foreign files are ignored.

        Returns this process's shared in-memory copy; shards written since the last
        call (by us or another build) are read, nothing else is.
        """
        vectors, seen = _MEMORY.setdefault(self.directory.resolve(), ({}, set()))
        if not self.directory.is_dir():
            return vectors
        for shard in sorted(self.directory.glob("shard-*.npz")):
            if shard.name in seen:
                continue
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, values = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                continue  # a shard torn by a crash: its texts are simply embedded again
            vectors.update(zip(keys.astype(str), values, strict=True))
            seen.add(shard.name)
        return vectors

    def compact(self, max_shards: int = MAX_SHARDS) -> None:
        """Merge the shards into one when there are more than `max_shards`.

        The merged shard is in place before any old one is removed, so a concurrent
        reader sees every vector at least once (a vanished shard is skipped, and its
        texts would at worst be embedded again).
        """
        shards = sorted(self.directory.glob("shard-*.npz"))
        if len(shards) <= max_shards:
            return
        vectors = self.load()
        keys = list(vectors)
        self.save(keys, np.stack([vectors[k] for k in keys]))
        _, seen = _MEMORY[self.directory.resolve()]
        for shard in shards:
            shard.unlink(missing_ok=True)
            seen.discard(shard.name)

    def save(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Write one shard atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        meta = self.directory / "model.json"
        if not meta.exists():
            meta.write_text(json.dumps({"model": self.model, "cache_version": CACHE_VERSION}))
        name = hashlib.sha256("".join(keys).encode()).hexdigest()[:16]
        final = f"shard-{time.time_ns()}-{name}.npz"
        atomic_write(
            self.directory / final,
            lambda handle: np.savez(
                handle, keys=np.array(keys, dtype="S64"), vectors=vectors.astype(np.float32)
            ),
        )
        _MEMORY.setdefault(self.directory.resolve(), ({}, set()))[1].add(final)


def embed_texts(
    texts: Sequence[str], embedder: Embedder, *, progress: bool = True, model=None
) -> tuple[np.ndarray, int]:
    """Vectors for `texts` (row i for text i) and how many had to be computed.

    Missing texts are embedded longest first in chunks, each chunk saved as soon as it is
    done; the order fills each length bucket's batches (speed) and changes no vector.
    `model`: the loaded model to use (default: `embedder`'s, loaded when a text is missing).
    """
    cache = EmbeddingCache.of(embedder)
    known = cache.load()
    keys = [text_key(t) for t in texts]
    missing: dict[str, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in known and key not in missing:
            missing[key] = text
    if missing:
        from tqdm.auto import tqdm

        model = model or load_encoder(embedder, progress=progress)
        order = sorted(missing, key=lambda k: -len(missing[k]))
        with tqdm(total=len(order), desc="Embedding", unit="abstract", disable=not progress) as bar:
            for start in range(0, len(order), CHUNK_SIZE):
                chunk = order[start : start + CHUNK_SIZE]
                vectors = encode_chunk(model, [missing[k] for k in chunk], embedder.precision)
                known.update(zip(chunk, vectors, strict=True))
                cache.save(chunk, vectors)
                bar.update(len(chunk))
        cache.compact()
    if not keys:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.stack([known[k] for k in keys]).astype(np.float32), len(missing)


def load_encoder(embedder: Embedder, *, progress: bool = True):
    """What computes `embedder`'s vectors: the sentence-transformers model (float32 and
    bfloat16), or for onnx the model's ONNX export in onnxruntime on every core (exported
    now when the cache lacks it; one line when this model cannot be exported)."""
    if embedder.precision != ONNX:
        return load_model(embedder.model_name, progress=progress)
    from explorer.build import encoder_export
    from explorer.onnx_encoder import OnnxEncoder

    try:
        folder, facts = encoder_export.ensure(embedder)
    except encoder_export.ExportSkipped as exc:
        message = f"--embedding-precision onnx: no ONNX export of this model ({exc})"
        raise ExplorerError(message) from None
    return OnnxEncoder(folder, facts, threads=usable_cores())


def encode_chunk(model, texts: list[str], precision: str, *, width: int | None = None):
    """One chunk's float32 vectors, as both engines encode it. Each text is padded to its
    own length bucket (`PAD_MULTIPLE`), so its vector does not depend on the other texts
    of the chunk, on how the chunk was cut, or on what the cache held before. `model`: a
    SentenceTransformer, or an OnnxEncoder for onnx (`load_encoder`). `width`: every text
    padded to this many tokens instead (or to the chunk's longest, if longer: no text is
    cut), one shape for every encoder, as encoder_choice times them (not a text's own vector)."""
    widths = np.array(bucket_widths(model, texts), dtype=np.int64)
    if width is not None:
        widths = np.full_like(widths, max(width, *widths.tolist(), 1))
    buckets = [np.flatnonzero(widths == w) for w in sorted(set(widths.tolist()), reverse=True)]
    if precision == "bfloat16":
        encoded = _bfloat16_batches(model, texts, widths, buckets)
    else:
        encoded = [
            (rows, _encode_bucket(model, [texts[i] for i in rows], int(widths[rows[0]]), precision))
            for rows in buckets
        ]
    release_freed_memory()  # activations of this chunk: not kept for the next
    if not encoded:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = np.empty((len(texts), encoded[0][1].shape[1]), dtype=np.float32)
    for rows, part in encoded:
        vectors[rows] = part
    return vectors


def _encode_bucket(model, texts: list[str], width: int, precision: str) -> np.ndarray:
    """Texts of one bucket, every one padded to `width`, BATCH_SIZE at a time."""
    if precision == ONNX:
        batches = _batches(texts, BATCH_SIZE)
        return np.concatenate([model.encode(batch, width=width) for batch in batches])
    return _encode_torch(model, texts, width)


def _batches(items, size: int):
    """`items` cut into batches of `size` (the last may be shorter)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def _bfloat16_batches(model, texts, widths: np.ndarray, buckets: list[np.ndarray]):
    """bfloat16, one batch per thread, each batch's products on that thread alone. oneDNN's
    AMX kernels round a bfloat16 product by how many rows it has and how many threads share
    it (a text alone, or at 1 and 4 threads, got other bits than among 16 at 2), so every
    batch of one width has the same rows (`bfloat16_rows`, `_full_batch`) and one thread: a
    vector is then the same at any thread count, by construction, and as fast as threads
    sharing each product (AMX 110 against 100 abstracts/s, AVX512-BF16 30 against 31, on 2
    cores). As many batches run at once as torch has threads (the cores unless the caller
    set another count, as a Ray actor does); the count is restored after. The batches are
    tokenized here, one after another: the model's one tokenizer is not safe to share
    between threads."""
    import torch

    batches = [
        batch for rows in buckets for batch in _batches(rows, bfloat16_rows(int(widths[rows[0]])))
    ]
    model.eval()
    features = [
        _full_batch(model, [texts[i] for i in rows], int(widths[rows[0]])) for rows in batches
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        vectors = list(pool.map(lambda batch: _forward_bfloat16(model, batch), features))
    finally:
        pool.shutdown(cancel_futures=True)  # after a failure, the batches not yet begun
        torch.set_num_threads(threads)
    return [(rows, part[: len(rows)]) for rows, part in zip(batches, vectors, strict=True)]


def bfloat16_rows(width: int) -> int:
    """Rows of every bfloat16 batch of `width` tokens: BFLOAT16_ROWS, more for short texts
    (BFLOAT16_TOKENS in all), a function of the width alone."""
    return max(BFLOAT16_ROWS, BFLOAT16_TOKENS // max(width, 1))


def _full_batch(model, texts: list[str], width: int) -> dict:
    """Texts tokenized as one batch of exactly `bfloat16_rows(width)` rows of `width`
    tokens, the last text repeated to fill it (its copies' vectors are dropped). The fill
    costs at most one batch per bucket of a chunk, and a chunk spans few buckets, as texts
    arrive longest first."""
    filled = texts + texts[-1:] * (bfloat16_rows(width) - len(texts))
    return model.preprocess(filled, processing_kwargs=_padded_to(width))


def _forward_bfloat16(model, features: dict) -> np.ndarray:
    """One tokenized batch through the model, its matrix products in bfloat16."""
    import torch

    with torch.inference_mode(), _autocast("bfloat16"):  # autocast is per thread
        return model(features)["sentence_embedding"].float().numpy()


def _padded_to(width: int) -> dict:
    """sentence-transformers' processing options padding every text to `width` tokens."""
    return {"text": {"padding": "max_length", "max_length": width}}


def _encode_torch(model, texts: list[str], width: int) -> np.ndarray:
    """A SentenceTransformer's vectors of `texts`, each padded to `width` tokens."""
    return model.encode(
        texts,
        batch_size=BATCH_SIZE,
        show_progress_bar=False,
        convert_to_numpy=True,
        processing_kwargs=_padded_to(width),
    )


def bucket_widths(model, texts: Sequence[str]) -> list[int]:
    """The padded width of each text: its token count (after the model's own truncation)
    rounded up to a multiple of `PAD_MULTIPLE`, and at most the model's maximum length."""
    if not texts:
        return []
    widths = [-(-int(n) // PAD_MULTIPLE) * PAD_MULTIPLE for n in _token_counts(model, texts)]
    cap = model.max_seq_length
    return widths if cap is None else [min(w, int(cap)) for w in widths]


def _token_counts(model, texts: Sequence[str]) -> list[int]:
    counts = getattr(model, "token_counts", None)  # an OnnxEncoder counts with its tokenizer
    if counts is not None:
        return counts(texts)
    return np.asarray(model.preprocess(list(texts))["attention_mask"]).sum(axis=1).tolist()


def _autocast(precision: str):
    """Where the model's matrix products run in bfloat16; a no-op context for the others."""
    if precision != "bfloat16":
        return contextlib.nullcontext()
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16)
