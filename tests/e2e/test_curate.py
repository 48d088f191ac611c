"""Curation in the real app: the Curate page in chromium (rename, hide, undo), two tabs
saving at once, a CLI change reaching both `explorer serve` workers, and a published
folder that shows the curator's labels but cannot edit them."""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from explorer import artifacts, cli, curation
from explorer.hosting.processes import free_port
from explorer.view.map_layout import HIDDEN_COLOR
from tests.conftest import EDIT_KEY, ROOT, topic_ids
from tests.e2e.conftest import (
    ARTIFACTS,
    haproxy_or_skip,
    kill_tree,
    no_exception,
    start_serve,
    start_server,
    stop_server,
    wait_for_app,
)

pytestmark = pytest.mark.e2e
CORPUS = "planted"
VIEWPORT = {"width": 1400, "height": 1000}
NODE_PICKER = "Area, topic or subtopic"


# --- fixtures and helpers ----------------------------------------------------------------


@pytest.fixture
def cache(planted_cache, tmp_path) -> Path:
    """A copy of the planted build (tests/planted.py: several topics whatever the build
    seed; corpus and models, no curation) the test may curate."""
    target = tmp_path / "cache"
    target.mkdir()
    shutil.copytree(planted_cache / CORPUS, target / CORPUS)
    for name in (curation.FILE, curation.LOCK):
        (target / CORPUS / name).unlink(missing_ok=True)  # start uncurated whatever ran before
    if (planted_cache / "models").is_dir():
        shutil.copytree(planted_cache / "models", target / "models")
    return target


@pytest.fixture(scope="module")
def built(planted_cache):
    return artifacts.open_run(planted_cache, CORPUS)


@pytest.fixture
def labels(built) -> dict[str, str]:
    nodes = built.table("nodes")
    return dict(zip(nodes["node_id"], nodes["label"], strict=True))


@pytest.fixture
def two(built) -> tuple[str, str]:
    """Two topics of the run (the planted groups give several, whatever the build seed)."""
    found = topic_ids(built)
    assert len(found) >= 2, found
    return found[0], found[1]


@contextlib.contextmanager
def served(cache: Path, **kwargs) -> Iterator[str]:
    proc, url = start_server(cache, **kwargs)
    try:
        yield url
    finally:
        stop_server(proc)


@contextlib.contextmanager
def tab(browser, cookies: list[dict] | None = None) -> Iterator:
    """A browser tab of its own (its own context: cookies, session)."""
    context = browser.new_context(viewport=VIEWPORT)
    if cookies:
        context.add_cookies(cookies)
    try:
        yield context.new_page()
    finally:
        context.close()


def open_page(page, url: str):
    response = page.goto(url)
    wait_for_app(page)
    no_exception(page)
    return response


def form(page, button: str):
    """The form whose submit button is `button` (each edit has its own form)."""
    # By text, not role: an open dropdown hides the rest of the page from the accessibility
    # tree, and the form must stay found while one is open.
    submit = page.locator("button").filter(has_text=re.compile(f"^{re.escape(button)}$"))
    return page.locator('[data-testid="stForm"]').filter(has=submit)


def choose(page, scope, node: str) -> None:
    """Pick node `node` ("id: label") in the node selectbox inside `scope`."""
    box = scope.locator('[data-testid="stSelectbox"]').filter(has_text=NODE_PICKER)
    box.click()
    box.locator("input").fill(f"{node}:")
    options = page.get_by_role("option").filter(has_text=f"{node}:")
    options.first.wait_for(timeout=10_000)
    for i in range(options.count()):
        if options.nth(i).inner_text().startswith(f"{node}:"):
            options.nth(i).click()
            break
    else:
        pytest.fail(f"no option for node {node}")
    value = box.locator("input").input_value()
    assert value.startswith(f"{node}:"), value


def saved(page) -> str:
    """After a submit: the page reran and says what it saved; returns that line."""
    page.get_by_text("Saved.", exact=True).wait_for(timeout=60_000)
    wait_for_app(page)
    no_exception(page)
    return page.locator('[data-testid="stText"]').first.inner_text()


def shown_count(page) -> int:
    caption = page.get_by_text("papers shown").first.inner_text()
    return int(caption.split(" of ")[0].replace(",", ""))


def map_labels(page) -> list[str]:
    """The labels the map draws (its annotations), once drawn."""
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    return page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot g.annotation')]"
        ".map(g => g.textContent)"
    )


def drawn(label: str, shown: list[str]) -> bool:
    """Whether the map draws `label` (it shortens long labels with an ellipsis)."""
    return any(a == label or (a.endswith("…") and label.startswith(a[:-1])) for a in shown)


def map_names(page) -> set[str]:
    """The node names ("id: label") of the map's points, from their hover texts."""
    return set(
        page.evaluate(
            """() => [...document.querySelector('.js-plotly-plot').data].flatMap(t =>
                 Array.isArray(t.hovertext) ? t.hovertext.map(h => h.split('<br>').pop()) : [])"""
        )
    )


def labelled_topic(built, labels: dict[str, str], shown: list[str]) -> tuple[str, bool]:
    """A topic sharing its area with another (an area of one topic is labelled like it, and
    the map draws that label instead), whose label no other area's or topic's label
    contains or is contained in; one whose label the map draws when the layout leaves room
    for any (placement depends on the host's layout). Returns it and whether it is drawn."""
    nodes = built.table("nodes")
    areas = nodes[nodes["level"] == "topic"].set_index("node_id")["parent_id"]
    others = nodes.loc[nodes["level"].isin(["area", "topic"]), "node_id"]

    def fits(topic: str) -> bool:
        mine = labels[topic]
        apart = not any(mine in labels[n] or labels[n] in mine for n in others if n != topic)
        return apart and (areas == areas[topic]).sum() > 1

    found = [t for t in topic_ids(built) if fits(t)]
    assert found, ("the planted corpus has a topic sharing its area", labels)
    chosen = next((t for t in found if drawn(labels[t], shown)), found[0])
    return chosen, drawn(labels[chosen], shown)


def map_text(page) -> str:
    """The text of the map's SVG layers (its labels), once drawn."""
    plot = page.locator(".js-plotly-plot").first
    plot.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    return plot.text_content() or ""


def point_colors(page) -> dict[str, str]:
    """paper_id -> the colour its point is drawn in, from the map's plotly traces."""
    return page.evaluate(
        """() => {
            const out = {};
            for (const trace of document.querySelector('.js-plotly-plot').data) {
                if (!trace.customdata || !Array.isArray(trace.marker.color)) continue;
                trace.customdata.forEach((c, i) => { out[c[0]] = trace.marker.color[i]; });
            }
            return out;
        }"""
    )


def nav_text(page) -> str:
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.wait_for(timeout=30_000)
    return nav.inner_text()


def explorer(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def note_worker(url: str, seen: set[str], response) -> None:
    if response.url.startswith(url):
        seen.add(response.headers.get("x-explorer-worker", "(none)"))


def topic_sizes(run) -> dict[str, int]:
    papers = run.table("papers")
    return papers["topic_id"].astype(str).value_counts().to_dict()


# --- 1. the Curate page ------------------------------------------------------------------


def test_curate_page_renames_hides_and_undoes(cache, built, labels, browser):
    papers = built.table("papers")
    total = len(papers)
    new_label = "Diffusion models (curated)"
    with served(cache) as url, tab(browser) as page:
        open_page(page, f"{url}/topic_map?corpus={CORPUS}&level=topic")
        a, was_drawn = labelled_topic(built, labels, map_labels(page))  # renamed
        b = next(t for t in topic_ids(built) if t != a)  # hidden
        hidden_size = topic_sizes(built)[b]
        open_page(page, f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")
        assert page.locator("h1").first.inner_text() == "Curate"
        assert "Curate" in nav_text(page)

        # Rename topic a through the form.
        rename = form(page, "Rename")
        choose(page, rename, a)
        rename.get_by_label("New label").fill(new_label)
        rename.get_by_role("button", name="Rename", exact=True).click()
        assert saved(page).endswith(f"rename {a} to '{new_label}'")
        # The picker keeps topic a and names it by its new label (streamlit#13788).
        box = form(page, "Rename").locator('[data-testid="stSelectbox"]')
        expect(box.filter(has_text=NODE_PICKER).locator("input")).to_have_value(f"{a}: {new_label}")
        page.screenshot(path=str(ARTIFACTS / "curate_renamed.png"), full_page=True)
        (change,) = curation.read(cache, CORPUS)
        assert (change["op"], change["node"], change["label"]) == ("rename", a, new_label)
        assert change["source"] == "dashboard"

        # The new label on the Topics page and on the map.
        open_page(page, f"{url}/topics?corpus={CORPUS}&topic={a}")
        page.get_by_text(f"Topic {a}: {new_label}").wait_for(timeout=30_000)
        page.screenshot(path=str(ARTIFACTS / "curate_topics_renamed.png"), full_page=True)
        open_page(page, f"{url}/topic_map?corpus={CORPUS}&level=topic")
        assert not drawn(labels[a], map_labels(page))
        assert not was_drawn or drawn(new_label, map_labels(page))
        names = map_names(page)
        assert f"{a}: {new_label}" in names and f"{a}: {labels[a]}" not in names
        assert shown_count(page) == total

        # Hide topic b: its papers leave the map unless "Show hidden topics" is checked.
        open_page(page, f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")
        page.get_by_role("tab", name="Hide", exact=True).click()
        hide = form(page, "Hide")
        choose(page, hide, b)
        hide.get_by_role("button", name="Hide", exact=True).click()
        assert saved(page).endswith(f"hide {b}")
        open_page(page, f"{url}/topic_map?corpus={CORPUS}&level=topic")
        assert shown_count(page) == total - hidden_size
        assert f"{labels[b]} (hidden)" not in map_text(page)
        assert not [n for n in map_names(page) if n.startswith(f"{b}: ")]  # its points left
        page.screenshot(path=str(ARTIFACTS / "curate_map_hidden.png"), full_page=True)
        page.get_by_text("Show hidden topics").click()
        page.wait_for_function(
            f"() => document.body.innerText.includes('{total} of {total} papers shown')",
            timeout=60_000,
        )
        wait_for_app(page)
        assert f"{b}: {labels[b]} (hidden)" in map_names(page)
        colors = point_colors(page)
        assert len(colors) == total
        in_2 = set(papers.loc[papers["topic_id"] == b, "paper_id"])
        assert {colors[p] for p in in_2} == {HIDDEN_COLOR}  # greyed
        assert HIDDEN_COLOR not in {c for p, c in colors.items() if p not in in_2}
        assert "show_hidden=true" in page.url
        page.screenshot(path=str(ARTIFACTS / "curate_map_show_hidden.png"), full_page=True)
        open_page(page, f"{url}/topics?corpus={CORPUS}&topic={b}")
        page.get_by_text(f"Topic {b}: {labels[b]} (hidden)").wait_for(timeout=30_000)

        # History: undo takes the hide back, and the rename stays.
        open_page(page, f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")
        page.get_by_role("tab", name="History", exact=True).click()
        page.get_by_role("button", name="Undo the last change").click()
        assert "Took back: #2" in saved(page) and f"hide {b}" in saved(page)
        page.get_by_role("tab", name="History", exact=True).click()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "curate_history_undone.png"), full_page=True)
        changes = curation.read(cache, CORPUS)
        assert [c["op"] for c in changes] == ["rename", "hide", "undo"]
        assert [c["id"] for c in curation.active(changes)] == [1]
        open_page(page, f"{url}/topic_map?corpus={CORPUS}&level=topic")
        assert shown_count(page) == total
        assert page.get_by_text("Show hidden topics").count() == 0  # nothing hidden now
        text = map_text(page)
        assert "(hidden)" not in text and (not was_drawn or new_label in text)
        page.screenshot(path=str(ARTIFACTS / "curate_map_after_undo.png"), full_page=True)


# --- 2. two editors at once ----------------------------------------------------------------


def test_two_tabs_saving_at_once_keep_both_changes(cache, two, browser):
    a, b = two
    wanted = {a: "First tab's name", b: "Second tab's name"}
    with served(cache) as url, tab(browser) as first, tab(browser) as second:
        pages = {a: first, b: second}
        buttons = {}
        for node, page in pages.items():
            open_page(page, f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")
            rename = form(page, "Rename")
            choose(page, rename, node)
            rename.get_by_label("New label").fill(wanted[node])
            buttons[node] = rename.get_by_role("button", name="Rename", exact=True)
            buttons[node].wait_for()
        handles = [b.element_handle() for b in buttons.values()]
        for handle in handles:  # both submits within a few milliseconds
            handle.evaluate("button => button.click()")
        for page in pages.values():
            saved(page)
        changes = curation.read(cache, CORPUS)
        assert [c["id"] for c in changes] == [1, 2]
        assert {c["node"]: c["label"] for c in changes} == wanted
        assert [c["id"] for c in curation.active(changes)] == [1, 2]
        # Each tab shows both labels, its own and the other's.
        for page in pages.values():
            for node, label in wanted.items():
                open_page(page, f"{url}/topics?corpus={CORPUS}&topic={node}")
                page.get_by_text(f"Topic {node}: {label}").wait_for(timeout=30_000)
        second.screenshot(path=str(ARTIFACTS / "curate_two_tabs.png"), full_page=True)


# --- 3. a CLI change reaches every `explorer serve` worker -----------------------------------


def test_cli_change_shows_on_both_serve_workers(cache, labels, two, browser, tmp_path):
    haproxy_or_skip()
    a = two[0]
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "explorer.cli", "--cache-dir", str(cache), "serve",
               "--workers", "2", "--port", str(port)]  # fmt: skip
    proc, url = start_serve(command, cwd=ROOT, cache=None, log=log)
    label = "Renamed from the command line"
    try:
        with contextlib.ExitStack() as stack:
            pages = {}
            for worker in ("w1", "w2"):  # a browser pinned to each worker by haproxy's cookie
                cookie = {"name": "SERVERID", "value": worker, "url": url}
                page = stack.enter_context(tab(browser, [cookie]))
                answered: set[str] = set()  # the workers that answered this tab's requests
                page.on("response", functools.partial(note_worker, url, answered))
                response = open_page(page, f"{url}/topics?corpus={CORPUS}&topic={a}")
                assert response.headers.get("x-explorer-worker") == worker
                page.get_by_text(f"Topic {a}: {labels[a]}").wait_for(timeout=30_000)
                pages[worker] = (page, answered)
            done = explorer("--cache-dir", str(cache), "curate", CORPUS, "rename", a, label)
            assert done.returncode == 0, done.stderr
            assert f"rename {a} to '{label}'" in done.stdout
            for worker, (page, answered) in pages.items():
                page.locator("h1").first.click()  # focus the page, not a widget, then rerun
                page.keyboard.press("r")  # Streamlit's rerun shortcut: same session
                page.get_by_text(f"Topic {a}: {label}").wait_for(timeout=60_000)
                wait_for_app(page)
                no_exception(page)
                assert answered == {worker}, f"{worker}'s tab was served by {answered}"
                page.screenshot(path=str(ARTIFACTS / f"curate_serve_{worker}.png"), full_page=True)
    finally:
        kill_tree(proc)


# --- 4. a published folder is read-only ------------------------------------------------------


@pytest.fixture
def published_curated(cache, two, tmp_path) -> Path:
    argv = ["--cache-dir", str(cache), "curate", CORPUS, "rename", two[0], "Published name"]
    assert cli.main(argv) == 0
    dest = tmp_path / "site"
    assert cli.main(["--cache-dir", str(cache), "publish", CORPUS, str(dest)]) == 0
    assert (dest / "cache" / CORPUS / curation.FILE).is_file()
    return dest


def test_published_folder_shows_curation_but_cannot_edit(published_curated, two, browser):
    """A published folder is read-only always: even a server started with an edit key
    and a visitor presenting it get no Curate page (the CLI still edits its cache)."""
    site = published_curated
    a = two[0]
    with served(site / "cache", app_dir=site) as url, tab(browser) as page:
        open_page(page, f"{url}/topics?corpus={CORPUS}&topic={a}&edit_key={EDIT_KEY}")
        page.get_by_text(f"Topic {a}: Published name").wait_for(timeout=30_000)
        nav = nav_text(page)
        assert "Topics" in nav and "Curate" not in nav
        assert "edit_key" not in page.url
        assert page.get_by_text("Host sign-in").count() == 0
        page.screenshot(path=str(ARTIFACTS / "curate_published_readonly.png"), full_page=True)
        page.goto(f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")  # not a page here
        wait_for_app(page)
        assert page.get_by_role("button", name="Rename", exact=True).count() == 0
        assert page.locator("h1").first.inner_text() != "Curate"
    changes = curation.read(site / "cache", CORPUS)
    assert [(c["node"], c["source"]) for c in changes] == [(a, "cli")]


def test_cli_refuses_an_unknown_node_and_writes_nothing(cache, two):
    file = curation.path(cache, CORPUS)
    for args in (["rename", "999", "A name"], ["hide", "999"], ["merge", two[0], "999"]):
        done = explorer("--cache-dir", str(cache), "curate", CORPUS, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "'999'" in lines[0], done.stderr
        assert not file.exists()
    assert explorer("--cache-dir", str(cache), "curate", CORPUS, "hide", two[0]).returncode == 0
    before = file.read_bytes()
    done = explorer("--cache-dir", str(cache), "curate", CORPUS, "rename", "A99", "x")
    assert done.returncode == 2 and "'A99'" in done.stderr
    assert file.read_bytes() == before
    assert len(curation.read(cache, CORPUS)) == 1
