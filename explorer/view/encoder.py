"""The one declared exception to "the view never imports the build world": the query encoder.

Semantic search embeds the user's query with the model that built the corpus. That model
lives in the build world (`explorer.build.embed`, torch, sentence-transformers), so it is
imported here, lazily, on the first query and never on page load. A viewer-only install
(no build extra) has no encoder, and search falls back to TF-IDF.
"""

from __future__ import annotations

import importlib.util

import numpy as np


def encoder_available() -> bool:
    """True when the model packages and the embedding module are installed (nothing imported)."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("sentence_transformers", "explorer.build.embed")
        )
    except ModuleNotFoundError:  # explorer.build itself absent (a published folder)
        return False


def load_encoder(name: str):  # -> SentenceTransformer
    """The corpus's embedding model, loaded offline; raises if it cannot be had."""
    from explorer.build.embed import load_model

    return load_model(name, progress=False)


def encode_query(model, query: str) -> np.ndarray:
    """One query's embedding as float32."""
    return np.asarray(model.encode([query], show_progress_bar=False)[0], dtype=np.float32)
