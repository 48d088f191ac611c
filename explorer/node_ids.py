"""Node ids: the one grammar of a run's areas, topics, subtopics and outliers.

Both worlds parse and make ids only through these functions (tests/test_layout.py fails on
an id taken apart by hand), so a change of form has one home. Standard library only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from explorer.errors import NodeIdError

if TYPE_CHECKING:
    import pandas as pd

# The topic of papers that belong to no topic: OUTLIER inside the build, OUTLIER_ID (text, as
# every id column of the artifacts holds ids) in the tables.
OUTLIER = -1
OUTLIER_ID = "-1"
OUTLIER_LABEL = "Outliers"
LEVELS = ("area", "topic", "subtopic")

# Every node of a run has a text id whose form says its level: areas "A0", "A1"... (largest
# first), topics "0", "1"..., subtopics "12.0", "12.1"... (the topic, then the part), and the
# outliers "-1" at every level (a topic, as far as level_of is concerned). Both worlds parse
# and make ids only through these functions, so the grammar has one home.
AREA_PREFIX = "A"
_NODE_ID = re.compile(r"A(0|[1-9]\d*)|(-1)|(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?")


def _parse(node_id: str) -> re.Match[str]:
    """The id's parts; a one-line NodeIdError when it is not one of the four forms."""
    match = _NODE_ID.fullmatch(node_id) if isinstance(node_id, str) else None
    if match is None:
        raise NodeIdError(
            f"{node_id!r} is not a node id: an area is A<n>, a topic <n>, a subtopic <n>.<m>, "
            f"the outliers {OUTLIER_ID}"
        )
    return match


def level_of(node_id: str) -> str:
    """ "area", "topic" or "subtopic", from the id's form (the outliers count as a topic)."""
    area, _, _, part = _parse(node_id).groups()
    if area is not None:
        return "area"
    return "topic" if part is None else "subtopic"


def topic_of(node_id: str) -> str:
    """The topic a topic or subtopic id belongs to ("12.3" -> "12", "12" -> "12"); an area
    holds several topics, so asking for its topic is an error."""
    area, outlier, topic, _ = _parse(node_id).groups()
    if area is not None:
        raise NodeIdError(f"{node_id!r} is an area: it holds several topics, not one")
    return outlier or topic


def parent_of(node_id: str) -> str | None:
    """The parent the id itself names: a subtopic's topic. None for topics, areas and the
    outliers (a topic's area is data, in the nodes table's parent_id, not part of its id)."""
    _, _, topic, part = _parse(node_id).groups()
    return topic if part is not None else None


def subtopic_index(node_id: str) -> int:
    """The part of a subtopic id after its topic ("12.3" -> 3; 0 is the topic's largest)."""
    part = _parse(node_id).group(4)
    if part is None:
        raise NodeIdError(f"{node_id!r} is not a subtopic id")
    return int(part)


def area_id(index: int) -> str:
    """The id of area number `index` (0 is the largest)."""
    return _checked(f"{AREA_PREFIX}{int(index)}")


def topic_id(topic: int) -> str:
    """The id of topic `topic` (OUTLIER gives OUTLIER_ID)."""
    return _checked(str(int(topic)))


def subtopic_id(topic: int | str, index: int) -> str:
    """The id of part `index` of topic `topic` (0 is its largest)."""
    return _checked(f"{int(topic)}.{int(index)}")


def _checked(node_id: str) -> str:
    _parse(node_id)
    return node_id


def id_order(node_id: str) -> tuple[int, ...]:
    """Sort key of node ids in numeric order: "A2" < "A10", "12.9" < "12.10", "-1" first."""
    return tuple(int(part) for part in _parse(str(node_id)).groups() if part is not None)


def has_area_level(nodes: pd.DataFrame) -> bool:
    """Whether areas are a level of their own: with too few topics each topic stands in as
    its own area, and that is no area level (the build's counts and the view agree here)."""
    count = nodes["level"].value_counts()
    return bool(count.get("area", 0) < count.get("topic", 0))


def leaf_ids(papers: pd.DataFrame) -> pd.Series:
    """Each paper's leaf: its subtopic, or its topic where the topic has no subtopics."""
    sub = papers["subtopic_id"].astype(str)
    return sub.where(sub != "", papers["topic_id"].astype(str))
