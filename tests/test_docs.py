"""The docs that mirror code stay in step with it."""

from __future__ import annotations

import argparse
import re

from explorer.cli import COMMANDS, _parser
from explorer.cli.reference import _commands, reference
from tests.conftest import ROOT


def test_the_cli_reference_is_what_make_docs_would_write():
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference(_parser()), "docs/cli.md is stale: run `make docs`"


def test_the_cli_reference_names_every_command_and_option():
    """What the equality above implies, said outright (and a check that the walk of the
    parser reaches every sub-command: `curate`'s operations are two levels down)."""
    text = reference(_parser())
    commands = list(_commands(_parser()))
    assert {"explorer build", "explorer serve", "explorer curate NAME rename"} <= {
        c.prog for c, _ in commands
    }
    for command, _ in commands:
        assert f"## `{command.prog}`" in text
        for action in command._actions:
            for option in action.option_strings:
                assert option in text, f"{command.prog} {option} is undocumented"
            if not isinstance(action, argparse._SubParsersAction) and not action.option_strings:
                assert (action.metavar or action.dest) in text


def test_each_command_is_one_row_of_the_table():
    """The parser's sub-commands and the dispatch are COMMANDS, in its order, once each."""
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [c.name for c in COMMANDS]
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert helps == {c.name: c.help for c in COMMANDS}


def test_no_code_cites_a_design_file_outside_the_repository():
    cited = [
        path.relative_to(ROOT)
        for folder in ("explorer", "pages", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if "DESIGN.md" in path.read_text(encoding="utf-8") and path.name != "test_docs.py"
    ]
    assert cited == [], "cite docs/architecture.md instead"
    assert (ROOT / "docs" / "architecture.md").is_file()


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = re.findall(r"(?m)^#{1,6} (.+)$", re.sub(r"(?ms)^```.*?^```", "", markdown))
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in found}


def test_every_link_between_the_docs_lands_on_a_file_and_heading():
    pages = [ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"(?ms)^```.*?^```", "", text)):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif (
                anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text("utf-8"))
            ):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_is_a_first_page():
    """What a user needs first; the rest lives under docs/ (about 200 lines)."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 220
