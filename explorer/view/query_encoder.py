"""The query encoder for semantic search: the run's ONNX export, else the model itself.

Semantic search embeds the user's query with the model that built the corpus. The build
exports that model to ONNX once (explorer.build.encoder_export) and the run's manifest names
the export, so queries are encoded with onnxruntime and tokenizers (explorer.onnx_encoder):
no torch, in a full install and a published folder alike, one encoder for everyone.

Only where the export or those two packages are missing is sentence-transformers loaded from
the build world: the one declared exception to "the view never imports the build world",
imported lazily here on the first query, never on page load. Where neither can be had,
search falls back to TF-IDF (explorer.view.ui.search_box says why).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from explorer.artifacts import EncoderRef
from explorer.errors import ExplorerError
from explorer.onnx_encoder import load_onnx_encoder, runtime_available

if TYPE_CHECKING:
    from explorer.onnx_encoder import OnnxEncoder


def model_available() -> bool:
    """True when the model packages and the embedding module are installed (nothing imported)."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("sentence_transformers", "explorer.build.models")
        )
    except ModuleNotFoundError:  # explorer.build itself absent
        return False


def encoder_available(onnx: EncoderRef | None = None) -> bool:
    """True when an encoder can be tried: the run's ONNX export with its runtime, or the model
    packages (nothing is imported)."""
    return (onnx is not None and runtime_available()) or model_available()


class ModelEncoder:
    """The sentence-transformers model behind the same `encode` as the ONNX encoder."""

    kind = "sentence-transformers"

    def __init__(self, model) -> None:
        self.model = model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(list(texts), show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def load_encoder(name: str, onnx: EncoderRef | None = None) -> OnnxEncoder | ModelEncoder:
    """The run's ONNX encoder when it has one and onnxruntime and tokenizers are installed,
    else model `name` loaded offline; raises, saying why, when neither can be had."""
    why_not = None
    if onnx is not None and runtime_available():
        try:
            return load_onnx_encoder(onnx)
        except Exception as exc:  # noqa: BLE001 - a damaged export: try the model, say why
            why_not = f"its ONNX export failed: {str(exc).splitlines()[0][:160]}"
    if not model_available():
        raise ExplorerError(why_not or "no encoder here")
    from explorer.build.models import load_model

    return ModelEncoder(load_model(name, progress=False))


def encode_query(encoder, query: str) -> np.ndarray:
    """One query's embedding as float32."""
    return encoder.encode([query])[0]
