"""Phrase labels for every node of a topic hierarchy: the steps of the package in order.

`label_nodes` reads a sample of the documents above LABEL_SAMPLE (`label_sample`), counts
their candidate phrases (`phrases.phrase_table`), ranks each node's against its siblings
(`ranking.rank`), takes the best of each node (`selection.select`, each candidate standing
for its whole term: `candidates.NodeTerms`) and tells the labels apart across the
hierarchy (`distinct.distinct`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from explorer.build.labels.candidates import NodeTerms, term_forms
from explorer.build.labels.distinct import distinct
from explorer.build.labels.phrases import phrase_table, superphrases
from explorer.build.labels.ranking import check_members, rank
from explorer.build.labels.selection import NodeLabel, select

# Above this many documents labels are read from a sample of about this many (stratified by
# each document's finest node): the phrase table of a million abstracts would not fit in
# memory, and shares of a phrase among a node's papers are as well estimated from a tenth.
LABEL_SAMPLE = 100_000
# In a sample, every finest node keeps at least this many documents (all of a smaller one),
# so a small subtopic is still labelled from enough abstracts.
LABEL_FLOOR = 50


def label_sample(
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
    n_docs: int,
    size: int,
    seed: int,
) -> np.ndarray | None:
    """Sorted indices of about `size` of `n_docs` documents for labelling, or None when all
    fit: each finest node (the deepest holding a document; documents in none form one more
    stratum) keeps its share of them, at least LABEL_FLOOR (all of a smaller node), drawn at
    random with `seed`, so every node's phrase shares are estimated from its own papers."""
    if n_docs <= size:
        return None

    def depth(node: str) -> int:
        parent = parent_of.get(node)
        return 0 if parent is None or parent not in parent_of else 1 + depth(parent)

    stratum = np.full(n_docs, -1, np.int64)
    for i, node in enumerate(sorted(members, key=lambda n: (depth(n), n))):
        stratum[np.asarray(members[node], dtype=np.int64)] = i  # deeper nodes come later
    order = np.argsort(stratum, kind="stable")
    cuts = np.flatnonzero(np.diff(stratum[order])) + 1
    rng = np.random.default_rng(seed)
    chosen = []
    for rows in np.split(order, cuts):
        take = max(round(size / n_docs * len(rows)), min(len(rows), LABEL_FLOOR))
        chosen.append(rng.choice(rows, size=take, replace=False))
    return np.sort(np.concatenate(chosen))


def label_nodes(
    docs: Sequence[str],
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
    *,
    sample: int = LABEL_SAMPLE,
    seed: int = 0,
) -> dict[str, NodeLabel]:
    """A short and a long phrase label for every node, ranked against its siblings; above
    `sample` documents, from `label_sample`'s documents (sizes stay the whole nodes')."""
    check_members(members, len(docs))
    whole_size = {n: len(np.unique(m)) for n, m in members.items()}
    kept = label_sample(members, parent_of, len(docs), sample, seed)
    if kept is not None:
        docs = [docs[i] for i in kept]
        members = {n: np.searchsorted(kept, np.intersect1d(m, kept)) for n, m in members.items()}
    nodes = list(members)
    table = phrase_table(docs)
    ranking = rank(table, nodes, members, parent_of)
    corpus_df = ranking.corpus_df
    links = superphrases(table, corpus_df >= 2)
    forms = term_forms(table, np.flatnonzero((corpus_df >= 2) & (table.length >= 2)))
    col_of = dict(zip(ranking.texts.tolist(), ranking.columns.tolist(), strict=True))
    labels: dict[str, NodeLabel] = {}
    for i, node in enumerate(nodes):
        context = NodeTerms(table, ranking, i, links, forms, col_of)
        # Lazy: the walk stops after LONG_PHRASES picks, long before a big node's candidates end.
        labels[node] = select(ranking.candidates(i), context)
    return distinct(labels, parent_of, whole_size)
