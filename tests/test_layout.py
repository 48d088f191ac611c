"""The two worlds stay apart: an AST check of every import under explorer/.

- `explorer/view/` never imports `explorer.build`, except the query encoder, lazily, in
  `explorer/view/encoder.py` (docs/architecture.md's one declared exception).
- The contract (`artifacts.py`, `errors.py`, `vectors.py`, and `onnx_encoder.py`, which runs the
  exported query encoder for both) imports neither world.
- `explorer/build/` never imports the view world (data flows one way).
- Only `explorer/view/ui/` (and pages/, app.py) import streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "explorer"
ENCODER = PACKAGE / "view" / "encoder.py"
# The contract and the light modules beside it that both worlds use.
CONTRACT = [
    PACKAGE / name for name in ("artifacts.py", "errors.py", "vectors.py", "onnx_encoder.py")
]


def imports(path: Path) -> list[tuple[str, bool]]:
    """(module, imported at module level?) for every import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [(name, id(node) in top) for name in [node.module, *names]]
    return found


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


@pytest.mark.parametrize("path", _files(PACKAGE / "view"), ids=lambda p: p.name)
def test_view_never_imports_build(path):
    for module, at_top in imports(path):
        if module.startswith("explorer.build"):
            assert path == ENCODER, f"{path.name} imports {module}"
            assert not at_top, "the query encoder must import the build world lazily"


@pytest.mark.parametrize("path", CONTRACT, ids=lambda p: p.name)
def test_the_contract_imports_neither_world(path):
    bad = [m for m, _ in imports(path) if m.startswith(("explorer.build", "explorer.view"))]
    assert bad == []


@pytest.mark.parametrize("path", _files(PACKAGE / "build"), ids=lambda p: p.name)
def test_build_never_imports_view(path):
    assert [m for m, _ in imports(path) if m.startswith("explorer.view")] == []


HEAVY = ("torch", "sentence_transformers", "transformers", "bertopic", "umap", "hdbscan")


@pytest.mark.parametrize("path", [*_files(PACKAGE / "view"), *CONTRACT], ids=lambda p: p.name)
def test_light_modules_import_no_model_package_at_top_level(path):
    assert [m for m, top in imports(path) if top and m.split(".")[0] in HEAVY] == []


def test_the_onnx_encoder_never_imports_torch():
    """It is how a viewer without torch embeds queries: not even a lazy import."""
    assert [m for m, _ in imports(PACKAGE / "onnx_encoder.py") if m.split(".")[0] in HEAVY] == []


def test_only_ui_imports_streamlit():
    outside = [
        p.relative_to(ROOT).as_posix()
        for p in _files(PACKAGE)
        if any(m.split(".")[0] == "streamlit" for m, _ in imports(p))
        and not p.is_relative_to(PACKAGE / "view" / "ui")
    ]
    assert outside == []


def test_the_boundary_check_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from explorer.build import pipeline\n\ndef f():\n    import explorer.build.embed\n"
    )
    assert imports(bad)[0] == ("explorer.build", True)
    assert ("explorer.build.embed", False) in imports(bad)
