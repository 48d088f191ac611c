"""Curate: rename, merge, hide and move, with the history, undo and revert.

Listed in the navigation only for the host's editing session (explorer/view/ui/editing.py),
and every write asks the gate again on the server: a session that is not the host's, has
signed out, expired or writes too fast records nothing. Every change goes through
explorer.curation, as `explorer curate` does, and shows on every page at the next rerun,
in every worker.
"""

from pathlib import Path

import pandas as pd
import streamlit as st

from explorer import curation
from explorer.errors import InputError
from explorer.view.store.nodes import node_name
from explorer.view.text import md, md_format, without_bidi
from explorer.view.ui import editing
from explorer.view.ui.data import RunData, cache_dir, current, levels
from explorer.view.ui.router import ensure_router
from explorer.view.ui.stop import stop_page

ensure_router()
APP_DIR = Path(__file__).resolve().parents[1]
DONE = "curate_done"  # what the last change did, shown after the rerun it triggers


def edit(data: RunData, op: str, **args: object) -> None:
    """Record one change (as the dashboard), then rerun so every view shows it."""
    try:
        editing.require_editor(APP_DIR)
        target = curation.EditTarget(cache_dir(), data.corpus, data.run_id, data.built_papers)
        change = curation.record(target, data.nodes, op, source="dashboard", **args)
    except (InputError, editing.EditRefused) as exc:
        st.error(md(exc))
        return
    st.session_state[DONE] = curation.describe(change)
    st.rerun()


def take_back(data: RunData, to: int | None) -> None:
    try:
        editing.require_editor(APP_DIR)
        back, restored = curation.take_back(cache_dir(), data.corpus, to=to, source="dashboard")
    except (InputError, editing.EditRefused) as exc:
        st.error(md(exc))
        return
    lines = [f"Took back: {curation.describe(c)}" for c in back]
    lines += [f"Restored: {curation.describe(c)}" for c in restored]
    st.session_state[DONE] = "\n".join(lines)
    st.rerun()


def versioned(key: str, data: RunData) -> str:
    """A picker's key for this version of the overlay. Streamlit keeps showing a keyed
    select box's old option text when only `format_func`'s output changes
    (streamlit/streamlit#13788), so a rename would show the old label until the choice
    changed; a new key per version draws the new labels. `kept` carries the choice over."""
    return f"{key}@{'-'.join(map(str, data.curation))}"


def carried(key: str, data: RunData) -> object:
    """The choice made under `key` at an older version of the overlay, or None. When
    another tab saves between a choice and its submit, the submit reruns at a new version:
    the form's value arrives under the old key, and must be what is edited."""
    if versioned(key, data) in st.session_state:
        return None
    older = [k for k in st.session_state if isinstance(k, str) and k.startswith(f"{key}@")]
    return st.session_state[older[-1]] if older else None


def kept(key: str, options: list, data: RunData) -> int:
    """The index of the choice made under `key` (at any version), 0 if it is gone."""
    last = carried(key, data)
    if last is None:
        last = st.session_state.get(key)
    return options.index(last) if last in options else 0


def node_box(label: str, options: list, key: str, data: RunData, **kwargs) -> object:
    """A select box over node ids (or paper ids) that shows curated names at once."""
    value = st.selectbox(
        label, options, index=kept(key, options, data), key=versioned(key, data), **kwargs
    )
    st.session_state[key] = value
    return value


def history(data: RunData) -> pd.DataFrame:
    changes = curation.read(cache_dir(), data.corpus)
    live = {c["id"] for c in curation.active(changes)}
    return pd.DataFrame(
        {
            "id": [c["id"] for c in changes],
            "change": [without_bidi(curation.describe(c).split(": ", 1)[1]) for c in changes],
            "source": [c["source"] for c in changes],
            "time": [c["time"] for c in changes],
            "in effect": [c["id"] in live or c["op"] not in curation.EDITS for c in changes],
        }
    ).iloc[::-1]


if not editing.is_editor(APP_DIR):  # signed out or expired since the navigation was built
    st.info("Only the host can change this dashboard.")
    stop_page()
data = current()
st.title("Curate")
st.caption(
    "Changes are kept beside the corpus (curation.jsonl), show on every page at once and "
    "carry over to rebuilds; undo and revert take them back."
)
if done := st.session_state.pop(DONE, None):
    st.success("Saved.")
    st.text(without_bidi(done))


def not_applied(changes, why: str) -> None:
    """A warning naming how many changes are not applied and why, then the changes."""
    if changes:
        st.warning(md_format("{n} change(s) " + why, n=len(changes)))
        st.text(without_bidi("\n".join(curation.describe(c) for c in changes)))


not_applied(
    data.unmatched,
    "do not match this run's topics (their papers moved in a refit; "
    "`explorer build --keep-topics` adds papers without moving topics):",
)
not_applied(
    data.refused,
    "hold a label that is not allowed (invisible, control or undecodable characters) and "
    "are not applied; rename the node again:",
)

name = node_name(data.nodes)
nodes = data.nodes[data.nodes["level"].isin(levels(data))]  # no stand-in areas
ids = nodes["node_id"].tolist()
leaves = nodes.loc[nodes["level"] != "area", "node_id"].tolist()
rename_tab, merge_tab, hide_tab, move_tab, history_tab = st.tabs(
    ["Rename", "Merge", "Hide", "Move a paper", "History"]
)
with rename_tab, st.form("rename"):
    node = node_box("Area, topic or subtopic", ids, "cur_rename_node", data, format_func=name)
    label = st.text_input("New label", max_chars=curation.MAX_LABEL_CHARS, key="cur_label")
    if st.form_submit_button("Rename"):
        edit(data, "rename", node=node, label=label)
with merge_tab, st.form("merge"):
    st.caption("The merged topic keeps the id and area of its largest member.")
    merged = st.multiselect(
        "Topics, or subtopics of one topic",
        leaves,
        default=[n for n in carried("cur_merge", data) or () if n in leaves],
        format_func=name,
        key=versioned("cur_merge", data),
    )
    if st.form_submit_button("Merge"):
        edit(data, "merge", nodes=merged)
with hide_tab, st.form("hide"):
    node = node_box("Area, topic or subtopic", ids, "cur_hide_node", data, format_func=name)
    hide, unhide = st.columns(2)
    if hide.form_submit_button("Hide"):
        edit(data, "hide", node=node)
    if unhide.form_submit_button("Unhide"):
        edit(data, "unhide", node=node)
with move_tab, st.form("move"):
    titles = dict(zip(data.papers["paper_id"], data.papers["title"], strict=True))
    paper = node_box(
        "Paper", list(titles), "cur_paper", data, format_func=lambda p: titles[p][:120]
    )
    target = node_box("To topic or subtopic", leaves, "cur_target", data, format_func=name)
    if st.form_submit_button("Move"):
        edit(data, "move", paper=paper, node=target)
with history_tab:
    table = history(data)
    if table.empty:
        st.text("No changes yet.")
    else:
        st.dataframe(table, hide_index=True, key="cur_history")
        undo, revert = st.columns(2)
        if undo.button("Undo the last change"):
            take_back(data, None)
        with revert.form("revert"):
            to = st.selectbox("Return to the state right after change", table["id"], key="cur_to")
            if st.form_submit_button("Revert"):
                take_back(data, int(to))
