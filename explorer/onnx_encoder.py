"""The exported query encoder at run time: tokenizers + onnxruntime + numpy, never torch.

Both worlds use it, so it lives beside the contract: the build checks a fresh ONNX export
against sentence-transformers with it (explorer.build.encoder_export), and the viewer embeds
queries with it (explorer.view.query_encoder). The graph gives token vectors; pooling and
normalisation are done here in numpy exactly as the model's sentence-transformers modules do.
onnxruntime and tokenizers are imported when an encoder is loaded, never on import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from explorer import artifacts
from explorer.vectors import normalise_rows, pool_tokens

# Threads per session. A server shares its cores between every visitor's session, and a
# query is a few dozen tokens: on 2 cores one thread embeds a query in 3.6 ms and two in
# 2.3 ms (bench/onnx_encoder.py), not worth taking the other core from other sessions.
THREADS = 1
# The graph's input names and the tokenizers.Encoding attribute each is read from.
FEEDS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
RUNTIME_PACKAGES = ("onnxruntime", "tokenizers")


def runtime_available() -> bool:
    """True when onnxruntime and tokenizers are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in RUNTIME_PACKAGES)


class OnnxEncoder:
    """A model's ONNX export with its tokenizer and pooling: texts in, float32 vectors out."""

    kind = "onnx"

    def __init__(self, folder: Path, facts: dict, *, threads: int = THREADS) -> None:
        """`threads`: the session's intra-op threads (a build embedding a corpus uses every
        core; a server's query sessions use THREADS)."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(folder / artifacts.ENCODER_GRAPH), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / artifacts.ENCODER_TOKENIZER))
        # Set here, not trusted from the file: sentence-transformers truncates at the model's
        # max_seq_length and pads a batch to its longest text.
        self.tokenizer.enable_truncation(int(facts["max_seq_length"]))
        self.tokenizer.enable_padding(pad_id=int(facts["pad_id"]), pad_token=facts["pad_token"])
        self.facts = facts

    @property
    def max_seq_length(self) -> int:
        return int(self.facts["max_seq_length"])

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's tokens after truncation at max_seq_length (padding not counted)."""
        return [sum(e.attention_mask) for e in self.tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str], *, width: int | None = None) -> np.ndarray:
        """One row per text, as the model's sentence-transformers pipeline computes it.

        `width`: pad every text to this many tokens (at least the longest's), not to the
        batch's longest; a text's row then depends on the text alone, whatever shares its
        batch (the build's rule, explorer.build.embed.PAD_MULTIPLE)."""
        if not texts:
            return np.zeros((0, int(self.facts["dimension"])), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        arrays = {
            name: np.array([getattr(e, attribute) for e in encodings], dtype=np.int64)
            for name, attribute in FEEDS.items()
        }
        if width is not None:
            arrays = _padded_to(arrays, width, int(self.facts["pad_id"]))
        feed = {name: arrays[name] for name in self.facts["inputs"]}
        (tokens,) = self.session.run([self.facts["output"]], feed)
        vectors = pool_tokens(tokens, arrays["attention_mask"], self.facts["pooling"])
        if self.facts["normalize"]:
            vectors = normalise_rows(vectors)
        return vectors.astype(np.float32)


def _padded_to(arrays: dict[str, np.ndarray], width: int, pad_id: int) -> dict[str, np.ndarray]:
    """Right-pad (or trim padding from) each feed to `width` columns; refuses to cut tokens."""
    longest = int(arrays["attention_mask"].sum(axis=1).max())
    if longest > width:
        raise ValueError(f"a text of {longest} tokens does not fit a width of {width}")
    padded = {}
    for name, values in arrays.items():
        fill = pad_id if name == "input_ids" else 0
        out = np.full((values.shape[0], width), fill, dtype=np.int64)
        keep = min(width, values.shape[1])
        out[:, :keep] = values[:, :keep]
        padded[name] = out
    return padded


def load_onnx_encoder(ref: artifacts.EncoderRef) -> OnnxEncoder:
    """The run's exported encoder, its files checked first; raises ArtifactError if damaged."""
    return OnnxEncoder(ref.folder, artifacts.read_encoder_facts(ref))
