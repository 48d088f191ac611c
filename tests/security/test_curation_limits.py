"""Curation's limits (explorer/curation/limits.py), met by an editor or by a history on disk.

Each test is an attack or an accident: an editor flooding changes (the per-session rate
limit, then the history's cap, which tells the host to compact), labels that would hide or
reorder text or carry undecodable bytes (from the CLI, bytes argv, and from the dashboard),
a history an older version wrote with such a label, a schema-1 curation.json, a log torn
by a crash mid-append or damaged in the middle, and `explorer curate NAME compact`.
No network: AppTest sessions of the real app and `explorer` subprocesses, on a private
copy of the planted build.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from explorer import artifacts, curation, node_ids
from explorer.curation import limits
from explorer.errors import InputError
from explorer.view.ui import editing
from tests.conftest import EDIT_KEY, ROOT, shown
from tests.security.conftest import rename, write_legacy
from tests.test_app import TIMEOUT, texts

CORPUS = "planted"
# Labels no one may store: undecodable bytes, only invisible or blank characters, bidi
# controls, other format or control characters, separators (as the CLI gets them: bytes).
REFUSED = {
    "undecodable": b"bad\xffbyte",
    "zero-width only": "\u200b\u200b".encode(),
    "blank": b"   ",
    "bidi override": "evil\u202etxt.exe".encode(),
    "bidi isolate": "a\u2066b\u2069".encode(),
    "direction mark": "x\u200fy".encode(),
    "arabic letter mark": "a\u061cb".encode(),
    "control": b"bell\x07",
    "line separator": "one\u2028two".encode(),
    "private use": "priv\ue000".encode(),
    "too long": b"x" * 201,
}


@pytest.fixture
def run(cache):
    return artifacts.open_run(cache, CORPUS)


@pytest.fixture
def visit(cache, monkeypatch):
    """A new session of the app on `cache`, opened with these query parameters."""
    from explorer.view.ui.data import _built, load_run

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    monkeypatch.setenv(editing.EDIT_KEY_ENV, EDIT_KEY)
    monkeypatch.delenv(editing.READ_ONLY_ENV, raising=False)
    monkeypatch.chdir(ROOT)
    load_run.clear()
    _built.clear()

    def open_app(page: str = "overview", **params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
        at.query_params.update({"corpus": CORPUS, **params})
        at.run()
        if page != "overview":
            at.switch_page(f"pages/{page}.py")
            at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    yield open_app
    load_run.clear()
    _built.clear()


def topics(run) -> list[str]:
    ids = set(run.table("papers")["topic_id"]) - {node_ids.OUTLIER_ID}
    return sorted(ids, key=node_ids.id_order)


def explorer(cache, *args: str | bytes) -> subprocess.CompletedProcess:
    """`explorer --cache-dir CACHE ARGS...` in a subprocess (bytes arguments pass as is)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(cache), *args]
    return subprocess.run(argv, capture_output=True, env=env, timeout=120, cwd=ROOT)


def errors(at: AppTest) -> str:
    return " ".join(shown(e.value) for e in at.error)


# --- floods ------------------------------------------------------------------------------


def test_a_flood_meets_the_rate_limit_and_the_history_cap(visit, cache, monkeypatch, clickable):
    monkeypatch.setattr(editing, "WRITES_PER_MINUTE", 5)
    monkeypatch.setattr(limits, "MAX_CHANGES", 3)
    at = visit("curate", edit_key=EDIT_KEY)
    box = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@"))
    node = box.options[0].split(":")[0]
    seen = []
    for i in range(7):
        seen.append(errors(rename(at, node, f"Flood {i}")))
    assert len(curation.read(cache, CORPUS)) == 3  # the cap held
    capped = [s for s in seen if "history is full" in s]
    assert len(capped) == 2 and f"explorer curate {CORPUS} compact" in capped[0]
    assert "At most 5 changes a minute" in seen[-1]  # then the session's rate limit


# --- labels ------------------------------------------------------------------------------


@pytest.mark.parametrize("label", REFUSED.values(), ids=REFUSED.keys())
def test_the_cli_refuses_labels_that_hide_or_break(cache, run, label):
    done = explorer(cache, "curate", CORPUS, "rename", topics(run)[0], label)
    assert done.returncode == 2, done.stdout
    message = done.stderr.decode("utf-8", "replace").strip()
    assert message.startswith("explorer: error:") and "label" in message and "\n" not in message
    assert curation.read(cache, CORPUS) == []


@pytest.mark.parametrize("label", REFUSED.values(), ids=REFUSED.keys())
def test_the_dashboard_path_refuses_labels_that_hide_or_break(cache, run, label):
    text = label.decode("utf-8", "surrogateescape")  # what a str of those bytes holds
    with pytest.raises(InputError, match="label"):
        curation.record(
            curation.EditTarget(cache, CORPUS, run.run_id, run.table("papers")),
            run.table("nodes"), "rename", source="dashboard", node=topics(run)[0], label=text,
        )  # fmt: skip
    assert curation.read(cache, CORPUS) == []


def test_the_curate_page_refuses_invisible_and_bidi_labels(visit, cache, clickable):
    at = visit("curate", edit_key=EDIT_KEY)
    node = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@"))
    node = node.options[0].split(":")[0]
    for label in ("\u200b\u200b", "evil\u202etxt.exe", "a\u2066b", "x\u200ey"):
        assert "label" in errors(rename(at, node, label))
    assert curation.read(cache, CORPUS) == []


def test_a_bad_label_already_in_the_history_does_not_break_a_page(visit, cache, run):
    first, second = topics(run)[:2]
    write_legacy(cache / CORPUS, run, {first: "bad\udcffbyte", second: "evil\u202eexe"})
    for page in ("overview", "topic_map", "topics", "papers", "trends"):
        at = visit(page)
        assert not at.exception, (page, [e.value for e in at.exception])
    at = visit("curate", edit_key=EDIT_KEY)
    assert any("not allowed" in shown(w.value) for w in at.warning)
    done = explorer(cache, "curate", CORPUS, "history")
    assert done.returncode == 0 and b"not applied" in done.stdout
    cur = curation.of_run(run)
    assert len(cur.refused) == 2 and cur.applied == 0
    assert not [label for label in cur.nodes["label"] if {"\udcff", "\u202e"} & set(label)]


# --- the history on disk -------------------------------------------------------------------


def test_a_schema_1_file_keeps_working_and_moves_to_the_log(visit, cache, run):
    first, second = topics(run)[:2]
    write_legacy(cache / CORPUS, run, {first: "Kept from schema one"})
    at = visit("topics", topic=first)
    assert "Kept from schema one" in texts(at)
    done = explorer(cache, "curate", CORPUS, "rename", second, "Written after")
    assert done.returncode == 0, done.stderr
    assert (cache / CORPUS / "curation.json.bak").is_file()
    assert not (cache / CORPUS / "curation.json").exists()
    lines = (cache / CORPUS / "curation.jsonl").read_text().splitlines()
    assert len(lines) == 3  # a header, the migrated change and the new one
    labels = curation.of_run(run).topics.set_index("topic_id")["label"]
    assert (labels[first], labels[second]) == ("Kept from schema one", "Written after")


def test_a_torn_last_line_is_ignored_and_the_next_write_repairs(cache, run):
    first, second = topics(run)[:2]
    assert explorer(cache, "curate", CORPUS, "rename", first, "Before the crash").returncode == 0
    with (cache / CORPUS / "curation.jsonl").open("a") as handle:
        handle.write('{"id": 2, "op": "rename", "node": "')  # the crash
    done = explorer(cache, "curate", CORPUS, "history")
    assert done.returncode == 0 and b"torn" in done.stderr and b"1 changes" in done.stdout
    assert explorer(cache, "curate", CORPUS, "rename", second, "After").returncode == 0
    assert [c["label"] for c in curation.read(cache, CORPUS)] == ["Before the crash", "After"]


def test_a_bad_line_in_the_middle_is_one_line_naming_file_and_line(visit, cache, run):
    for node in topics(run)[:3]:
        assert explorer(cache, "curate", CORPUS, "hide", node).returncode == 0
    log = cache / CORPUS / "curation.jsonl"
    lines = log.read_text().splitlines()
    lines[2] = "{not json"
    log.write_text("\n".join(lines) + "\n")
    done = explorer(cache, "curate", CORPUS, "history")
    message = done.stderr.decode().strip()
    assert done.returncode == 2 and "\n" not in message and f"{log}:3:" in message
    at = visit()
    assert "curation.jsonl:3:" in errors(at)  # the page says so, no traceback


def test_compact_keeps_the_state_and_the_old_history(cache, run):
    first, second = topics(run)[:2]
    for args in (("rename", first, "One"), ("rename", first, "Two"), ("hide", second),
                 ("undo",), ("rename", second, "Kept")):  # fmt: skip
        assert explorer(cache, "curate", CORPUS, *args).returncode == 0
    before = curation.of_run(run)
    old = (cache / CORPUS / "curation.jsonl").read_text()
    done = explorer(cache, "curate", CORPUS, "compact")
    assert done.returncode == 0, done.stderr
    assert [c["label"] for c in curation.read(cache, CORPUS)] == ["Two", "Kept"]
    kept = list((cache / CORPUS).glob("curation.jsonl.*.bak"))
    assert len(kept) == 1 and kept[0].read_text() == old
    after = curation.of_run(run)
    assert after.nodes.equals(before.nodes) and after.papers.equals(before.papers)
