"""Phrase labels for the nodes of a topic hierarchy (areas > topics > subtopics).

Labels are phrases a reader can find in the abstracts: 1-3 contiguous lower-cased words with
no stop word at either end. HTML tags are stripped; punctuation (bar an internal hyphen, so
"self-supervised" is one word), $math$, LaTeX commands, pure numbers and 1-character words cut
the text into segments no phrase crosses. A phrase counts once per document. A node's phrases
are ranked against its siblings by class-based TF-IDF, df(x, c) / n(c) * log(1 + A / f(x)), f
summing df over the siblings and A their mean size, so what the whole parent shares does not
repeat in every child; a node without siblings is ranked against the rest of the corpus. The
best phrases are taken first, skipping any whose word set nests with one already taken
("graphs" and "graph" count as one word there).
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

LONG_PHRASES = 8
# The map shows a second phrase only when it is nearly as characteristic as the first.
SHORT_SECOND_RATIO = 0.5
# A longer phrase replaces a taken phrase it extends when it scores at least this share of it.
EXTEND_RATIO = 0.6
# Candidates read per node at most: extensions are looked for among the best ones only.
SCAN_LIMIT = 200
NO_PHRASES = "(no phrases)"

# Tags go without a break: "<i>neural</i> networks" reads as "neural networks".
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
# Links, math, LaTeX commands and HTML entities are not prose: each becomes a segment break.
_NOT_PROSE = re.compile(
    r"(?:https?|ftp)://\S+|www\.\S+|\$\$.*?\$\$|\$[^$]*\$|\\[A-Za-z]+|&#?\w+;", re.DOTALL
)
_BREAK = " | "
_DOC_END = "|"  # appended to every document: one character, so never part of a phrase
# A word (letters/digits, internal hyphens) or one other non-space character (a break).
_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*|\S")


@dataclass(frozen=True)
class NodeLabel:
    """One node's label: `short` for the map, where space is scarce; `long` for tables."""

    short: str
    long: str
    phrases: tuple[str, ...]  # the chosen phrases, best first (at most LONG_PHRASES)


def _tokens(text: str) -> list[str]:
    """Words and break characters of one text, lower-cased, with markup already cut out."""
    return _TOKEN.findall(_NOT_PROSE.sub(_BREAK, _HTML_TAG.sub(" ", text)).lower())


def _is_word(token: str) -> bool:
    """Pure numbers and 1-character tokens (letters or punctuation) cut phrases instead."""
    return len(token) > 1 and not token.replace("-", "").isdigit()


@dataclass(frozen=True)
class _Phrases:
    """Every document's candidate phrases, kept as word codes rather than millions of strings.

    `x` is the binary document x phrase matrix; column j is the phrase of `length[j]` words
    that starts at position `start[j]` of the corpus-wide token `codes`.
    """

    x: csr_matrix
    start: np.ndarray
    length: np.ndarray
    codes: np.ndarray
    vocabulary: list[str]

    def text(self, column: int) -> str:
        """A phrase's words, read back from its first occurrence."""
        at, n = self.start[column], self.length[column]
        return " ".join(self.vocabulary[c] for c in self.codes[at : at + n])


def _encode(docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Corpus-wide token codes (a break token ends every document) and each token's document."""
    index: defaultdict[str, int] = defaultdict()
    index.default_factory = index.__len__  # a new token gets the next code, without a Python call
    codes = array("q")
    lengths = array("q")
    for doc in docs:
        tokens = _tokens(doc)
        tokens.append(_DOC_END)
        codes.extend([index[t] for t in tokens])
        lengths.append(len(tokens))
    owner = np.repeat(np.arange(len(docs)), np.frombuffer(lengths, np.int64))
    return np.frombuffer(codes, np.int64), owner, list(index)


def _occurrences(codes: np.ndarray, vocabulary: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per phrase length 1-3: start positions of candidate occurrences and an id for the phrase."""
    word = np.fromiter((_is_word(t) for t in vocabulary), bool, len(vocabulary))
    edge = word & np.fromiter((t not in ENGLISH_STOP_WORDS for t in vocabulary), bool)
    is_word, is_edge = word[codes], edge[codes]  # an edge word may start or end a phrase
    n, base = len(codes), len(vocabulary)
    ones = np.flatnonzero(is_edge)
    twos = np.flatnonzero(is_edge[:-1] & is_edge[1:])
    threes = np.flatnonzero(is_edge[: n - 2] & is_word[1 : n - 1] & is_edge[2:])
    # A trigram's id numbers its first two words' pair, so ids stay far below 2**63.
    _, pair = np.unique(codes[threes] * base + codes[threes + 1], return_inverse=True)
    return [
        (ones, codes[ones]),
        (twos, codes[twos] * base + codes[twos + 1]),
        (threes, pair.ravel() * base + codes[threes + 2]),
    ]


def _phrase_table(docs: Sequence[str]) -> _Phrases:
    """Candidate phrases of all documents at once: numpy over token codes, no per-phrase loop."""
    codes, owner, vocabulary = _encode(docs)
    starts, lengths, rows, cols = [], [], [], []
    n_columns = 0
    for n, (at, ids) in enumerate(_occurrences(codes, vocabulary), start=1):
        _, first, column = np.unique(ids, return_index=True, return_inverse=True)
        starts.append(at[first])
        lengths.append(np.full(len(first), n))
        rows.append(owner[at])
        cols.append(column.ravel() + n_columns)
        n_columns += len(first)
    row, col = np.concatenate(rows), np.concatenate(cols)
    x = csr_matrix((np.ones(len(row), np.int32), (row, col)), shape=(len(docs), n_columns))
    x.data[:] = 1  # a phrase counts once per document
    return _Phrases(x, np.concatenate(starts), np.concatenate(lengths), codes, vocabulary)


def candidate_phrases(text: str) -> set[str]:
    """The 1-3-word verbatim phrases of one text (lower-cased)."""
    table = _phrase_table([text])
    return {table.text(j) for j in range(table.x.shape[1])}


def _membership(nodes: list[str], members: Mapping[str, np.ndarray], n_docs: int) -> csr_matrix:
    """Node x document indicator; a document may sit in several nodes (one per level)."""
    rows = [np.unique(np.asarray(members[n], dtype=np.int64)) for n in nodes]
    cols = np.concatenate([np.zeros(0, np.int64), *rows])
    if cols.size and (cols.min() < 0 or cols.max() >= n_docs):
        raise ValueError(f"member indices must lie in [0, {n_docs})")
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    data = np.ones(cols.size, dtype=np.int32)
    return csr_matrix((data, cols, indptr), shape=(len(nodes), n_docs))


def _sibling_groups(
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


def _scored_entries(
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


def _alphabetical(cols: np.ndarray, table: _Phrases) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's alphabetical rank among the phrases in play (the last tie-break, so
    orderings never depend on column numbers), and those phrases' texts in that order."""
    used, position = np.unique(cols, return_inverse=True)
    texts = np.array([table.text(c) for c in used], dtype=object)
    by_text = np.argsort(texts, kind="stable")
    rank = np.empty(len(used), dtype=np.int64)
    rank[by_text] = np.arange(len(used))
    return rank[position.ravel()], texts[by_text]


def _singular(word: str) -> str:
    """A crude singular, only for comparing phrases: "graphs" nests with "graph"."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _select(candidates: Iterable[tuple[str, float]]) -> NodeLabel:
    """Take phrases best first, skipping any whose word set nests with one already taken
    (plural and singular count as the same word). A longer phrase that extends a taken one
    and scores at least EXTEND_RATIO of it replaces it in place: "visual question answering"
    reads better than "answering"."""
    chosen: list[tuple[str, float, frozenset[str]]] = []
    for seen, (phrase, score) in enumerate(candidates):
        if seen == SCAN_LIMIT or (len(chosen) == LONG_PHRASES and not _extendable(chosen, score)):
            break
        words = frozenset(_singular(w) for w in phrase.split())
        nested = [i for i, (_, _, w) in enumerate(chosen) if words <= w or w <= words]
        if not nested and len(chosen) < LONG_PHRASES:
            chosen.append((phrase, score, words))
        elif len(nested) == 1 and _extends(words, score, chosen[nested[0]]):
            chosen[nested[0]] = (phrase, chosen[nested[0]][1], words)
    if not chosen:
        return NodeLabel(short=NO_PHRASES, long=NO_PHRASES, phrases=())
    n_short = 2 if len(chosen) > 1 and chosen[1][1] >= SHORT_SECOND_RATIO * chosen[0][1] else 1
    best = tuple(p for p, _, _ in chosen)
    return NodeLabel(short=", ".join(best[:n_short]), long=", ".join(best), phrases=best)


def _extends(words: frozenset[str], score: float, taken: tuple[str, float, frozenset[str]]) -> bool:
    return words > taken[2] and score >= EXTEND_RATIO * taken[1]


def _extendable(chosen: list[tuple[str, float, frozenset[str]]], score: float) -> bool:
    """Whether a candidate of this score could still extend a taken phrase."""
    return any(score >= EXTEND_RATIO * s for _, s, _ in chosen)


def label_nodes(
    docs: Sequence[str],
    members: Mapping[str, np.ndarray],
    parent_of: Mapping[str, str | None],
) -> dict[str, NodeLabel]:
    """A short and a long phrase label for every node, ranked against its siblings."""
    nodes = list(members)
    table = _phrase_table(docs)
    membership = _membership(nodes, members, len(docs))
    sizes = np.diff(membership.indptr).astype(np.float64)
    siblings = _sibling_groups(nodes, parent_of, sizes, len(docs))
    corpus_df = np.asarray(table.x.sum(axis=0), dtype=np.float64).ravel()
    df = (membership @ table.x).tocsr()
    rows, cols, scores = _scored_entries(df, sizes, siblings, corpus_df)
    rank, texts = _alphabetical(cols, table)
    # By node; best score first, the longer phrase on ties, then the phrase text.
    order = np.lexsort((rank, -table.length[cols], -scores, rows))
    rows, rank, scores = rows[order], rank[order], scores[order]
    bounds = np.searchsorted(rows, np.arange(len(nodes) + 1))
    labels: dict[str, NodeLabel] = {}
    for i, node in enumerate(nodes):
        span = range(bounds[i], bounds[i + 1])
        # Lazy: the walk stops after LONG_PHRASES picks, long before a big node's candidates end.
        labels[node] = _select((texts[rank[k]], float(scores[k])) for k in span)
    return labels
