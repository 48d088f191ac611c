"""The websocket client of the load test: a Streamlit browser session without the browser.

It speaks the browser's protocol on `/_stcore/stream`: it sends `BackMsg.rerun_script` with
the widget states a browser would send, and reads every `ForwardMsg` of the rerun until
`script_finished`. No JavaScript runs, so the clients cost little CPU and the server alone
is measured. The end-to-end tests and bench/withstand.py visit the app with it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING

from bench.load_sessions import CAPTION, PAGE, SEARCH_LABEL, TIMEOUT_S

if TYPE_CHECKING:
    from bench.load_sessions import Outcome, Plan, Window


@dataclass
class Rerun:
    """One script run as a client sees it: elements, widget ids, timings, end status."""

    texts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # the text boxes shown
    exceptions: list[str] = field(default_factory=list)
    chart_s: float | None = None
    finished_s: float | None = None
    status: str = ""
    sent_bytes: int = 0  # what the server sent for this rerun (every ForwardMsg)

    def caption(self) -> str | None:
        return next((t for t in self.texts if CAPTION in t), None)


class StreamlitClient:
    """A Streamlit browser session without the browser: the websocket protocol only.

    Like the browser, it keeps the widgets it was shown and mirrors a widget bound to the URL
    (`bind="query-params"`) in the query string it sends with the next rerun.
    """

    def __init__(self, ws, params: dict[str, str]) -> None:
        self.ws = ws
        self.params = dict(params)
        self.widgets: dict[str, tuple[str, str]] = {}  # label -> (widget id, query param)

    async def rerun(self, values: dict[str, str]) -> Rerun:
        """Type these values into the text boxes (by label); read until the script finishes."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        client = msg.rerun_script
        client.page_name = PAGE
        for label, value in values.items():
            widget_id, param = self.widgets[label]
            state = client.widget_states.widgets.add()
            state.id = widget_id
            state.string_value = value
            if param and value:
                self.params[param] = value
            elif param:  # a bound widget at its default leaves the URL
                self.params.pop(param, None)
        client.query_string = urllib.parse.urlencode(self.params)
        run = Rerun()
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            forward = ForwardMsg()
            raw = await self.ws.recv()
            run.sent_bytes += len(raw)
            forward.ParseFromString(raw)
            kind = forward.WhichOneof("type")
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                element = forward.delta.new_element
                which = element.WhichOneof("type")
                if which == "plotly_chart" and run.chart_s is None:
                    run.chart_s = time.perf_counter() - start
                elif which == "markdown":
                    run.texts.append(element.markdown.body)
                elif which == "text_input":
                    box = element.text_input
                    self.widgets[box.label] = (box.id, box.query_param_key)
                    run.labels.append(box.label)
                elif which == "exception":
                    run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(forward.script_finished)
                if status == "FINISHED_EARLY_FOR_RERUN":
                    continue  # superseded by a rerun the server started itself; it follows
                run.finished_s = time.perf_counter() - start
                run.status = status
                return run


def _check(run: Rerun, expected: int | None) -> str | None:
    """Why this rerun does not show the map of the `expected` number of papers, or None."""
    if run.exceptions:
        return f"exception on the page: {run.exceptions[0][:200]}"
    if run.status != "FINISHED_SUCCESSFULLY":
        return f"script ended with {run.status}"
    if run.chart_s is None:
        return "no chart in the rerun"
    caption = run.caption()
    if caption is None:
        return "no paper count on the page"
    caption = caption.replace("\\", "")  # as shown: Markdown escapes removed
    if expected is not None and not caption.startswith(f"{expected:,} of "):
        return f"caption {caption[:60]!r} is not the {expected:,} papers the search matches"
    return None


@contextlib.asynccontextmanager
async def visit(base: str, corpus: str, cookies: dict[str, str] | None = None):
    """A browser's visit: GET the page with its cookie jar, keep the cookies it sets
    (`explorer serve`'s haproxy pins a session to a worker with one), then open the
    websocket sending them, as a browser does. Yields (jar, websocket, client)."""
    from websockets.asyncio.client import connect

    jar = dict(cookies or {})

    def header() -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}

    request = urllib.request.Request(base + "/", headers=header())
    response = await asyncio.to_thread(urllib.request.urlopen, request, timeout=TIMEOUT_S)
    with response:
        for line in response.headers.get_all("Set-Cookie") or []:
            jar.update({k: m.value for k, m in SimpleCookie(line).items()})
    stream = base.replace("http://", "ws://") + "/_stcore/stream"
    async with connect(
        stream, subprotocols=["streamlit"], additional_headers=header(), max_size=None
    ) as ws:
        yield jar, ws, StreamlitClient(ws, {"corpus": corpus})


async def ws_session(
    base: str, corpus: str, window: Window, index: int, plan: Plan, out: Outcome
) -> None:
    try:
        async with visit(base, corpus) as (_, _, client):
            first = await asyncio.wait_for(client.rerun({}), 120)
            box = SEARCH_LABEL in first.labels
            problem = _check(first, None) or (None if box else f"no {SEARCH_LABEL!r} box")
            if problem:
                raise RuntimeError(f"first load: {problem}")
            async for query, expected in window.queries(index, plan.values, plan.think):
                run = await asyncio.wait_for(client.rerun({SEARCH_LABEL: query}), TIMEOUT_S)
                problem = _check(run, expected)
                if problem:
                    out.errors.append(f"session {index}, q={query!r}: {problem}")
                else:
                    out.chart_s.append(run.chart_s)
                    out.rerun_s.append(run.finished_s)
                    out.by_session.setdefault(index, []).append(run.chart_s)
                    out.sent_bytes.append(run.sent_bytes)
    except Exception as exc:  # a timeout or a crash in one session is a finding, not a stop
        out.errors.append(f"session {index}: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        window.arrive(index)
