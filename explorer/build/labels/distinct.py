"""Labels told apart across the hierarchy: siblings never share a short label, and a parent
does not repeat a child's unless that child holds most of its papers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from explorer.build.labels.selection import NodeLabel

# A parent keeps a child's short label only when that child holds this share of its papers.
ESSENTIAL_SHARE = 0.8


def _reworded(label: NodeLabel, avoid: set[str]) -> NodeLabel | None:
    """The label led by its best phrase outside `avoid` (alone on the map), if it has one."""
    for lead in label.phrases:
        if lead not in avoid:
            phrases = (lead, *(p for p in label.phrases if p != lead))
            return NodeLabel(short=lead, long=", ".join(phrases), phrases=phrases)
    return None


def distinct(
    labels: dict[str, NodeLabel], parent_of: Mapping[str, str | None], size: dict[str, int]
) -> dict[str, NodeLabel]:
    """Top down, so a parent's label is settled before its children's: siblings never share a
    short label (the larger keeps it), and a child does not repeat its parent's unless it
    holds ESSENTIAL_SHARE of the parent's papers. A node that must give way is led by its
    best phrase that no sibling before it and no such parent shows; with none left, its
    node id tells it apart."""
    children: defaultdict[str | None, list[str]] = defaultdict(list)
    for node in sorted(labels, key=lambda n: (-size[n], n)):
        children[parent_of[node] if parent_of[node] in labels else None].append(node)

    def depth(node: str | None) -> int:
        return (
            0 if node is None else 1 + depth(parent_of[node] if parent_of[node] in labels else None)
        )

    for parent in sorted(children, key=lambda p: (depth(p), p or "")):
        above = labels[parent].short if parent is not None else None
        taken: list[str] = []
        for node in children[parent]:
            essential = parent is None or size[node] >= ESSENTIAL_SHARE * size[parent]
            banned = [*taken, *([] if essential else [above])]
            label = labels[node]
            if label.short in banned:
                avoid = {p for short in banned for p in short.split(", ")}
                label = _reworded(label, avoid) or label
                if label.short in banned:
                    label = NodeLabel(f"{label.short} ({node})", label.long, label.phrases)
                labels[node] = label
            taken.append(label.short)
    return labels
