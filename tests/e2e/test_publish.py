"""`explorer publish`: the folder serves every page from a venv holding only its
requirements.txt (no torch, no sentence-transformers), semantic search included (the
model's ONNX export), and the Dockerfile's entry point and health check work as written
(run here without Docker: no engine on this machine)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from explorer import cli
from explorer.hosting.processes import free_port
from tests.e2e.conftest import (
    ARTIFACTS,
    no_exception,
    start_server,
    stop_server,
    wait_for_app,
)

PAGES = ["", "topic_map", "topics", "trends", "papers"]
BUILD_PACKAGES = ("torch", "sentence_transformers", "bertopic", "umap", "hdbscan", "sklearn")


@pytest.fixture(scope="session")
def published(seed_cache, tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("published") / "seed-site"
    assert cli.main(["--cache-dir", str(seed_cache), "publish", "seed", str(dest)]) == 0
    return dest


@pytest.fixture(scope="session")
def viewer_python(published, tmp_path_factory) -> str:
    """A fresh venv with only the published requirements (pip's cache makes it quick)."""
    env_dir = tmp_path_factory.mktemp("viewer-venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    done = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "-r", str(published / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        message = f"could not install the viewer requirements: {done.stderr[-800:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


def test_folder_contents_and_requirements(published):
    names = {p.name for p in published.iterdir()}
    assert {"app.py", "pages", "explorer", "cache", "requirements.txt", "README.md"} <= names
    assert {"Dockerfile", ".streamlit"} <= names
    requirements = (published / "requirements.txt").read_text()
    assert re.search(r"^streamlit==", requirements, re.M)
    assert not re.search(r"torch|sentence|bertopic|umap|hdbscan", requirements)
    assert re.search(r"^onnxruntime==", requirements, re.M)
    assert re.search(r"^tokenizers==", requirements, re.M)
    (graph,) = (published / "cache" / "models" / "onnx").glob("*/model.onnx")
    for name in ("model.onnx.data", "tokenizer.json", "encoder.json"):
        assert (graph.parent / name).is_file()
    assert not (published / "explorer" / "pipeline.py").exists()
    readme = (published / "README.md").read_text()
    assert "main file `app.py`" in readme
    assert "works out of the box" in readme
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in readme


def test_viewer_env_has_no_build_packages(viewer_python):
    for name in BUILD_PACKAGES:
        probe = subprocess.run([viewer_python, "-c", f"import {name}"], capture_output=True)
        assert probe.returncode != 0, f"{name} is importable in the viewer-only environment"
    probe = subprocess.run([viewer_python, "-c", "import onnxruntime, tokenizers"])
    assert probe.returncode == 0  # what semantic search runs on instead


def test_published_folder_serves_every_page_viewer_only(published, viewer_python, browser):
    proc, url = start_server(published / "cache", python=viewer_python, app_dir=published)
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        for name in PAGES:
            page.goto(f"{url}/{name}?corpus=seed")
            wait_for_app(page)
            no_exception(page)
            assert page.locator('[data-testid="stMain"] h1').count() >= 1
        # Semantic search works without the model packages: the ONNX export embeds the query.
        page.goto(f"{url}/papers?corpus=seed&ask=spiking+neural+networks")
        wait_for_app(page)
        no_exception(page)
        assert page.get_by_text("Keyword (TF-IDF) ranking").count() == 0
        assert page.get_by_text("(score: cosine similarity)").count() == 1
        page.screenshot(path=str(ARTIFACTS / "published-semantic-search.png"), full_page=True)
        context.close()
    finally:
        stop_server(proc)


def _instruction(dockerfile: str, keyword: str) -> list[str]:
    """The JSON-array (exec form) argument of CMD or HEALTHCHECK ... CMD."""
    text = dockerfile.replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if ln.startswith(keyword))
    return json.loads(line[line.index("CMD") + 3 :].strip())


def test_dockerfile_entry_point_and_healthcheck_outside_docker(published, viewer_python):
    dockerfile = (published / "Dockerfile").read_text()
    assert re.search(r"^FROM python:[\d.]+-slim$", dockerfile, re.M)
    assert re.search(r"^USER (?!root)\w+", dockerfile, re.M)
    port = str(free_port())
    command = [a.replace("8501", port) for a in _instruction(dockerfile, "CMD")]
    health = [a.replace("8501", port) for a in _instruction(dockerfile, "HEALTHCHECK")]
    bin_dir = str(Path(viewer_python).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "EXPLORER_CACHE_DIR": str(published / "cache"),
    }
    proc = subprocess.Popen(
        command, cwd=published, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            probe = subprocess.run(health, cwd=published, env=env, capture_output=True)
            if probe.returncode == 0:
                break
            assert time.monotonic() < deadline, probe.stderr.decode()[-500:]
            time.sleep(1)
    finally:
        stop_server(proc)
    # And the health check fails when nothing serves (it is not a check that cannot fail).
    assert subprocess.run(health, env=env, capture_output=True).returncode != 0


def test_pip_install_dot_is_the_viewer_and_build_extra_the_pipeline():
    import tomllib

    from tests.conftest import ROOT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {re.split(r"[<>=\[ ]", d)[0] for d in project["dependencies"]}
    build = {re.split(r"[<>=\[ ]", d)[0] for d in project["optional-dependencies"]["build"]}
    assert base == {
        "streamlit",
        "plotly",
        "pandas",
        "pyarrow",
        "numpy",
        "onnxruntime",
        "tokenizers",
    }
    assert {"bertopic", "sentence-transformers", "umap-learn", "hdbscan", "torch", "onnx"} <= build
    from explorer.hosting.publish_texts import VIEWER_PACKAGES

    assert set(VIEWER_PACKAGES) == base  # a published folder installs what `pip install .` does


async def _two_visits(url: str) -> set[str]:
    """Two browsers at once through the proxy; both run the page and filter it."""
    from tests.e2e.conftest import load_and_filter, proxied_visit

    async with proxied_visit(url, "seed") as (first_jar, first, first_client):
        await load_and_filter(first_client)
        async with proxied_visit(url, "seed") as (second_jar, second, second_client):
            await load_and_filter(second_client)
    assert (first_jar["SERVERID"], second_jar["SERVERID"]) == (first, second)
    return {first, second}


def test_published_folder_serves_with_two_workers_behind_haproxy(
    published, viewer_python, tmp_path
):
    """`python serve.py --workers 2` in the folder, from the viewer-only venv: sessions reach
    both workers through haproxy, and SIGTERM stops it all."""
    import signal

    from tests.e2e.conftest import (
        alive,
        descendants,
        haproxy_or_skip,
        kill_tree,
        run_async,
        start_serve,
    )

    haproxy_or_skip()
    assert "python serve.py --workers" in (published / "README.md").read_text()
    port = str(free_port())
    command = [viewer_python, "serve.py", "--workers", "2", "--port", port]
    proc, url = start_serve(command, cwd=published, cache=None, log=tmp_path / "serve.log")
    try:
        assert run_async(_two_visits(url)) == {"w1", "w2"}
        tree = descendants(proc.pid)
        assert len(tree) == 3  # haproxy and two workers
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert alive(tree) == set(), "processes left running after SIGTERM"
    finally:
        kill_tree(proc)
