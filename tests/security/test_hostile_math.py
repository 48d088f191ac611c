"""Math in corpus text is rendered only when it is harmless (issue 52, item 3): a paper
whose abstract carries TeX that could link, style, stretch or loop the page shows it as
text, while its plain math is rendered. Checked on the Markdown the Papers page sends (the
KaTeX in the browser renders only what is sent between unescaped dollars)."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from explorer.artifacts import open_run
from explorer.view.text import MATH_COMMANDS, md_math
from tests.conftest import ROOT
from tests.security.conftest import HOSTILE, HOSTILE_MATH, MATH_MARK
from tests.test_text import katex_spans

pytestmark = pytest.mark.realbuild


@pytest.mark.parametrize("span", HOSTILE_MATH)
def test_each_hostile_span_is_shown_as_text(span):
    assert katex_spans(md_math(f"before {span} after")) == []


def test_the_papers_page_renders_plain_math_and_no_hostile_math(hostile_text_cache, monkeypatch):
    from explorer.view.ui.data import load_run

    papers = open_run(hostile_text_cache, HOSTILE).table("papers")
    paper = str(papers[papers["abstract"].str.contains(MATH_MARK)].iloc[0]["paper_id"])
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(hostile_text_cache))
    monkeypatch.chdir(ROOT)
    load_run.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/papers.py")
    at.query_params["paper"] = paper
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [m.value for m in at.markdown] + [h.value for h in at.subheader]
    abstract = next(text for text in shown if MATH_MARK in text)
    spans = katex_spans(abstract)
    assert r"O(\sqrt{T})" in spans  # the plain one is rendered
    for body in spans:  # and nothing else reaches KaTeX
        commands = set(re.findall(r"\\([A-Za-z]+)", body))
        assert commands <= MATH_COMMANDS, body
    load_run.clear()
