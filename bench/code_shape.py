"""The code's shape, as issue 30's closing note measures it: the largest modules, functions
over 60 lines and functions over 6 parameters, across explorer/, pages/, bench/ and app.py.

    python -m bench.code_shape            # the report
    python -m bench.code_shape --json     # the same, machine-readable
    python -m bench.code_shape --check    # one line per module over 400 lines, function over
                                          # 60 lines or over 6 parameters; exit 1 if any

The check is issue 50's gate (tests/test_layout.py runs it). The benchmarks' scratch
(bench/work, old checkouts among it) is not measured.

Standard library only (ast), so the numbers can be regenerated from any checkout. A function's
length runs from its `def` line (decorators excluded) to its last line, docstring included; a
nested function counts on its own and inside its parent. Parameters are every named one
(positional-only, positional and keyword-only), without a method's `self` or `cls`; `*args`
and `**kwargs` are not counted. Dataclass constructors are generated, so never listed.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ("explorer", "pages", "bench", "app.py")
SCRATCH = ROOT / "bench" / "work"  # benchmarks' scratch (git-ignored; old checkouts too)
MAX_MODULE_LINES = 400
MAX_LINES = 60
MAX_PARAMS = 6
LARGEST = 10  # modules listed by size


@dataclass(frozen=True)
class Function:
    """One function or method, where it is and how big it is."""

    path: str
    line: int
    name: str
    lines: int
    params: int


def python_files(root: Path = ROOT) -> list[Path]:
    """Every Python file in the measured scope, in path order."""
    files: list[Path] = []
    for entry in SCOPE:
        path = root / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    scratch = root / SCRATCH.relative_to(ROOT)
    return [p for p in files if p.is_file() and not p.is_relative_to(scratch)]


def _param_count(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    a = node.args
    named = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    if in_class and named and named[0].arg in ("self", "cls"):
        named = named[1:]
    return len(named)


def functions(path: Path, root: Path = ROOT) -> Iterator[Function]:
    """Each function in a file, methods and nested functions included, with its qualified name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root).as_posix()

    def walk(node: ast.AST, prefix: str, in_class: bool) -> Iterator[Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                params = _param_count(child, in_class)
                yield Function(rel, child.lineno, name, lines, params)
                yield from walk(child, f"{name}.", in_class=False)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.", in_class=True)
            else:
                yield from walk(child, prefix, in_class)

    yield from walk(tree, "", in_class=False)


def measure(root: Path = ROOT) -> dict:
    """The report as data: module sizes, and the functions over either limit."""
    files = python_files(root)
    sizes = sorted(
        ((len(p.read_text(encoding="utf-8").splitlines()), p.relative_to(root).as_posix())
         for p in files),
        reverse=True,
    )  # fmt: skip
    every = [f for p in files for f in functions(p, root)]
    big = [{"path": p, "lines": n} for n, p in sizes if n > MAX_MODULE_LINES]
    long_ = sorted((f for f in every if f.lines > MAX_LINES), key=lambda f: -f.lines)
    wide = sorted((f for f in every if f.params > MAX_PARAMS), key=lambda f: -f.params)
    return {
        "files": len(files),
        "lines": sum(n for n, _ in sizes),
        "largest_modules": [{"path": p, "lines": n} for n, p in sizes[:LARGEST]],
        "over_module_lines": big,
        "functions": len(every),
        "over_lines": [asdict(f) for f in long_],
        "over_params": [asdict(f) for f in wide],
    }


def render(report: dict) -> str:
    """The report as text, one finding per line."""
    out = [
        f"{report['files']} files, {report['lines']} lines, {report['functions']} functions",
        "",
        "Largest modules:",
        *(f"  {m['lines']:5d}  {m['path']}" for m in report["largest_modules"]),
        "",
        f"Functions over {MAX_LINES} lines: {len(report['over_lines'])}",
        *(f"  {f['lines']:4d}  {f['path']}:{f['line']} {f['name']}" for f in report["over_lines"]),
        "",
        f"Functions over {MAX_PARAMS} parameters: {len(report['over_params'])}",
        *(
            f"  {f['params']:4d}  {f['path']}:{f['line']} {f['name']}"
            for f in report["over_params"]
        ),
    ]
    return "\n".join(out)


def violations(root: Path = ROOT) -> list[str]:
    """Every module, function or parameter list over its limit, one line each: empty when
    the code is within issue 50's limits."""
    report = measure(root)
    return [
        *(f"{m['path']}: {m['lines']} lines (modules: at most {MAX_MODULE_LINES})"
          for m in report["over_module_lines"]),
        *(f"{f['path']}:{f['line']} {f['name']}: {f['lines']} lines (functions: at most "
          f"{MAX_LINES})" for f in report["over_lines"]),
        *(f"{f['path']}:{f['line']} {f['name']}: {f['params']} parameters (at most "
          f"{MAX_PARAMS})" for f in report["over_params"]),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--check", action="store_true", help="list what is over a limit; exit 1 if anything is"
    )
    args = parser.parse_args(argv)
    if args.check:
        found = violations()
        print("\n".join(found) if found else "within the limits")
        return 1 if found else 0
    report = measure()
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
