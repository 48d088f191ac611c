"""CSV injection: corpus text or a curated label that looks like a spreadsheet formula
(`=HYPERLINK(...)` leaking a row, `+cmd|...` running a program) reaches no CSV the project
writes as a live formula: `explorer export`, the Papers download and the Topics table
download all quote it (a leading `'`, OWASP's advice), and numbers stay numbers.

Before the fix each of them wrote the planted cells as they were.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from explorer import cli
from tests.conftest import ROOT
from tests.security.conftest import FORMULAS, HOSTILE

pytestmark = pytest.mark.realbuild

STARTS = ("=", "+", "-", "@", "\t", "\r")


def live_formulas(text: str) -> list[str]:
    """Every cell of the CSV `text` that a spreadsheet would evaluate: it starts like a
    formula and is not a plain number."""
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    return [c for c in cells if c.startswith(STARTS) and not _is_number(c)]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def quoted_payloads(text: str) -> set[str]:
    """The planted formulas found in the CSV, quoted (leading whitespace as stored may be
    trimmed by the reader of the inputs: matched on the formula's visible part)."""
    cells = {cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row}
    return {f for f in FORMULAS if any(c.startswith("'") and f.strip() in c for c in cells)}


@pytest.fixture
def downloads(hostile_text_cache, monkeypatch):
    """An AppTest on the hostile corpus and a dict file name -> CSV text that collects what
    every download button on a page would send (eager data and deferred callables alike)."""
    from explorer.view.ui.data import load_run

    files: dict[str, str] = {}
    real_load, real_defer = MemoryMediaFileStorage.load_and_get_id, MediaFileManager.add_deferred

    def load(self, data, mimetype, kind, filename=None):
        if filename and filename.endswith(".csv"):
            files[filename] = data.decode() if isinstance(data, bytes) else data
        return real_load(self, data, mimetype, kind, filename)

    def defer(self, make, mimetype, coordinates, file_name=None, **kw):
        if file_name and file_name.endswith(".csv"):
            data = make()
            files[file_name] = data.decode() if isinstance(data, bytes) else data
        return real_defer(self, make, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", load)
    monkeypatch.setattr(MediaFileManager, "add_deferred", defer)
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(hostile_text_cache))
    monkeypatch.chdir(ROOT)
    load_run.clear()
    yield AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), files
    load_run.clear()


def _page(at: AppTest, page: str) -> AppTest:
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_explorer_export_quotes_every_formula(hostile_text_cache, tmp_path):
    out = tmp_path / "papers.csv"
    assert (
        cli.main(["--cache-dir", str(hostile_text_cache), "export", HOSTILE, "--out", str(out)])
        == 0
    )
    text = out.read_text(encoding="utf-8")
    assert live_formulas(text) == []
    assert quoted_payloads(text) == set(FORMULAS)  # every planted cell is there, as text
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    # Ids stay plain numbers (the outliers' "-1" included, when the build has outliers:
    # `test_numbers_stay_numbers` plants one).
    assert all(re.fullmatch(r"-?\d+", r["topic_id"]) for r in rows)


def test_papers_download_quotes_every_formula(downloads):
    at, files = downloads
    _page(at, "papers")
    ((name, text),) = ((n, t) for n, t in files.items() if "topics" not in n)
    assert live_formulas(text) == []
    assert quoted_payloads(text) == set(FORMULAS), name


def test_topics_table_download_quotes_every_formula(downloads):
    at, files = downloads
    _page(at, "topics")
    text = files[f"{HOSTILE}-topics.csv"]
    assert live_formulas(text) == []
    assert FORMULAS[0] in quoted_payloads(text)  # the curated label
    ids = [row["topic_id"] for row in csv.DictReader(io.StringIO(text, newline=""))]
    assert ids and all(_is_number(i) for i in ids)  # ids stay numbers


def test_numbers_stay_numbers():
    import pandas as pd

    from explorer.view.text import csv_text

    frame = pd.DataFrame({"id": ["-1", "+2", "-0.5", "=1"], "n": [-1, -2, 3, 4]})
    rows = list(csv.reader(io.StringIO(csv_text(frame))))
    assert rows[1:] == [["-1", "-1"], ["+2", "-2"], ["-0.5", "3"], ["'=1", "4"]]
