"""Vector helpers both worlds use (numpy only): unit rows, topic centroids, the stored form.

The build computes with them and the view's search reads what `unit_float16` wrote, so
they live beside the contract rather than in either world.
"""

from __future__ import annotations

import numpy as np


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Unit-length rows, so a dot product is a cosine similarity."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def centroids(unit: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Unit-length mean of the (unit) rows labelled with each of `groups`, in that order."""
    return normalise_rows(np.stack([unit[labels == g].mean(axis=0) for g in groups]))


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
