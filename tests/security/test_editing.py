"""Only the host edits (explorer/view/ui/editing.py), in AppTest sessions of the real app.

Each test is an attack or a limit: a visitor without the key, with a wrong key, guessing
many keys from one source, replaying after sign-out or expiry, an editor flooding
changes, a published folder. Before the gate, the Curate page was in every visitor's
navigation and every write was recorded.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer import curation
from explorer.artifacts import PUBLISH_MARKER
from explorer.view.ui import editing
from tests.conftest import EDIT_KEY, ROOT, shown
from tests.security.conftest import rename
from tests.test_app import TIMEOUT

CORPUS = "planted"
WRONG = "not-the-host-key-at-all-0123456789"


@pytest.fixture
def visit(cache, monkeypatch):
    """A new browser session of the app on `cache` (server key: EDIT_KEY unless the test
    unsets it), opened with these query parameters."""
    from explorer.view.ui.data import load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.setenv(editing.EDIT_KEY_ENV, EDIT_KEY)
    monkeypatch.delenv(editing.READ_ONLY_ENV, raising=False)
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(editing, "SOURCES", editing.Attempts(editing.SOURCE_TRIES, 900))
    load_run.clear()

    def open_app(**params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
        at.query_params.update(params)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    yield open_app
    load_run.clear()


def can_curate(at: AppTest) -> bool:
    """Whether the session's navigation has the Curate page (switching to an omitted
    page fails: it is not hidden, it is not there)."""
    try:
        at.switch_page("pages/curate.py")
    except ValueError as exc:
        assert "Could not find a navigation page" in str(exc)
        return False
    at.run()
    return "Curate" in [t.value for t in at.title]


def errors(at: AppTest) -> str:
    return " ".join(shown(e.value) for e in at.error)


def share_link(at: AppTest) -> str:
    """The sidebar's "Link to this view" (a code box)."""
    (link,) = [c.value for c in at.sidebar.code]
    return link


def test_without_a_key_nobody_edits_and_nobody_is_asked(visit, monkeypatch):
    monkeypatch.delenv(editing.EDIT_KEY_ENV)
    at = visit(edit_key=EDIT_KEY)  # even the right key means nothing on a read-only server
    assert not can_curate(at)
    assert not [p for p in at.sidebar.get("popover") if "Host sign-in" in str(p.proto)]


def test_a_visitor_without_the_key_has_no_curate_page(visit):
    at = visit(corpus=CORPUS)
    assert not can_curate(at)
    assert "edit_key" not in share_link(at)


def test_the_link_signs_the_host_in_and_leaves_the_address(visit):
    at = visit(corpus=CORPUS, edit_key=EDIT_KEY)
    assert "edit_key" not in at.query_params
    assert "edit_key" not in share_link(at) and EDIT_KEY not in share_link(at)
    assert can_curate(at)
    assert EDIT_KEY not in share_link(at)


def test_a_wrong_key_is_refused_and_guesses_are_limited_per_session(visit):
    at = visit(corpus=CORPUS, edit_key=WRONG)
    assert "edit_key" not in at.query_params  # a wrong key leaves the URL too
    assert "Wrong edit key" in errors(at) and not can_curate(at)
    for _ in range(editing.SESSION_TRIES - 1):
        at.query_params["edit_key"] = WRONG
        at.run()
    at.query_params["edit_key"] = EDIT_KEY  # the right key, too late for this session
    at.run()
    assert "Too many wrong keys" in errors(at)
    assert not can_curate(at)
    assert can_curate(visit(edit_key=EDIT_KEY))  # another session (same source) still can


def test_guesses_are_limited_per_source_across_sessions(visit):
    for _ in range(editing.SOURCE_TRIES):  # every session one guess: the source's limit
        visit(edit_key=WRONG)
    at = visit(edit_key=EDIT_KEY)
    assert "Too many wrong keys" in errors(at) and not can_curate(at)


def test_sign_out_and_expiry_end_the_editing_session(visit, cache, monkeypatch, clickable):
    at = visit(corpus=CORPUS, edit_key=EDIT_KEY)
    at.sidebar.button(key="editor_sign_out").click().run()
    assert not can_curate(at)

    at = visit(corpus=CORPUS, edit_key=EDIT_KEY)
    assert can_curate(at)
    later = editing.time.time() + editing.SESSION_HOURS * 3600 + 1
    monkeypatch.setattr(editing.time, "time", lambda: later)
    at.run()  # on the Curate page, past the session's end: the page refuses to draw
    assert "Rename" not in [b.label for b in at.button]
    assert not can_curate(at)
    assert not curation.path(cache, CORPUS).exists()


def test_an_editor_flooding_changes_meets_the_rate_limit(visit, cache, monkeypatch, clickable):
    monkeypatch.setattr(editing, "WRITES_PER_MINUTE", 3)
    at = visit(corpus=CORPUS, edit_key=EDIT_KEY)
    assert can_curate(at)
    node = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@")).options[0]
    node = node.split(":")[0]
    for i in range(5):
        rename(at, node, f"Flood {i}")
    assert "At most 3 changes a minute" in errors(at)
    assert len(curation.read(cache, CORPUS)) == 3


def test_a_write_is_refused_once_the_key_is_withdrawn(visit, cache, monkeypatch, clickable):
    """The gate is asked at the moment of writing, not when the page was drawn."""
    at = visit(corpus=CORPUS, edit_key=EDIT_KEY)
    assert can_curate(at)
    node = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@")).options[0]
    monkeypatch.setenv(editing.READ_ONLY_ENV, "1")  # as `explorer serve` without --edit
    box = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@"))
    box.set_value(node.split(":")[0])
    at.text_input(key="cur_label").input("Too late")
    next(b for b in at.button if b.label == "Rename").click().run()
    assert not curation.path(cache, CORPUS).exists()


def test_a_published_folder_never_edits(visit, cache, monkeypatch, tmp_path):
    app_dir = tmp_path / "site"
    app_dir.mkdir()
    (app_dir / PUBLISH_MARKER).write_text("{}", encoding="utf-8")
    assert editing.host_key(app_dir) is None  # with EXPLORER_EDIT_KEY set
    assert editing.host_key(ROOT) == EDIT_KEY


def test_a_key_from_secrets_toml_works_and_a_short_one_is_ignored(visit, monkeypatch):
    monkeypatch.delenv(editing.EDIT_KEY_ENV)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.secrets["explorer"] = {"edit_key": EDIT_KEY}
    at.query_params["edit_key"] = EDIT_KEY
    at.run()
    assert can_curate(at)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.secrets["explorer"] = {"edit_key": "short"}
    at.query_params["edit_key"] = "short"
    at.run()
    assert not can_curate(at)
