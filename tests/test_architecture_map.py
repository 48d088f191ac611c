"""docs/architecture.md's code map stays true: every module under explorer/ is on it, and
it names no module that does not exist (issue 50, item 4). A map that drifts sends a new
engineer to a room that is not there."""

from __future__ import annotations

import re

from tests.conftest import ROOT

ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[\w.]+/?)(?:\s|$)")


def map_block(text: str) -> list[str]:
    """The lines of the fenced block under the "## Code layout" heading."""
    section = text.split("## Code layout", 1)[1]
    return section.split("```", 2)[1].splitlines()[1:]


def mapped_paths(lines: list[str]) -> set[str]:
    """Every file and folder the map names, as a path from the repository root: an entry's
    folder is the nearest entry above it that is a folder and indented less."""
    stack: list[tuple[int, str]] = []
    paths = set()
    for line in lines:
        match = ENTRY.match(line)
        if not match or not line.strip():
            continue
        indent, name = len(match["indent"]), match["name"]
        if not (name.endswith("/") or name.endswith(".py")):
            continue  # a description's continuation line
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "".join(folder for _, folder in stack) + name
        paths.add(path.rstrip("/"))
        if name.endswith("/"):
            stack.append((indent, name))
    return paths


def test_the_map_reads_nested_entries():
    lines = ["app.py   the app", "explorer/", "  a.py   one", "  sub/   two", "    b.py  three",
             "           continued text", "  c.py   four"]  # fmt: skip
    assert mapped_paths(lines) == {
        "app.py", "explorer", "explorer/a.py", "explorer/sub", "explorer/sub/b.py", "explorer/c.py"
    }  # fmt: skip


def test_every_module_of_explorer_is_on_the_map_and_every_entry_exists():
    mapped = mapped_paths(map_block((ROOT / "docs" / "architecture.md").read_text()))
    modules = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "explorer").rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    }
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "explorer").rglob("__init__.py")}
    missing = sorted(modules - mapped)
    assert missing == [], f"docs/architecture.md's code layout lacks {missing}"
    named = {p for p in mapped if p.startswith("explorer")}
    ghosts = sorted(named - modules - packages)
    assert ghosts == [], f"docs/architecture.md's code layout names {ghosts}, which do not exist"
