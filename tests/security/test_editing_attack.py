"""The issue's attack, replayed: a visitor's websocket sends exactly the messages the host's
browser sent to curate (rename, merge, hide, unhide, move, undo, revert) and nothing is
recorded. Before the edit gate the same replay recorded every one of those changes.

The host signs in with the one-click link in Chromium; the attacker is a bare websocket
client from another loopback address (127.0.0.2) with its own session and no key.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from explorer import artifacts, curation
from tests.conftest import EDIT_KEY, topic_ids
from tests.e2e.conftest import (
    ARTIFACTS,
    no_exception,
    run_async,
    start_server,
    stop_server,
    wait_for_app,
)

pytestmark = pytest.mark.e2e
CORPUS = "planted"


def form(page, button: str):
    submit = page.locator("button").filter(has_text=re.compile(f"^{re.escape(button)}$"))
    return page.locator('[data-testid="stForm"]').filter(has=submit)


def choose(page, scope, label: str, prefix: str) -> None:
    """Pick the option starting with `prefix` in the select box labelled `label`."""
    box = scope.locator('[data-testid="stSelectbox"]').filter(has_text=label)
    box.click()
    box.locator("input").fill(prefix)
    option = page.get_by_role("option").filter(has_text=re.compile(f"^{re.escape(prefix)}"))
    option.first.click()


def pick(page, scope, prefix: str) -> None:
    """Add the option starting with `prefix` to the multiselect in `scope`."""
    box = scope.locator('[data-testid="stMultiSelect"]')
    box.click()
    box.locator("input").fill(prefix)
    page.get_by_role("option").filter(has_text=re.compile(f"^{re.escape(prefix)}")).first.click()
    page.keyboard.press("Escape")


def submit(page, scope, button: str) -> None:
    scope.get_by_role("button", name=button, exact=True).click()
    page.get_by_text("Saved.", exact=True).wait_for(timeout=60_000)
    wait_for_app(page)
    no_exception(page)


def tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click()


def curate_everything(page, run) -> None:
    """As the host, through the Curate page's forms: every kind of change."""
    ids = topic_ids(run)
    papers = run.table("papers")
    paper = papers.loc[papers["topic_id"] == ids[2], "title"].iloc[0][:40]
    rename = form(page, "Rename")
    choose(page, rename, "Area, topic or subtopic", f"{ids[0]}:")
    rename.get_by_label("New label").fill("HACKED: go to evil.example")
    submit(page, rename, "Rename")
    tab(page, "Merge")
    merge = form(page, "Merge")
    pick(page, merge, f"{ids[1]}:")
    pick(page, merge, f"{ids[2]}:")
    submit(page, merge, "Merge")
    tab(page, "Hide")
    hide = form(page, "Hide")
    choose(page, hide, "Area, topic or subtopic", f"{ids[3]}:")
    submit(page, hide, "Hide")
    choose(page, form(page, "Hide"), "Area, topic or subtopic", f"{ids[3]}:")
    submit(page, form(page, "Hide"), "Unhide")
    tab(page, "Move a paper")
    move = form(page, "Move")
    choose(page, move, "Paper", paper)
    choose(page, move, "To topic or subtopic", f"{ids[0]}:")
    submit(page, move, "Move")
    tab(page, "History")
    page.get_by_role("button", name="Undo the last change").click()
    page.get_by_text("Saved.", exact=True).wait_for(timeout=60_000)
    wait_for_app(page)
    tab(page, "History")
    revert = form(page, "Revert")
    choose(page, revert, "Return to the state right after change", "1")
    submit(page, revert, "Revert")


def without_key(frame: bytes) -> bytes:
    """The frame as the attacker can send it: the host's first message carries the
    one-click link's query string, whose key the attacker does not have."""
    from urllib.parse import parse_qsl, urlencode

    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.ParseFromString(frame)
    if msg.WhichOneof("type") == "rerun_script":
        query = parse_qsl(msg.rerun_script.query_string)
        msg.rerun_script.query_string = urlencode([(k, v) for k, v in query if k != "edit_key"])
    out = msg.SerializeToString()
    assert EDIT_KEY.encode() not in out
    return out


async def replay(url: str, frames: list[bytes]) -> list[str]:
    """Send each frame (without the key) from a new session at 127.0.0.2, reading until
    each script run ends; returns the statuses."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect

    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    statuses = []
    async with connect(
        stream, subprotocols=["streamlit"], max_size=None, local_addr=("127.0.0.2", 0)
    ) as ws:
        for frame in map(without_key, frames):
            await ws.send(frame)
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
                if msg.WhichOneof("type") == "script_finished":
                    status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                    if status != "FINISHED_EARLY_FOR_RERUN":
                        statuses.append(status)
                        break
    return statuses


def visited(page) -> list[str]:
    """Every address in the tab's history, walking back from the current one."""
    seen = [page.url]
    for _ in range(page.evaluate("history.length")):
        page.go_back()
        page.wait_for_timeout(300)
        seen.append(page.url)
    return seen


def test_a_visitor_replaying_the_hosts_messages_changes_nothing(cache, browser):
    run = artifacts.open_run(cache, CORPUS)
    proc, url = start_server(cache, edit_key=EDIT_KEY)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    frames: list[bytes] = []
    try:
        page = context.new_page()
        page.on(
            "websocket",
            lambda ws: ws.on(
                "framesent", lambda f: frames.append(f) if isinstance(f, bytes) else None
            ),
        )
        page.goto(f"{url}/curate?corpus={CORPUS}&edit_key={EDIT_KEY}")
        wait_for_app(page)
        no_exception(page)
        # The key left the address bar at once (and the history: see the end).
        assert "edit_key" not in page.url and EDIT_KEY not in page.content()
        assert page.locator("h1").first.inner_text() == "Curate"
        curate_everything(page, run)
        page.screenshot(path=str(ARTIFACTS / "security_host_curated.png"), full_page=True)
        recorded = curation.read(cache, CORPUS)
        ops = {c["op"] for c in recorded}
        assert ops == {"rename", "merge", "hide", "unhide", "move", "undo", "revert"}, ops
        before = curation.path(cache, CORPUS).read_bytes()

        statuses = run_async(replay(url, frames), timeout=600)
        assert statuses and set(statuses) == {"FINISHED_SUCCESSFULLY"}
        assert curation.path(cache, CORPUS).read_bytes() == before  # nothing recorded
        assert len(curation.read(cache, CORPUS)) == len(recorded)
        assert "edit_key" not in "".join(visited(page))
    finally:
        context.close()
        stop_server(proc)
