"""The escaping module, and a lint that keeps pages from building Markdown out of data.

tests/e2e/test_injection.py proves in Chromium that what these produce renders literally.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.view.text import (
    MATH_COMMANDS,
    MAX_MATH_CHARS,
    WORD_JOINER,
    md,
    md_format,
    md_math,
    plot,
)
from tests.conftest import ROOT, shown

# Streamlit calls whose text argument is rendered as Markdown.
MARKDOWN_CALLS = {
    "markdown", "caption", "subheader", "header", "title", "warning", "info", "error",
    "success", "toast", "write", "expander", "popover", "tabs", "metric",
    "selectbox", "multiselect", "text_input", "slider", "checkbox", "toggle", "radio",
    "button", "download_button", "link_button", "page_link", "number_input",
}  # fmt: skip
SAFE_BUILDERS = {"md", "md_format", "md_math"}
VIEW_FILES = [
    ROOT / "app.py",
    *(ROOT / "pages").glob("*.py"),
    *(ROOT / "explorer/view/ui").rglob("*.py"),
]


def test_markdown_escape_leaves_no_unescaped_punctuation():
    assert md("**x** [l](u) ![i](h) <b> $a$ _u_ `c` #") == (
        r"\*\*x\*\* \[l\]\(u\) \!\[i\]\(h\) \<b\> \$a\$ \_u\_ \`c\` \#"
    )
    assert md("line\nbreak") == "line break"
    assert md("a -> b") == f"a \\-{WORD_JOINER}\\> b"


@pytest.mark.parametrize(
    "text",
    [":red[r]", ":material/home:", ":material_lock:", ":streamlit:", ":smile:", "?p=:smile",
     "_www.evil.com", "x_https://e.com", "a@b.com", "a\ufeff-> b", "mailto:x@y.z"],
)  # fmt: skip
def test_markdown_escape_breaks_every_text_rewrite(text):
    """Colons, autolinks and arrows get a word joiner (invisible) so no rewrite matches."""
    escaped = md(text)
    assert shown(escaped) == text
    for i, char in enumerate(escaped):
        if char == ":":
            assert escaped[i - 2 : i] == f"{WORD_JOINER}\\" and escaped[i + 1] == WORD_JOINER
    plain = escaped.replace("\\", "")
    for pattern in ("www.", "http:", "https:", "@", "->", "<-", "--"):
        assert pattern not in plain.replace(f"{WORD_JOINER}@", "")


def test_markdown_format_escapes_values_not_the_template():
    assert md_format("**Topic {id}:** {label}", id=3, label="*x*") == r"**Topic 3:** \*x\*"
    assert md_format("{p:.2f}", p=0.5) == r"0\.50"


@given(st.text())
def test_markdown_escape_never_leaves_a_bare_special_character(value):
    escaped = md(value)
    for i, char in enumerate(escaped):
        if char in "*_[]()!<>`$:#|~&\\" and not (i and escaped[i - 1] == "\\"):
            assert char == "\\" and escaped[i + 1 : i + 2] != "", escaped


def test_plot_escape_blocks_html_and_templates():
    assert (
        plot("<b>x</b> & %{customdata} %") == "&lt;b&gt;x&lt;/b&gt; &amp; &#37;{customdata} &#37;"
    )


def _markdown_argument_problems(path: Path) -> list[str]:
    """Markdown-capable calls whose text is not a literal, an escaping call or a parameter."""
    tree = ast.parse(path.read_text(), filename=str(path))
    problems: list[str] = []

    def allowed(node: ast.expr, params: set[str]) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            return name in SAFE_BUILDERS
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(allowed(e, params) for e in node.elts)
        return isinstance(node, ast.Name) and node.id in params  # a wrapper's own label

    def visit(node: ast.AST, params: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            params = params | {a.arg for a in node.args.args + node.args.kwonlyargs}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            text = node.args[0] if node.args else None
            if node.func.attr in MARKDOWN_CALLS and text is not None and not allowed(text, params):
                problems.append(f"{path.name}:{node.lineno} {node.func.attr}(...)")
            for keyword in node.keywords:
                if keyword.arg in {"help", "label", "body"} and not allowed(keyword.value, params):
                    problems.append(f"{path.name}:{node.lineno} {keyword.arg}=")
        for child in ast.iter_child_nodes(node):
            visit(child, params)

    visit(tree, set())
    return problems


@pytest.mark.parametrize("path", VIEW_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pages_never_build_markdown_from_data(path):
    assert _markdown_argument_problems(path) == []


def test_the_markdown_lint_catches_an_fstring(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        'import streamlit as st\ntitle = "x"\nst.subheader(f"Topic {title}")\nst.info(title)\n'
    )
    assert len(_markdown_argument_problems(bad)) == 2


def test_counted_puts_its_noun_in_number():
    from explorer.view.text import counted

    assert counted(1, "best match", "best matches") == "1 best match"
    assert counted(0, "paper", "papers") == "0 papers"
    assert counted(2048, "paper", "papers") == "2,048 papers"


def katex_spans(markdown: str) -> list[str]:
    """The bodies between unescaped dollars, as CommonMark reads them (a backslash escapes
    the next character, `\\\\` included): what Streamlit's Markdown hands KaTeX."""
    spans, current, i = [], None, 0
    while i < len(markdown):
        char = markdown[i]
        if char == "\\":
            if current is not None:
                current += markdown[i : i + 2]
            i += 2
            continue
        if char == "$":
            if current is None:
                current = ""
            else:
                spans.append(current)
                current = None
        elif current is not None:
            current += char
        i += 1
    return spans


@pytest.mark.parametrize(
    ("text", "math"),
    [
        (r"regret $O(\sqrt{T})$ bound", [r"O(\sqrt{T})"]),
        (r"$a_{i}^{2}$ and $$\sum_i x_i$$", ["a_{i}^{2}", r"\sum_i x_i"]),
        ("costs $5 and $10", []),  # pandoc's rule: a dollar amount is no math
        ("$ x$ and $x $", []),
        (r"$\{x\}$", [r"\{x\}"]),
        (r"$\href{u}{v}$ $\color{red}{x}$ $a \\ b$ ${x$", []),
        # Streamlit would not load its math plugin for these: the body would be Markdown.
        ("$$[click](https://evil.example)$$1", []),
        ("$\ufeff[click](https://evil.example)$", []),
        ("$[click](https://evil.example)\ufeff$", []),
        (r"$\!\!\!x$", []),  # negative space: text over text
        ("$" + r"\qquad" * 9 + "x$", []),
        ("$" + "{" * 7 + "x" + "}" * 7 + "$", []),
        (r"$\operatorname@{x}$", []),
    ],
)
def test_math_spans_are_rendered_only_when_allowed(text, math):
    shown = md_math(text)
    assert katex_spans(shown) == math


def test_adjacent_spans_stay_two_spans():
    assert katex_spans(md_math("$a$$b$")) == ["a", "b"]


@given(st.text(max_size=200))
def test_math_helper_leaves_nothing_but_allowed_math(value):
    shown = md_math(value)
    for body in katex_spans(shown):
        assert set(re.findall(r"\\([A-Za-z]+)", body)) <= MATH_COMMANDS
        assert "\n" not in body and len(body) <= MAX_MATH_CHARS
