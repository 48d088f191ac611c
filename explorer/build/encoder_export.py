"""The corpus's embedding model exported to ONNX, so a viewer embeds queries without torch.

Exported once per (model id, weights fingerprint) into ``<cache>/models/onnx/<slug>/``:
``model.onnx`` (the transformer in float32, batch and sequence axes dynamic, token vectors
out) with its weights in ``model.onnx.data``, ``tokenizer.json`` (the model's own fast
tokenizer) and ``encoder.json`` (pooling, normalisation, length and input names, and the
other files' sizes and sha256). Pooling and
normalisation run in numpy at query time (explorer.onnx_encoder), so only a
Transformer -> Pooling(mean or cls) [-> Normalize] pipeline is exported; for any other the
build records why not, and the viewer falls back. float32 on purpose: dynamic int8 gave a
mean cosine of 0.93 to the model's vectors and was no faster.

The folder is written as a temporary sibling, encoder.json last, checked against the model,
then renamed into place: a killed build leaves no folder that looks complete.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import shutil
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer import artifacts
from explorer.atomic_files import atomic_write_text, file_inventory, sha256_file
from explorer.build.memory import release_freed_memory
from explorer.onnx_encoder import FEEDS, OnnxEncoder  # the viewer's own code checks it
from explorer.vectors import POOLING_MODES

if TYPE_CHECKING:
    from explorer.build.models import Embedder

# Bump when the export's files or facts change for the same model: older folders are redone.
# Bump PIPELINE_VERSION with it: a run records its export's facts file by hash.
EXPORT_VERSION = 1
OPSET = 17
OUTPUT = "token_embeddings"
# A fresh export must give the model's own vectors to within this (1 - cosine), else it is
# not used: it catches a graph whose tracing froze a shape or a branch.
TOLERANCE = 1e-4
_CHECK_TEXTS = (
    "spiking neural networks",
    "Naïve Bayes, café Lösungen, 数学 and ∑ symbols: a query of unicode text",
)
# Old sentence-transformers pooling configs: one flag per mode.
_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_EXPORT_PACKAGES = ("onnx", "onnxruntime", "tokenizers")
# Why a folder could not be exported (export_early, ensure): the build's encoder stage
# reports it (once) instead of trying again.
_SKIPPED: dict[Path, str] = {}


class ExportSkipped(Exception):
    """This model cannot be exported faithfully; the message says why."""


def export_query_encoder(embedder: Embedder, *, log: Callable[[str], None]) -> dict:
    """The manifest's record of the run's query encoder: the export's folder under the cache
    with its facts file's size and sha256 (exported now unless already there), or why none.
    The export is of the model and its weights, whatever precision the build embeds in.
    A skip found earlier in the build is said here, once; a later call tries again."""
    name, folder = _where(embedder)
    try:
        _exported(embedder, folder, log, forget=True)
    except ExportSkipped as exc:
        log(f"  No ONNX query encoder: {exc}. The viewer will use sentence-transformers.")
        return {"format": None, "skipped": str(exc)}
    facts = folder / artifacts.ENCODER_FACTS
    return {
        "format": "onnx",
        "folder": name,
        "bytes": facts.stat().st_size,
        "sha256": sha256_file(facts),
    }


def export_early(embedder: Embedder, *, log: Callable[[str], None]) -> str | None:
    """Export now unless already there; why not, when this model cannot be (kept quietly for
    the encoder stage, which says it). A build calls this after its embedding, while its
    process holds the model and little else: the export's tracing, protos and check
    session take ~250 MB above where they start; run last, on top of the fitted topics and
    their tables, that was the build's peak (ICML 2013-2019, cold: 1,322 MB, against
    1,134 MB exported after the embedding). Run in a child process, the caller hands the
    reason to `remember_skip` in its own."""
    try:
        _exported(embedder, _where(embedder)[1], log)
    except ExportSkipped as exc:
        return str(exc)
    return None


def remember_skip(embedder: Embedder, reason: str) -> None:
    """Keep another process's `export_early` verdict, so this one does not try again."""
    _SKIPPED[_where(embedder)[1]] = reason


def ensure(embedder: Embedder) -> tuple[Path, dict]:
    """The export's folder and facts, exported now when the cache lacks it intact: what a
    build embedding through onnxruntime (embed.load_encoder) runs. Raises ExportSkipped."""
    _, folder = _where(embedder)
    _exported(embedder, folder, lambda message: None)
    facts = json.loads((folder / artifacts.ENCODER_FACTS).read_text(encoding="utf-8"))
    return folder, facts


def _exported(
    embedder: Embedder, folder: Path, log: Callable[[str], None], *, forget: bool = False
) -> None:
    """Make `folder` hold the export unless it already does. A model found unexportable is
    remembered (`_SKIPPED`) and raised again without a new attempt; `forget` consumes it."""
    if intact(folder):
        return
    reason = _SKIPPED.pop(folder, None) if forget else _SKIPPED.get(folder)
    if reason is not None:
        raise ExportSkipped(reason)
    try:
        _make(embedder, folder, log)
    except ExportSkipped as exc:
        if not forget:
            _SKIPPED[folder] = str(exc)
        raise


def _make(embedder: Embedder, folder: Path, log: Callable[[str], None]) -> None:
    """Check the model can be exported faithfully (else ExportSkipped), say so, export it."""
    from explorer.build.models import model_dir

    _check_supported(model_dir(embedder.model_name))
    log("Exporting the query encoder to ONNX (once per model)…")
    _export(embedder.model_name, folder, embedder.weights)


def _where(embedder: Embedder) -> tuple[str, Path]:
    """The export's folder: as the manifest names it (under the cache), and its path."""
    from explorer.build.models import model_id

    slug = artifacts.model_slug(model_id(embedder.model_name), embedder.weights)
    name = f"{artifacts.ENCODER_ROOT}/{slug}"
    return name, Path(embedder.cache_root) / name


def intact(folder: Path) -> bool:
    """True when `folder` holds a complete export of this version with every file unchanged."""
    try:
        facts = json.loads((folder / artifacts.ENCODER_FACTS).read_text(encoding="utf-8"))
        files = facts["files"]
        return facts.get("export_version") == EXPORT_VERSION and all(
            (folder / n).stat().st_size == m["bytes"] and sha256_file(folder / n) == m["sha256"]
            for n, m in files.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _check_supported(directory: Path) -> None:
    """Raise ExportSkipped unless the model's modules.json and pooling config describe a
    pipeline numpy can finish: Transformer -> Pooling(mean or cls) [-> Normalize]."""
    missing = [p for p in _EXPORT_PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        raise ExportSkipped(f"{', '.join(missing)} not installed (pip install '.[build]')")
    modules = _read_json(directory / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise ExportSkipped("its modules.json is not a list of modules")
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ExportSkipped(f"its modules ({' -> '.join(kinds)}) are not Transformer -> Pooling")
    mode = _pooling_mode(_read_json(directory / modules[1].get("path", "") / "config.json"))
    if mode not in POOLING_MODES:
        raise ExportSkipped(f"its pooling ({mode}) is not one of {', '.join(POOLING_MODES)}")
    settings = directory / "config_sentence_transformers.json"
    prompt = _read_json(settings).get("default_prompt_name") if settings.is_file() else None
    if prompt:
        raise ExportSkipped(f"it prepends a default prompt ({prompt!r})")


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportSkipped(f"{path.name} unreadable ({type(exc).__name__})") from None


def _pooling_mode(config: dict) -> str:
    """The pooling mode from a new (`pooling_mode`) or old (one flag per mode) config."""
    mode = config.get("pooling_mode")
    if mode is not None:
        return mode if isinstance(mode, str) else "+".join(map(str, mode))
    return "+".join(m for flag, m in _POOLING_FLAGS.items() if config.get(flag)) or "none"


def _export(model_name: str, folder: Path, weights: str) -> None:
    """Export into a temporary sibling, check it, then rename it into place."""
    from explorer.build.models import load_model, model_id

    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(folder.parent)
    tmp = folder.parent / f".tmp-{folder.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        model = load_model(model_name, progress=False)
        facts = _model_facts(model) | {"model_id": model_id(model_name), "weights": weights}
        _write_files(model, facts, tmp)
        if intact(folder):  # another build exported the same model meanwhile
            return
        shutil.rmtree(folder, ignore_errors=True)  # a damaged or outdated export
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        # The tracer's graphs, the ONNX protos and the check's session are garbage now (some
        # in reference cycles): give their pages back before the build's next stage.
        gc.collect()
        release_freed_memory()


def _write_files(model, facts: dict, folder: Path) -> None:
    """Graph, weights and tokenizer, checked against the model, then the facts file last."""
    try:
        _write_graph(model, facts["inputs"], folder)
    except OSError:
        raise  # a full disk is the build's error, not the model's
    except Exception as exc:  # the exporter's many error types: no export, not no build
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:160]
        raise ExportSkipped(f"torch.onnx.export failed ({first})") from None
    # The tokenizer as sentence-transformers runs it (it puts do_lower_case into its normaliser).
    model[0].tokenizer.backend_tokenizer.save(str(folder / artifacts.ENCODER_TOKENIZER))
    _check_export(model, folder, facts)
    facts = {**facts, "files": file_inventory(folder)}
    text = json.dumps(facts, indent=2, sort_keys=True)
    atomic_write_text(folder / artifacts.ENCODER_FACTS, text)


def _remove_stale(root: Path) -> None:
    """Remove temporary folders of exports whose process is gone (killed builds)."""
    for path in root.glob(".tmp-*"):
        if not _running(path.name.rsplit("-", 1)[-1]):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, OverflowError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _model_facts(model) -> dict:
    """What the viewer needs to finish the graph's work as sentence-transformers does."""
    transformer, pooling = model[0], model[1]
    tokenizer = transformer.tokenizer
    if not getattr(tokenizer, "is_fast", False) or tokenizer.padding_side != "right":
        raise ExportSkipped("its tokenizer is not a right-padding fast tokenizer")
    if tokenizer.pad_token_id is None:
        raise ExportSkipped("its tokenizer has no padding token")
    if pooling.pooling_mode not in POOLING_MODES or model.default_prompt_name:
        raise ExportSkipped(f"its pooling ({pooling.pooling_mode}) cannot be reproduced")
    return {
        "export_version": EXPORT_VERSION,
        "format": "onnx",
        "opset": OPSET,
        "inputs": [n for n in FEEDS if n in tokenizer.model_input_names],
        "output": OUTPUT,
        "pooling": pooling.pooling_mode,
        "normalize": len(model) == 3,
        "max_seq_length": int(transformer.max_seq_length),
        "dimension": _dimension(model),
        "pad_id": int(tokenizer.pad_token_id),
        "pad_token": str(tokenizer.pad_token),
        "versions": {p: metadata.version(p) for p in ("torch", "transformers", "onnx")},
    }


def _write_graph(model, inputs: list[str], folder: Path) -> None:
    """The transformer as ONNX: token ids in, token vectors out, any batch and length; the
    weights in a file of their own (artifacts.ENCODER_WEIGHTS says why)."""
    import onnx
    import torch

    class TokenVectors(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(inputs, tensors, strict=True))).last_hidden_state

    # Two texts of different lengths: the traced graph sees padding.
    sample = model[0].tokenizer(list(_CHECK_TEXTS), padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "sequence"} for name in [*inputs, OUTPUT]}
    single = folder / "single.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and deprecation notes, not errors
        torch.onnx.export(
            TokenVectors(model[0].auto_model).eval(),
            tuple(sample[name] for name in inputs),
            str(single),
            input_names=inputs,
            output_names=[OUTPUT],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter needs onnx only, not onnxscript
        )
    graph = onnx.load(str(single))
    single.unlink()
    onnx.save_model(
        graph,
        str(folder / artifacts.ENCODER_GRAPH),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=artifacts.ENCODER_WEIGHTS,
        size_threshold=1024,
    )


def _check_export(model, folder: Path, facts: dict) -> None:
    """Raise ExportSkipped unless the export reproduces the model's vectors, for a batch of
    texts of different lengths and one longer than max_seq_length (truncation)."""
    texts = [*_CHECK_TEXTS, "robust " * (2 * facts["max_seq_length"])]
    ours = OnnxEncoder(folder, facts).encode(texts)
    theirs = np.asarray(model.encode(texts, show_progress_bar=False), dtype=np.float32)
    cosine = (ours * theirs).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    gap = float((1 - cosine).max())
    if not gap <= TOLERANCE:
        raise ExportSkipped(f"the export does not reproduce the model (1 - cosine {gap:.1e})")


def _dimension(model) -> int:
    """The vectors' length (the method was renamed in sentence-transformers 6)."""
    method = getattr(model, "get_embedding_dimension", None)
    return (method or model.get_sentence_embedding_dimension)()
