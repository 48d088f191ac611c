"""The two worlds stay apart: an AST check of every import under explorer/.

- `explorer/view/` never imports `explorer.build`, except the query encoder, lazily, in
  `explorer/view/query_encoder.py` (docs/architecture.md's one declared exception).
- The contract (`artifacts.py` with its stdlib part `names.py`, `errors.py`, `vectors.py`, and
  `onnx_encoder.py`, which runs the exported query encoder for both) imports neither world.
- `explorer/build/` never imports the view world (data flows one way).
- No two modules of explorer/ import each other, directly or around a loop, counting lazy
  imports and those made only for type checking (pipeline.py once imported stages.py,
  which imported it back for the Plan type; plan.py now holds it).
- Only `explorer/view/ui/` (and pages/, app.py) import streamlit.
- No module of explorer/, pages/ or bench/ but the contract parses node ids or reads the
  manifest by hand: they use explorer.artifacts' node-id grammar and its typed Manifest.
- No module of explorer/, pages/, bench/ or app.py is over 400 lines, and no function over 60
  lines or 6 parameters (bench/code_shape.py's check, issue 50).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench import code_shape
from tests.conftest import ROOT

PACKAGE = ROOT / "explorer"
ENCODER = PACKAGE / "view" / "query_encoder.py"
# The contract and the light modules beside it that both worlds use (names.py: the
# contract's standard-library part, run discovery for the serving supervisor).
CONTRACT = [
    PACKAGE / name
    for name in ("artifacts.py", "manifest.py", "node_ids.py", "atomic_files.py", "names.py",
                 "errors.py", "vectors.py", "onnx_encoder.py")
]  # fmt: skip


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


SCRATCH = ROOT / "bench" / "work"  # benchmarks' scratch (git-ignored; old checkouts too)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if not p.is_relative_to(SCRATCH))


@pytest.mark.parametrize("path", _files(PACKAGE / "view"), ids=lambda p: p.name)
def test_view_never_imports_build(path):
    for module, at_top in imports(path):
        if module.startswith("explorer.build"):
            assert path == ENCODER, f"{path.name} imports {module}"
            assert not at_top, "the query encoder must import the build world lazily"


@pytest.mark.parametrize("path", _files(PACKAGE / "view"), ids=lambda p: p.name)
def test_view_reads_only_the_hosting_settings(path):
    """The view sits below hosting: it may read hosting/settings.py's constants (which import
    nothing of the supervisor), never the supervisor, haproxy or publish modules."""
    bad = [
        m for m, _ in imports(path)
        if m.startswith("explorer.hosting") and m not in ("explorer.hosting", "explorer.hosting.settings")
        and not m.startswith("explorer.hosting.settings.")
    ]  # fmt: skip
    assert bad == [], f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", CONTRACT, ids=lambda p: p.name)
def test_the_contract_imports_neither_world(path):
    bad = [
        m for m, _ in imports(path)
        if m.startswith(("explorer.build", "explorer.view", "explorer.hosting", "explorer.cli"))
    ]  # fmt: skip
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


# --- no import cycles --------------------------------------------------------------------


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str = "explorer") -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in the file (at the top, in a
    function, or under `if TYPE_CHECKING:`). Its own packages do not count: Python runs
    them before it, and `from explorer.build import stages` imports stages."""
    paths = {module_name(p, root): p for p in _files(root / package)}
    graph = {}
    for name, path in paths.items():
        found = {m for m, _ in imports(path) if m in paths and m != name}
        graph[name] = {m for m in found if not name.startswith(f"{m}.")}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that reach each other through imports (Tarjan's strongly
    connected components with more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_modules_import_each_other():
    assert import_cycles(import_graph(ROOT)) == []


def test_the_cycle_check_catches_a_planted_cycle(tmp_path):
    package = tmp_path / "explorer"
    (package / "build").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "build" / "__init__.py").write_text("")
    (package / "build" / "pipeline.py").write_text(
        "from explorer.build.plan import Plan\n\ndef build():\n"
        "    from explorer.build import stages\n"
    )
    (package / "build" / "plan.py").write_text("class Plan: ...\n")
    (package / "build" / "stages.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from explorer.build.pipeline import Plan\n"
    )
    graph = import_graph(tmp_path)
    assert graph["explorer.build.pipeline"] == {"explorer.build.plan", "explorer.build.stages"}
    assert import_cycles(graph) == [["explorer.build.pipeline", "explorer.build.stages"]]
    (package / "build" / "stages.py").write_text("from explorer.build.plan import Plan\n")
    assert import_cycles(import_graph(tmp_path)) == []


# --- the contract is used, not re-implemented ----------------------------------------------
# Node ids are parsed and made only by explorer.artifacts (level_of, topic_of, parent_of,
# area_id, subtopic_id...), and the manifest is read only as explorer.artifacts.Manifest:
# nothing outside the contract takes an id apart by hand, reads a manifest key by string or
# opens manifest.json itself. (A typed Manifest cannot be subscripted, so `m["counts"]` on
# one fails at once; what this check guards is the way around it, the file read as a dict.)
# Tests of the contract itself may do all of these.
USERS = [
    p
    for p in [*_files(PACKAGE), *_files(ROOT / "pages"), *_files(ROOT / "bench"), ROOT / "app.py"]
    if p not in (PACKAGE / "artifacts.py", PACKAGE / "names.py")
]
# Calls that take a node id apart: x.startswith("A"), x.lstrip("A"), x.split("."), ...
ID_CALLS = {("startswith", "A"), ("lstrip", "A"), ("split", "."), ("partition", ".")}


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _manifest(node: ast.AST) -> bool:
    """Whether an expression is, or is read from, something named a manifest."""
    return "manifest" in ast.unparse(node).lower()


def contract_violations(path: Path) -> list[str]:
    """Lines that parse a node id or read a manifest key by hand, as `file:line: what`."""
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(path.read_text(), filename=str(path))
    return [f"{name}:{node.lineno}: {what}" for node in ast.walk(tree) if (what := _by_hand(node))]


def _by_hand(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript):
        if (key := _text(node.slice)) is not None and _manifest(node.value):
            return f"manifest key {key!r} read by string"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method, args = node.func.attr, [_text(a) for a in node.args]
        if method == "get" and args and args[0] is not None and _manifest(node.func.value):
            return f"manifest key {args[0]!r} read by .get"
        if len(args) == 1 and (method, args[0]) in ID_CALLS:
            return f"node id parsed by .{method}({args[0]!r})"
    elif (
        isinstance(node, ast.Compare)
        and _text(node.left) == "."
        and isinstance(node.ops[0], ast.In)
    ):
        return "node id parsed by '.' in"
    elif isinstance(node, ast.JoinedStr) and node.values and _text(node.values[0]) == "A":
        return "area id made by an f-string"
    elif _text(node) == "manifest.json":
        return "manifest.json opened around Manifest"
    return None


def test_no_module_parses_node_ids_or_reads_manifest_keys_by_hand():
    found = [line for path in USERS for line in contract_violations(path)]
    assert found == [], "use explorer.artifacts' node-id grammar and Manifest:\n" + "\n".join(found)


def test_the_contract_check_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(run, node, manifest, folder):\n"
        "    a = run.manifest['counts']\n"
        "    b = manifest['config']['params']\n"
        "    c = run.manifest.get('messages', [])\n"
        "    d = node.startswith('A') or '.' in node\n"
        "    e = node.split('.')[0], node.partition('.'), node.lstrip('A')\n"
        "    return f'A{node}', manifest.get('timings'), (folder / 'manifest.json').read_text()\n"
    )
    found = contract_violations(bad)
    for line, what in [
        (2, "'counts' read by string"), (3, "'config' read by string"),
        (4, "'messages' read by .get"), (5, ".startswith('A')"), (5, "'.' in"),
        (6, ".split('.')"), (6, ".partition('.')"), (6, ".lstrip('A')"), (7, "area id made"),
        (7, "'timings' read by .get"), (7, "manifest.json opened"),
    ]:  # fmt: skip
        assert any(f.startswith(f"bad.py:{line}: ") and what in f for f in found), (line, what)
    assert _clean_example(tmp_path) == []


def _clean_example(tmp_path: Path) -> list[str]:
    """What the contract's own way of doing the same reports: nothing."""
    good = tmp_path / "good.py"
    good.write_text(
        "from explorer import artifacts\n\n"
        "def f(run, node):\n"
        "    a = run.manifest.counts.papers\n"
        "    return node_ids.topic_of(node), node_ids.area_id(3), 'x.y'.rsplit('.', 1)\n"
    )
    return contract_violations(good)


def _stop_calls(path: Path) -> list[int]:
    """Lines of `path` calling `st.stop()`."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "stop"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "st"
    ]


def test_no_page_ends_the_run_with_st_stop(tmp_path):
    """`st.stop()` ends the run, and the router draws the share link and the host's sign-in
    after the page: a page that cannot go on calls explorer/view/ui/stop.py's stop_page."""
    files = [*(ROOT / "pages").glob("*.py"), *(ROOT / "explorer" / "view").rglob("*.py")]
    assert {str(f.relative_to(ROOT)): _stop_calls(f) for f in files if _stop_calls(f)} == {}
    planted = tmp_path / "page.py"
    planted.write_text("import streamlit as st\nif True:\n    st.stop()\n")
    assert _stop_calls(planted) == [3]


# --- rooms a newcomer can read (issue 50) ---------------------------------------------------


def test_modules_and_functions_stay_within_the_limits():
    found = code_shape.violations(ROOT)
    assert found == [], "over bench/code_shape.py's limits:\n" + "\n".join(found)


def test_the_size_check_catches_planted_violations(tmp_path):
    package = tmp_path / "explorer"
    package.mkdir()
    params = ", ".join(f"p{i}" for i in range(7))
    long_body = "".join(f"    x{i} = {i}\n" for i in range(60))
    (package / "big.py").write_text("x = 1\n" * 400 + f"\n\ndef wide({params}):\n    pass\n")
    (package / "small.py").write_text(
        f"class C:\n    def method(self, {params[4:]}):\n        pass\n\n\ndef long():\n{long_body}"
    )
    scratch = tmp_path / "bench" / "work"
    scratch.mkdir(parents=True)
    (scratch / "old.py").write_text("x = 1\n" * 500)  # benchmarks' scratch: not measured
    assert code_shape.violations(tmp_path) == [
        "explorer/big.py: 404 lines (modules: at most 400)",
        "explorer/small.py:6 long: 61 lines (functions: at most 60)",
        "explorer/big.py:403 wide: 7 parameters (at most 6)",
    ]
