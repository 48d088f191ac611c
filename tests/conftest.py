"""Shared fixtures: tiny input files written by the tests, and real builds of the seed
corpus and of a corpus with planted topics.

Every real build the tests make uses BUILD_SEED: EXPLORER_TEST_SEED (read by the tests
only, never by the program), by default the program's own default seed. `build_config`
and `SEED_ARGS` carry it into in-process builds and command lines; a guard (below) fails
any test whose build runs with another seed, and any build in a test not marked
`realbuild`. Run the real builds under another seed with
`EXPLORER_TEST_SEED=7 pytest -m realbuild`: no test may depend on how one seed (or one
host's rounding) happened to group the papers.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from explorer.build.topics import DEFAULT_SEED

ROOT = Path(__file__).resolve().parents[1]
SEED_DIR = ROOT / "data" / "icml2025"
SHARED = ROOT.parent / "shared" / "data"

# One numba cache for the whole session: UMAP's kernels compile once, not once per build.
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / "cache" / "numba"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SEED_ENV = "EXPLORER_TEST_SEED"
BUILD_SEED = int(os.environ.get(SEED_ENV) or DEFAULT_SEED)
# Test builds embed in float32 unless a test asks for another precision: `auto` times
# every encoder once per cache folder (build/encoder_choice.py), seconds each fresh test
# cache would pay; tests/test_encoder_choice.py plans the seed corpus with `auto`.
PRECISION_ARGS = ("--embedding-precision", "float32")
SEED_ARGS = ("--seed", str(BUILD_SEED), *PRECISION_ARGS)  # for `explorer build` command lines
# The host's edit key in tests (explorer/view/ui/editing.py): servers and AppTests that
# the host edits get it in EXPLORER_EDIT_KEY, and the host presents it as ?edit_key=.
EDIT_KEY = "test-host-edit-key-0123456789abcdef"
# Session fixtures that hold a real build: a test using any of them is marked `realbuild`.
REAL_BUILD_FIXTURES = {"seed_cache", "planted_cache"}


def build_config(name: str, inputs, **options):
    """A BuildConfig for a test's real build: BUILD_SEED and float32 (PRECISION_ARGS says
    why) unless a test names others."""
    from explorer.build.config import BuildConfig

    options.setdefault("seed", BUILD_SEED)
    options.setdefault("embedding_precision", "float32")
    return BuildConfig(name=name, inputs=tuple(str(i) for i in inputs), **options)


# --- the seed guard ----------------------------------------------------------------------


class SeedGuardError(AssertionError):
    """A build a test made with another seed than BUILD_SEED, or outside `realbuild`."""


_current: dict[str, pytest.Item | None] = {"item": None}


def _allowed_seeds(item: pytest.Item | None) -> set[int]:
    """BUILD_SEED, and any seeds a test names with @pytest.mark.build_seeds(...)."""
    seeds = {BUILD_SEED}
    if item is not None:
        for mark in item.iter_markers("build_seeds"):
            seeds |= set(mark.args)
    return seeds


def _check_build(seed: int, what: str) -> None:
    item = _current["item"]
    where = item.nodeid if item is not None else "(outside a test)"
    if seed not in _allowed_seeds(item):
        raise SeedGuardError(
            f"{where}: {what} runs with seed {seed}, not {SEED_ENV}={BUILD_SEED}: "
            "use tests.conftest.build_config / SEED_ARGS"
        )
    if item is not None and item.get_closest_marker("realbuild") is None:
        raise SeedGuardError(f"{where}: {what} makes a real build: mark the test `realbuild`")


def _explorer_build_seed(args) -> int | None | bool:
    """For a command line that runs `explorer ... build`: the --seed it passes (None: none);
    False for any other command."""
    todo = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    words: list[str] = []
    while todo:  # a token with spaces is a shell script (sh -c "..."): its words too
        token = todo.pop(0)
        token = os.fsdecode(token) if isinstance(token, (bytes, os.PathLike)) else str(token)
        try:
            split = shlex.split(token) if " " in token else [token]
        except ValueError:
            split = [token]
        if split == [token]:
            words.append(token)
        else:
            todo[:0] = split
    runs_explorer = any(w == "explorer.cli" or Path(w).name == "explorer" for w in words)
    if not (runs_explorer and "build" in words):
        return False
    seeds = [words[i + 1].rstrip(";&|") for i, w in enumerate(words[:-1]) if w == "--seed"]
    return int(seeds[-1]) if seeds and seeds[-1].lstrip("-").isdigit() else None


@pytest.fixture(scope="session", autouse=True)
def seed_guard():
    """Every build in this session runs with BUILD_SEED: in-process builds are checked at
    their plan (pipeline.plan_build: the config's seed, not the refits' seeds of
    `--stability`, which the plan never sees), `explorer build` subprocesses at their
    command line. A test building with another seed, or building without the `realbuild`
    marker, fails."""
    from explorer.build import pipeline

    real_plan = pipeline.plan_build
    real_init = subprocess.Popen.__init__

    def plan_build(config, *args, **kwargs):
        plan = real_plan(config, *args, **kwargs)  # inputs that cannot be read build nothing
        _check_build(config.seed, f"the build of {config.name!r}")
        return plan

    def popen_init(self, args, *rest, **kwargs):
        seed = _explorer_build_seed(args)
        if seed is not False:
            _check_build(DEFAULT_SEED if seed is None else seed, f"the command {args!r}")
        real_init(self, args, *rest, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "plan_build", plan_build)
        patch.setattr(subprocess.Popen, "__init__", popen_init)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["item"] = item
    try:
        yield
    finally:
        _current["item"] = None


def pytest_collection_modifyitems(config, items):
    """`realbuild` on every test that reads a session build of real abstracts (explicit
    marks cover the tests that build on their own)."""
    for item in items:
        if REAL_BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.realbuild)


# --- real builds -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def seed_cache(tmp_path_factory) -> Path:
    """A cache directory holding a real build of the shipped seed corpus, named 'seed'."""
    from explorer.build.pipeline import build

    cache = tmp_path_factory.mktemp("seed-cache")
    build(build_config("seed", [SEED_DIR]), cache_dir=cache, progress=False, log=lambda m: None)
    return cache


@pytest.fixture(scope="session")
def seed_run(seed_cache):
    from explorer.artifacts import open_run

    return open_run(seed_cache, "seed")


@pytest.fixture(scope="session")
def planted_cache(seed_cache, tmp_path_factory) -> Path:
    """A cache directory holding a real build named 'planted' of the seed abstracts plus
    planted, well-separated subject groups (tests/planted.py): at least one topic per
    group whatever the seed. Its query encoder and the seed's vectors are shared."""
    import shutil

    from explorer.build.pipeline import build
    from tests.planted import write_planted

    root = tmp_path_factory.mktemp("planted")
    cache = root / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")
    inputs = write_planted(root / "inputs")
    assert inputs == planted_inputs(cache)
    build(build_config("planted", inputs), cache_dir=cache, progress=False, log=lambda m: None)
    return cache


def planted_inputs(planted_cache: Path) -> tuple[str, ...]:
    """The inputs the planted build was made from (to rebuild it with more)."""
    return (str(SEED_DIR), str(planted_cache.parent / "inputs" / "planted.jsonl"))


def topic_ids(run) -> list[str]:
    """A built run's topics (no outliers), in id order: what a test may pick from."""
    from explorer.node_ids import OUTLIER_ID, id_order

    return sorted(set(run.table("papers")["topic_id"]) - {OUTLIER_ID}, key=id_order)


def shown(markdown: object) -> str:
    """What a reader sees of Markdown that `explorer.view.text.md` escaped (for AppTest, which
    reports the Markdown source): backslash escapes resolved, word joiners removed."""
    import re

    from explorer.view.text import WORD_JOINER

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", str(markdown)).replace(WORD_JOINER, "")


@pytest.fixture
def clickable(monkeypatch):
    """For tests that click buttons. AppTest resets Streamlit's legacy-multipage flag
    before every run, so with a pages/ folder each run first executes the page alone, and
    explorer/view/ui/router.py reruns it under app.py: a click is spent on that first,
    aborted run. A real server leaves legacy mode for good once a session ran app.py;
    with this fixture, so does AppTest."""
    import streamlit.testing.v1.app_test as app_test
    from streamlit.runtime.pages_manager import PagesManager

    class Modern(PagesManager):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            PagesManager.uses_pages_directory = False

    monkeypatch.setattr(app_test, "PagesManager", Modern)


# --- the browser: Debian's chromium through Playwright, one per test session --------------
# Here, not in tests/e2e/, so the end-to-end and the attack suites share one instance: a
# second sync Playwright in the same thread refuses to start.

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(
                f"{CHROMIUM} is missing in CI: `make test` installs it (apt-get install chromium)"
            )
        pytest.skip(f"{CHROMIUM} not installed (make test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    context.close()
