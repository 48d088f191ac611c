"""Bad input through the CLI, unsafe loading, the build lock, tampered runs in the UI,
and builds killed with SIGKILL at several stages."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

from explorer import artifacts
from explorer.build.pipeline import build
from explorer.cli import main
from explorer.errors import BuildLockedError
from explorer.names import latest_run_id
from tests.conftest import ROOT, SEED_ARGS, SEED_DIR, build_config, shown


def snapshot(cache: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in cache.rglob("*")} if cache.exists() else {}


def _write(tmp: Path, name: str, content: str | bytes) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


BAD_INPUTS = {
    "missing": (None, r"missing\.txt: no such file or directory"),
    "empty": (("e.txt", ""), r"e\.txt: file is empty"),
    "blank lines": (("b.txt", "\n \n\t\n"), r"b\.txt: file is empty"),
    "binary": (("bin.txt", b"\x89PNG\r\n\x1a\n\x00\x00"), r"bin\.txt: looks like a binary file"),
    "not utf-8": (("l.txt", "t\n\ncaf\xe9".encode("latin-1")), r"l\.txt: line 3: not valid UTF-8"),
    "malformed json": (
        ("icml2019.json", '[{"abstract": "x",}]'),
        r"icml2019\.json: line 1, column \d+: invalid JSON",
    ),
    "json wrong shape": (
        ("icml2019.json", '{"papers": []}'),
        r"expected a JSON array of paper objects",
    ),
    "csv without text column": (("p.csv", "body,name\nx,y\n"), r"p\.csv: no abstract column found"),
    "too small": (
        ("s.txt", "List 2020\n\nOne abstract.\n\nTwo abstract.\n"),
        r"at least 10 are needed",
    ),
    "empty folder": (("d/readme.md", "x"), r"no readable input files"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_one_line_nonzero_and_cache_untouched(case, tmp_path, capsys):
    spec, message = BAD_INPUTS[case]
    cache = tmp_path / "cache"
    (cache / "keep").mkdir(parents=True)
    before = snapshot(cache)
    if spec is None:
        target = tmp_path / "missing.txt"
    else:
        target = _write(tmp_path / "in", *spec)
        if case == "empty folder":
            target = target.parent
    code = main(["--cache-dir", str(cache), "build", str(target), "--name", "c", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("explorer: error: "), err
    assert re.search(message, err), err
    assert snapshot(cache) == before


def test_skippable_problems_are_counted_not_fatal(tmp_path):
    from explorer.build.sources import read_inputs

    abstracts = [f"Abstract number {i} about topic {i % 3}." for i in range(12)]
    entries = [{"id": str(i), "title": "T", "abstract": a} for i, a in enumerate(abstracts)]
    entries.append({"id": "99", "title": "No abstract"})
    entries.append({"id": "100", "title": "Dup", "abstract": abstracts[0]})
    f = _write(tmp_path, "icml2019.json", json.dumps(entries))
    g = _write(
        tmp_path, "icml2020.json", json.dumps([{"id": "1", "abstract": abstracts[1] + "  "}])
    )
    long = "word " * 5000
    h = _write(tmp_path, "big.jsonl", json.dumps({"abstract": long}))
    corpus = read_inputs([f, g, h])
    assert len(corpus.skipped) == 1 and "id 99" in corpus.skipped[0]
    assert len(corpus.merged) == 2  # within a file and across files
    big = corpus.papers[-1]
    assert len(big.abstract) == len(long.strip()) and len(big.text) == 20_000


def test_no_unsafe_loading_anywhere_in_the_code():
    patterns = [
        r"pickle\.loads?\(",
        r"joblib\.load\(",
        r"allow_pickle\s*=\s*True",
        r"cloudpickle",
        r"dill\.",
    ]
    torch_load = re.compile(r"torch\.load\((?![^)]*weights_only\s*=\s*True)")
    offenders = []
    for path in [
        *ROOT.glob("*.py"),
        *ROOT.glob("explorer/**/*.py"),
        *ROOT.glob("pages/*.py"),
        *(p for p in ROOT.glob("bench/**/*.py") if not p.is_relative_to(ROOT / "bench" / "work")),
    ]:  # bench/work: benchmark scratch (venvs, published copies), never committed
        text = path.read_text(encoding="utf-8")
        for pattern in patterns:
            if re.search(pattern, text):
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
        if torch_load.search(text):
            offenders.append(f"{path.relative_to(ROOT)}: torch.load without weights_only=True")
        if re.search(r"unsafe_allow_html\s*=\s*True", text):
            offenders.append(f"{path.relative_to(ROOT)}: unsafe_allow_html")
    assert offenders == []


def test_streamlit_config_is_production_safe():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["headless"] is True
    assert config["server"]["maxUploadSize"] <= 200
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["toolbarMode"] == "viewer"
    assert config["browser"]["gatherUsageStats"] is False


@pytest.mark.realbuild
def test_second_build_of_a_locked_corpus_is_refused(tmp_path):
    corpus_dir = tmp_path / "seed"
    corpus_dir.mkdir()
    with (corpus_dir / ".lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(BuildLockedError, match="another build of corpus 'seed' is running"):
            build(
                build_config("seed", [SEED_DIR]),
                cache_dir=tmp_path,
                progress=False,
                log=lambda m: None,
            )
    assert [p.name for p in corpus_dir.iterdir()] == [".lock"]


def test_tampered_run_shows_a_message_not_a_traceback(seed_cache, tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    from explorer.view.ui.data import load_run

    shutil.copytree(seed_cache / "seed", tmp_path / "seed")
    run_id = latest_run_id(tmp_path, "seed")
    target = tmp_path / "seed" / run_id / "topics.parquet"
    target.write_bytes(target.read_bytes() + b"x")
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    load_run.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert any(
        "changed since it was built; rebuild it with: explorer build" in shown(e.value)
        for e in at.error
    )
    # The page stopped, not the run: the sidebar's link is still drawn after it.
    assert any("Link to this view" in shown(c.value) for c in at.sidebar.caption)


@pytest.mark.parametrize("stage", ["Embedding", "Fitting topics", "Writing artifacts"])
def test_sigkill_mid_build_keeps_the_previous_run(stage, seed_cache, tmp_path, capsys):
    """Kill a real build subprocess when it reaches `stage`; the old run must survive intact."""
    import shutil

    shutil.copytree(seed_cache / "seed", tmp_path / "seed")
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    old = latest_run_id(tmp_path, "seed")
    # A new text makes the embed stage real work, so every stage is reached.
    extra = tmp_path / "extra.txt"
    extra.write_text("ICML 2025 extra\n\nA new abstract on kill-safe builds of topic models.\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer.cli", "--cache-dir", str(tmp_path), "build", str(SEED_DIR), str(extra),
         "--name", "seed", "--no-progress", "--min-topic-size", "4", *SEED_ARGS],
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    seen = ""
    while stage not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert stage in seen, seen
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert latest_run_id(tmp_path, "seed") == old
    artifacts.open_run(tmp_path, "seed")  # still complete and verified
    assert main(["--cache-dir", str(tmp_path), "list"]) == 0
    assert capsys.readouterr().out.startswith(f"seed\t{old}")
    leftovers = [p.name for p in (tmp_path / "seed").iterdir() if p.name.startswith(".tmp-")]
    # The next build cleans whatever the killed one left and publishes normally.
    result = build(
        build_config("seed", [SEED_DIR, extra], min_topic_size=4),
        cache_dir=tmp_path, progress=False, log=lambda m: None,
    )  # fmt: skip
    assert not result.reused and result.run.run_id != old
    assert not [p for p in (tmp_path / "seed").iterdir() if p.name.startswith(".tmp-")]
    assert stage != "Writing artifacts" or leftovers, (
        "a kill while writing leaves a temp dir to clean"
    )


def test_dashboard_serves_the_old_run_until_the_new_one_is_published(
    seed_cache, tmp_path, monkeypatch
):
    import shutil

    from streamlit.testing.v1 import AppTest

    shutil.copytree(seed_cache / "seed", tmp_path / "seed")
    shutil.copytree(seed_cache / "embeddings", tmp_path / "embeddings")
    old = latest_run_id(tmp_path, "seed")
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()

    def shown_run() -> str:
        table = at.dataframe[-1].value
        return str(table.set_index("setting").loc["run", "value"])

    assert shown_run() == old
    # An unpublished (temporary) run next to it changes nothing.
    (tmp_path / "seed" / ".tmp-half-written").mkdir()
    at.run()
    assert shown_run() == old
    new = build(
        build_config("seed", [SEED_DIR], min_topic_size=4),
        cache_dir=tmp_path, progress=False, log=lambda m: None,
    ).run.run_id  # fmt: skip
    at.run()
    assert new != old and shown_run() == new
