"""Every node's candidate phrases, best first: the ranking the other label steps read.

A node's phrases are ranked against its siblings by class-based TF-IDF, df(x, c) / n(c) *
log(1 + A / f(x)), f summing df over the siblings and A their mean size, so what the whole
parent shares does not repeat in every child; a node without siblings is ranked against the
rest of the corpus. Each score is multiplied by the phrase's specificity against the venue
background (`explorer/build/background.py`), so boilerplate ("propose", "novel method")
never labels anything; a parent's score also by how evenly its children use the phrase, so
an area is named by what its topics share. `coherence.py` reuses the membership matrix and
the sibling-relative scores.

A phrase that starts or ends with a verb, participle or adverb (`background.verb_edged`:
"detection framework designed", "provide personalized recommendations") is a piece of a
sentence, no candidate, unless the corpus uses the whole phrase of several words as a term:
at least background.REPEATED of the papers using it say it again, by name or initials
(`reads_as_term`, `phrases.Repeats`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix

from explorer.build.background import REPEATED, specificity, verb_edged
from explorer.build.labels.phrases import Repeats

if TYPE_CHECKING:
    from explorer.build.labels.phrases import Phrases

# Phrases of up to this many words are ranked; longer ones come in only as the whole term a
# ranked phrase is a fragment of.
RANKED_WORDS = 3


@dataclass(frozen=True)
class Ranking:
    """Every node's ranked candidates (nodes in the order `rank` was given them)."""

    df: csr_matrix  # node x phrase: how many of the node's documents use the phrase
    corpus_df: np.ndarray  # per phrase column: how many documents use it
    texts: np.ndarray  # the ranked phrases' texts (object), by column
    columns: np.ndarray  # their columns in the phrase table
    position: np.ndarray  # per ranked entry: its phrase's index in `texts`
    scores: np.ndarray  # per ranked entry: its score
    bounds: np.ndarray  # node i's entries are bounds[i]:bounds[i + 1], best first
    repeats: Repeats  # how many documents say a phrase again

    def candidates(self, node: int) -> Iterator[tuple[str, float]]:
        """Node `node`'s (phrase, score) pairs, best first, lazily: the selection stops
        long before a big node's candidates end."""
        span = range(self.bounds[node], self.bounds[node + 1])
        return ((self.texts[self.position[k]], float(self.scores[k])) for k in span)


def reads_as_term(text: str, column: int, used: float, repeats: Repeats) -> bool:
    """Whether a phrase can label: no verb, participle or adverb at either end, or a whole
    term of several words the corpus repeats (at least 2 papers, REPEATED of them saying
    it again)."""
    if not verb_edged(text):
        return True
    multiword = " " in text
    return multiword and used >= 2 and repeats.said_again(column) >= REPEATED * used


def check_members(members: Mapping[str, np.ndarray], n_docs: int) -> None:
    """Refuse member indices outside the documents (numpy would wrap a negative one)."""
    for rows in members.values():
        rows = np.asarray(rows)
        if rows.size and (rows.min() < 0 or rows.max() >= n_docs):
            raise ValueError(f"member indices must lie in [0, {n_docs})")


def membership_matrix(
    nodes: list[str], members: Mapping[str, np.ndarray], n_docs: int
) -> csr_matrix:
    """Node x document indicator; a document may sit in several nodes (one per level)."""
    check_members(members, n_docs)
    rows = [np.unique(np.asarray(members[n], dtype=np.int64)) for n in nodes]
    cols = np.concatenate([np.zeros(0, np.int64), *rows])
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    data = np.ones(cols.size, dtype=np.int32)
    return csr_matrix((data, cols, indptr), shape=(len(nodes), n_docs))


def sibling_groups(
    nodes: list[str], parent_of: Mapping[str, str | None], sizes: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: its sibling group, the group's mean size A, and whether it stands alone."""
    missing = [n for n in nodes if n not in parent_of]
    if missing:
        raise ValueError(f"parent_of lacks node(s) {missing[:5]}")
    group_ids: dict[str | None, int] = {}
    group = np.fromiter(
        (group_ids.setdefault(parent_of[n], len(group_ids)) for n in nodes), np.int64, len(nodes)
    )
    counts = np.bincount(group, minlength=len(group_ids))
    mean = (np.bincount(group, weights=sizes, minlength=len(group_ids)) / counts)[group]
    lone = counts[group] == 1
    # A lone node's siblings are itself and "the rest of the corpus" (if any is left).
    rest = n_docs - sizes
    mean[lone] = np.where(rest[lone] > 0, (sizes[lone] + rest[lone]) / 2, sizes[lone])
    return group, mean, lone


def _group_sums(df: csr_matrix, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f(x) per sibling group as sorted (group * n_phrases + phrase) keys and their values."""
    n_groups = int(group.max()) + 1 if group.size else 0
    ones = np.ones(len(group), dtype=np.int32)
    by_group = csr_matrix((ones, (group, np.arange(len(group)))), shape=(n_groups, len(group)))
    sums = (by_group @ df).tocsr()
    sums.sort_indices()
    keys = np.repeat(np.arange(n_groups), np.diff(sums.indptr)) * df.shape[1] + sums.indices
    return keys, sums.data


def scored_entries(
    df: csr_matrix,
    sizes: np.ndarray,
    siblings: tuple[np.ndarray, np.ndarray, np.ndarray],
    corpus_df: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, phrase, score) of every phrase frequent enough in its node to be a candidate."""
    group, mean, lone = siblings
    rows = np.repeat(np.arange(df.shape[0]), np.diff(df.indptr))
    keep = df.data >= np.where(sizes[rows] < 3, 1, 2)
    rows, cols, counts = rows[keep], df.indices[keep].astype(np.int64), df.data[keep]
    keys, sums = _group_sums(df, group)
    f = sums[np.searchsorted(keys, group[rows] * df.shape[1] + cols)].astype(np.float64)
    # Without siblings the rest of the corpus is the one sibling, so f is the corpus df.
    f = np.where(lone[rows], corpus_df[cols], f)
    return rows, cols, counts / sizes[rows] * np.log1p(mean[rows] / f)


def row_values(df: csr_matrix, row: int, cols: np.ndarray) -> np.ndarray:
    """df[row, cols] of a CSR matrix with sorted indices, as floats."""
    a, b = df.indptr[row], df.indptr[row + 1]
    cols = np.asarray(cols, dtype=np.int64)
    if a == b:
        return np.zeros(len(cols))
    indices = df.indices[a:b]
    i = np.minimum(np.searchsorted(indices, cols), b - a - 1)
    return np.where(indices[i] == cols, df.data[a:b][i], 0).astype(np.float64)


def _coverage(
    df: csr_matrix,
    sizes: np.ndarray,
    nodes: list[str],
    parent_of: Mapping[str, str | None],
    rows: np.ndarray,
    cols: np.ndarray,
) -> np.ndarray:
    """Per (node, phrase) entry: how evenly the node's children use the phrase, the mean over
    children of min(1, child's share / node's share); 1 for a node of fewer than 2 children."""
    index = {n: i for i, n in enumerate(nodes)}
    children: defaultdict[int, list[int]] = defaultdict(list)
    for node in nodes:
        parent = parent_of[node]
        if parent is not None and parent in index:
            children[index[parent]].append(index[node])
    out = np.ones(len(rows))
    bounds = np.searchsorted(rows, np.arange(len(nodes) + 1))
    for parent, kids in children.items():
        span = slice(bounds[parent], bounds[parent + 1])
        if len(kids) < 2 or span.start == span.stop:
            continue
        own = row_values(df, parent, cols[span]) / sizes[parent]
        total = np.zeros(len(own))
        for kid in kids:
            total += np.minimum(1.0, row_values(df, kid, cols[span]) / sizes[kid] / own)
        out[span] = total / len(kids)
    return out


def rank(
    table: Phrases,
    nodes: list[str],
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
) -> Ranking:
    """Each node's candidates scored against its siblings, weighted by their children's
    coverage and their specificity, best first (the longer phrase on ties, then the text)."""
    n_docs = table.x.shape[0]
    membership = membership_matrix(nodes, members, n_docs)
    sizes = np.diff(membership.indptr).astype(np.float64)
    siblings = sibling_groups(nodes, parent_of, sizes, n_docs)
    corpus_df = np.asarray(table.x.sum(axis=0), dtype=np.float64).ravel()
    df = (membership @ table.x).tocsr()
    df.sort_indices()
    rows, cols, scores = scored_entries(df, sizes, siblings, corpus_df)
    scores = scores * _coverage(df, sizes, nodes, parent_of, rows, cols)
    used, position = np.unique(cols, return_inverse=True)
    texts = np.array([table.text(c) for c in used], dtype=object)
    repeats = Repeats(table)
    pairs = zip(texts, used, strict=True)
    weight = np.fromiter(
        (specificity(t) * reads_as_term(t, c, corpus_df[c], repeats) for t, c in pairs),
        np.float64,
        len(texts),
    )
    scores = scores * weight[position.ravel()]
    # Boilerplate and sentence pieces are never candidates; longer phrases come in only as
    # whole terms.
    keep = (scores > 0) & (table.length[cols] <= RANKED_WORDS)
    rows, position, scores = rows[keep], position.ravel()[keep], scores[keep]
    by_text = np.argsort(texts, kind="stable")
    order_of_text = np.empty(len(used), dtype=np.int64)
    order_of_text[by_text] = np.arange(len(used))
    # By node; best score first, the longer phrase on ties, then the phrase text.
    order = np.lexsort((order_of_text[position], -table.length[used[position]], -scores, rows))
    rows, position, scores = rows[order], position[order], scores[order]
    bounds = np.searchsorted(rows, np.arange(len(nodes) + 1))
    return Ranking(df, corpus_df, texts, used, position, scores, bounds, repeats)
