"""An audit of a hierarchy's labels against the documented rules (docs/labels.md).

Independent of how the package's other modules pick phrases: it re-reads the papers and
reports every phrase that is boilerplate by the learned list, a piece of a sentence (a verb,
participle or adverb at an end, and no term the corpus repeats), a modifier alone
("theoretical", `background.stands_alone`), a fragment of a longer term
most of the node's papers using it write instead, or a second form of a term the label
already holds, and every parent/child or sibling pair that shares a short label against
the rules. The unit tests run it on planted corpora and the seed corpus; `bench/quality.py`
on the large real corpora, whose builds stay out of the unit tests.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from explorer.build.background import REPEATED, is_boilerplate, stands_alone, verb_edged
from explorer.build.labels.candidates import WHOLE_SHARE, adds_meaning
from explorer.build.labels.distinct import ESSENTIAL_SHARE
from explorer.build.labels.phrases import candidate_phrases
from explorer.build.labels.selection import NodeLabel
from explorer.build.labels.terms import content_words, initials, same_term

if TYPE_CHECKING:
    import pandas as pd


def occurs(phrase: str, text: str) -> bool:
    """Whole words, contiguous, whitespace only between them (case-insensitive)."""
    pattern = r"\s+".join(map(re.escape, phrase.split()))
    return re.search(rf"(?<![\w-]){pattern}(?![\w-])", text.lower()) is not None


@functools.lru_cache(maxsize=200_000)
def _phrases_of(text: str) -> frozenset[str]:
    """A text's candidate phrases, once per text: a paper is a member at every level."""
    return frozenset(candidate_phrases(text))


def _mentions(phrase: str, text: str) -> int:
    pattern = r"\s+".join(map(re.escape, phrase.split()))
    return len(re.findall(rf"(?<![\w-]){pattern}(?![\w-])", text.lower()))


def sentence_piece(phrase: str, docs: Sequence[str]) -> bool:
    """A verb, participle or adverb at an end, unless the phrase has several words and
    REPEATED of the papers using it say it again, by name or by its initials."""
    if not verb_edged(phrase):
        return False
    if " " not in phrase:
        return True
    short = initials(phrase)
    if short in ENGLISH_STOP_WORDS or short + "s" in ENGLISH_STOP_WORDS:
        short = ""  # "is", "as": every abstract writes them (Repeats reads only candidates)
    using = [t for t in docs if occurs(phrase, t)]
    again = sum(
        _mentions(phrase, t) > 1
        or (len(short) > 1 and (occurs(short, t) or occurs(short + "s", t)))
        for t in using
    )
    return len(using) < 2 or again < REPEATED * len(using)


def longer_term(phrase: str, texts: Sequence[str], docs: Sequence[str]) -> str | None:
    """A longer phrase holding `phrase` that most of the node's papers (`texts`) using it
    use instead (the documented rule: WHOLE_SHARE of them, adding a word that is no
    boilerplate, and no piece of a sentence in the corpus `docs`)."""
    using = [t for t in texts if occurs(phrase, t)]
    longer = Counter(
        q for t in using for q in _phrases_of(t) if f" {phrase} " in f" {q} " and q != phrase
    )
    old = set(content_words(phrase))
    for q, n in longer.most_common():
        enough = n >= max(2, WHOLE_SHARE * len(using))
        if enough and adds_meaning(q, old) and not sentence_piece(q, docs):
            return q
    return None


def label_faults(
    docs: Sequence[str],
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
    labels: Mapping[str, NodeLabel],
) -> list[str]:
    """One line per broken rule; an empty list when every label reads as documented."""
    faults: list[str] = []
    for node, label in labels.items():
        texts = [docs[i] for i in members[node]]
        for i, phrase in enumerate(label.phrases):
            if is_boilerplate(phrase):
                faults.append(f"{node}: {phrase!r} is boilerplate")
            if sentence_piece(phrase, docs):
                faults.append(f"{node}: {phrase!r} starts or ends with a verb or adverb")
            if not stands_alone(phrase):
                faults.append(f"{node}: {phrase!r} is a modifier alone")
            whole = longer_term(phrase, texts, docs)
            if whole is not None:
                faults.append(f"{node}: {phrase!r} is a fragment of {whole!r}")
            faults.extend(
                f"{node}: {phrase!r} and {other!r} are one term"
                for other in label.phrases[i + 1 :]
                if same_term(phrase, other)
            )
    return faults + _sharing_faults(members, parent_of, labels)


def _sharing_faults(
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
    labels: Mapping[str, NodeLabel],
) -> list[str]:
    """Siblings sharing a short label, or a child repeating its parent's without holding
    ESSENTIAL_SHARE of its papers."""
    faults: list[str] = []
    siblings: dict[str | None, list[str]] = {}
    for node, parent in parent_of.items():
        siblings.setdefault(parent, []).append(labels[node].short)
        repeats = parent is not None and labels[parent].short == labels[node].short
        if repeats and len(members[node]) < ESSENTIAL_SHARE * len(members[parent]):
            faults.append(f"{node}: repeats its parent {parent}'s label")
    for parent, shorts in siblings.items():
        faults.extend(
            f"children of {parent}: {s!r} twice" for s, n in Counter(shorts).items() if n > 1
        )
    return faults


def run_hierarchy(
    papers: pd.DataFrame, nodes: pd.DataFrame
) -> tuple[list[str], dict[str, np.ndarray], dict[str, str | None], dict[str, NodeLabel]]:
    """A built run's abstracts, node members, parents and labels, as `label_faults` and
    `nodes.label_nodes` take them (a run above `nodes.LABEL_SAMPLE` papers was labelled
    from a sample drawn with the build's seed: pass `seed=` to label it again alike)."""
    column = {"area": "area_id", "topic": "topic_id", "subtopic": "subtopic_id"}
    ids = {level: papers[c].astype(str).to_numpy() for level, c in column.items()}
    members = {n.node_id: np.flatnonzero(ids[n.level] == n.node_id) for n in nodes.itertuples()}
    parent_of = {
        n.node_id: n.parent_id if isinstance(n.parent_id, str) else None for n in nodes.itertuples()
    }
    labels = {
        n.node_id: NodeLabel(n.label, n.long_label, tuple(n.phrases)) for n in nodes.itertuples()
    }
    return papers["abstract"].tolist(), members, parent_of, labels


def run_faults(papers: pd.DataFrame, nodes: pd.DataFrame) -> list[str]:
    """`label_faults` of a built run's node table over its papers' abstracts."""
    return label_faults(*run_hierarchy(papers, nodes))
