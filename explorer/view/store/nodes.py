"""The node hierarchy as the pages see it: the levels a run has, each paper's node at a
level, a node's name, the nodes shown at a level, and where a click on one opens.

What every other query module builds on; pure pandas, no Streamlit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.node_ids import (
    OUTLIER_ID,
    OUTLIER_LABEL,
    has_area_level,
    leaf_ids,
    level_of,
    topic_of,
)

if TYPE_CHECKING:
    import pandas as pd


def available_levels(nodes: pd.DataFrame) -> list[str]:
    """The levels this run has: areas only when they group topics, subtopics only when a
    topic was split (small corpora have fewer levels)."""
    out = ["area"] if has_area_level(nodes) else []
    out.append("topic")
    return out + (["subtopic"] if (nodes["level"] == "subtopic").any() else [])


LEVEL_NAMES = {"area": "Areas", "topic": "Topics", "subtopic": "Subtopics"}


def levels_named(levels: list[str]) -> str:
    """The levels as a label names them: "Areas, topics and subtopics", "Topics"..."""
    words = [LEVEL_NAMES[level].lower() for level in levels]
    text = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return text[0].upper() + text[1:]


def level_ids(papers: pd.DataFrame, level: str) -> pd.Series:
    """Each paper's node id at `level` (strings; OUTLIER_ID for outliers). At "subtopic", a
    paper whose topic has no subtopics is in its topic."""
    if level == "area":
        return papers["area_id"].astype(str)
    if level == "subtopic":
        return leaf_ids(papers)
    return papers["topic_id"].astype(str)


def node_name(nodes: pd.DataFrame, *, long: bool = False):
    """`id: label`, the one way a node of any level is named in pickers, URLs and charts."""
    labels = dict(zip(nodes["node_id"], nodes["long_label" if long else "label"], strict=True))
    labels[OUTLIER_ID] = OUTLIER_LABEL
    return lambda n: f"{n}: {labels.get(str(n), '?')}"


def nodes_at(nodes: pd.DataFrame, level: str) -> pd.DataFrame:
    """The nodes shown at `level`: at "subtopic", subtopics plus the topics not split."""
    if level != "subtopic":
        return nodes[nodes["level"] == level]
    split = set(nodes.loc[nodes["level"] == "subtopic", "parent_id"])
    leaf_topics = (nodes["level"] == "topic") & ~nodes["node_id"].isin(split)
    return nodes[(nodes["level"] == "subtopic") | leaf_topics]


def opened_by(nodes: pd.DataFrame, node: str, shown: str) -> tuple[str, str]:
    """The topic, and the level, the Topics page opens at for a click on `node` in a chart
    of level `shown` (its detail shows a topic): a topic or subtopic opens its topic at the
    level clicked (an unsplit topic among the subtopics stays among them); an area opens
    its largest topic among the topics (a table of areas above one topic's detail reads as
    if the topic were the area)."""
    if level_of(node) != "area":
        return topic_of(node), shown
    topics = nodes[(nodes["level"] == "topic") & (nodes["parent_id"] == node)]
    largest = topics.sort_values("size", ascending=False, kind="stable")["node_id"].iloc[0]
    return str(largest), "topic"
