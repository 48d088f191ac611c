"""Vector helpers both worlds use (numpy only): unit rows, topic centroids, the stored form.

The build computes with them and the view's search reads what `unit_float16` wrote, so
they live beside the contract rather than in either world.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Rows widened to float32 at a time when reading stored vectors (float16, memory-mapped in the
# viewer): 96 MB at 384 dims, where a million rows widened at once would take 1.5 GB.
ROW_BLOCK = 65_536


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Unit-length rows (along the last axis), so a dot product is a cosine similarity."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def float32_blocks(vectors: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, the rows as float32) for each block of ROW_BLOCK rows."""
    for start in range(0, len(vectors), ROW_BLOCK):
        yield start, np.asarray(vectors[start : start + ROW_BLOCK], dtype=np.float32)


def centroids(unit: np.ndarray, labels: np.ndarray, groups) -> np.ndarray:
    """Unit-length mean of the (unit) rows labelled with each of `groups`, in that order."""
    codes = np.full(len(labels), -1, dtype=np.int64)
    for i, group in enumerate(groups):
        codes[np.asarray(labels == group)] = i
    return coded_centroids(unit, codes, len(groups))


def coded_centroids(vectors: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Unit-length mean of the rows of each group 0 .. n_groups - 1 (`codes`, -1 for none),
    summed block by block (`float32_blocks`), so float16 vectors are never all widened."""
    sums = np.zeros((n_groups, vectors.shape[1]), dtype=np.float64)
    for start, block in float32_blocks(vectors):
        part = codes[start : start + len(block)]
        order = np.argsort(part, kind="stable")
        present, first = np.unique(part[order], return_index=True)
        totals = np.add.reduceat(block[order], first, axis=0)
        sums[present[present >= 0]] += totals[present >= 0]
    return normalise_rows(sums).astype(np.float32)


def unit_float16(embeddings: np.ndarray) -> np.ndarray:
    """Paper vectors as stored in a run for search: unit length, float16 (cosines only)."""
    return normalise_rows(embeddings.astype(np.float32)).astype(np.float16)


# Poolings the exported query encoder reproduces (sentence-transformers' Pooling modes).
POOLING_MODES = ("mean", "cls")


def pool_tokens(tokens: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """One vector per sequence from its token vectors (batch x tokens x dim) and attention
    mask, as sentence-transformers' Pooling computes it: the mean over real tokens (their
    count clamped at 1e-9), or the first real token for "cls"."""
    if mode == "cls":
        return tokens[np.arange(len(tokens)), mask.argmax(axis=1)]
    if mode != "mean":
        raise ValueError(f"pooling must be one of {', '.join(POOLING_MODES)}: {mode!r}")
    weights = mask[..., None].astype(np.float32)
    return (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
