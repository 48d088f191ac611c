"""Bidirectional controls (U+202A-U+202E, U+2066-U+2069, LRM, RLM, ALM) in corpus text
and curated labels reach no displayed element: a title cannot show one word and hold
another (`gnp.exe` behind a right-to-left override reads `exe.png`).

Every element AppTest receives for the Papers, Topics and Topic map pages (Markdown, text,
dataframe cells in their Arrow bytes, plotly specs with their JSON escapes, widget
options) is checked; the planted text itself is shown (its visible mark is there).
Before the fix the controls reached the page as stored.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.artifacts import open_run
from tests.conftest import ROOT
from tests.security.conftest import BIDI, BIDI_MARK, HOSTILE

pytestmark = pytest.mark.realbuild


@pytest.fixture
def hostile_app(hostile_text_cache, monkeypatch):
    from explorer.view.ui.data import load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(hostile_text_cache))
    monkeypatch.chdir(ROOT)
    load_run.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    load_run.clear()


@pytest.fixture(scope="module")
def planted(hostile_text_cache) -> tuple[str, str]:
    """The planted paper's id and topic; the build kept its controls."""
    papers = open_run(hostile_text_cache, HOSTILE).table("papers")
    row = papers[papers["title"].str.contains(BIDI_MARK)].iloc[0]
    assert all(c in row["title"] and c in row["abstract"] for c in BIDI)
    return str(row["paper_id"]), str(row["topic_id"])


def shown_bytes(at: AppTest) -> bytes:
    """Every element and block the app sent, serialised (Arrow tables included)."""
    out, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        todo.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(proto.SerializeToString())
    return b"\n".join(out)


def carried_controls(data: bytes) -> list[str]:
    """The controls in `data`, raw (UTF-8) or JSON-escaped (\\u202e)."""
    lowered = data.lower()
    return [
        f"U+{ord(c):04X}"
        for c in BIDI
        if c.encode() in data or f"\\u{ord(c):04x}".encode() in lowered
    ]


def _page(at: AppTest, page: str, **params: str) -> bytes:
    at.run()
    at.switch_page(f"pages/{page}.py")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    data = shown_bytes(at)
    assert BIDI_MARK.encode() in data, "the planted text is not on the page"
    return data


def test_papers_page_shows_no_bidi_control(hostile_app, planted):
    paper, _ = planted
    assert carried_controls(_page(hostile_app, "papers", paper=paper)) == []


def test_topics_page_shows_no_bidi_control(hostile_app, planted):
    _, topic = planted
    assert carried_controls(_page(hostile_app, "topics", topic=topic)) == []


def test_topic_map_shows_no_bidi_control(hostile_app, planted):
    assert carried_controls(_page(hostile_app, "topic_map")) == []


def test_the_escaping_helpers_drop_the_controls():
    from explorer.view.text import md, plot

    for value in (f"a{BIDI}b", BIDI):
        assert carried_controls(md(value).encode()) == []
        assert carried_controls(plot(value).encode()) == []
