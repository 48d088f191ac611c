"""Phrase labels for the nodes of a topic hierarchy (areas > topics > subtopics).

Labels are phrases a reader can find in the abstracts (`explorer/build/phrases.py`: runs of
1-5 words with no stop word at either end). A node's phrases are ranked against its siblings
by class-based TF-IDF, df(x, c) / n(c) * log(1 + A / f(x)), f summing df over the siblings and
A their mean size, so what the whole parent shares does not repeat in every child; a node
without siblings is ranked against the rest of the corpus. Each score is multiplied by the
phrase's specificity against the venue background (`explorer/build/background.py`), so
boilerplate ("propose", "novel method") never labels anything; a parent's score also by how
evenly its children use the phrase, so an area is named by what its topics share.

The best phrases are taken first. A phrase gives way to a longer candidate that holds it
when most of the node's papers that use it use the longer one ("chain monte carlo" becomes
"markov chain monte carlo"); two taken phrases that one longer candidate joins become it
("word", "embedding" -> "word embedding"); a phrase that is a form of one already taken
(inflection, nesting, abbreviation and expansion) is skipped, or replaces it when it says
more. Last, siblings never share a short label, and a parent does not repeat a child's
unless that child holds most of its papers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from explorer.build import terms
from explorer.build.background import specificity
from explorer.build.phrases import Phrases, candidate_phrases, phrase_table, superphrases

__all__ = ["NO_PHRASES", "NodeLabel", "candidate_phrases", "label_nodes", "label_sample"]

LONG_PHRASES = 8
# The map shows a second phrase only when it is nearly as characteristic as the first.
SHORT_SECOND_RATIO = 0.5
# A longer phrase replaces a taken phrase it extends when it scores at least this share of it.
EXTEND_RATIO = 0.6
# Candidates read per node at most: extensions are looked for among the best ones only.
SCAN_LIMIT = 200
# Phrases of up to this many words are ranked; longer ones come in only as the whole term a
# ranked phrase is a fragment of.
RANKED_WORDS = 3
# A phrase is a fragment of a longer candidate that holds it when at least this share of the
# node's papers using it use the longer one: then the longer one is taken instead.
WHOLE_SHARE = 0.75
# A ranked phrase loses a boilerplate first word when the rest is this many times as used.
TRIM_RATIO = 1.5
# Two taken phrases that one longer candidate holds together give way to it when at least
# this share of the rarer one's papers (in the node) use it.
JOINT_SHARE = 0.5
# A parent keeps a child's short label only when that child holds this share of its papers.
ESSENTIAL_SHARE = 0.8
NO_PHRASES = "(no phrases)"
# Above this many documents labels are read from a sample of about this many (stratified by
# each document's finest node): the phrase table of a million abstracts would not fit in
# memory, and shares of a phrase among a node's papers are as well estimated from a tenth.
LABEL_SAMPLE = 100_000
# In a sample, every finest node keeps at least this many documents (all of a smaller one),
# so a small subtopic is still labelled from enough abstracts.
LABEL_FLOOR = 50


@dataclass(frozen=True)
class NodeLabel:
    """One node's label: `short` for the map, where space is scarce; `long` for tables."""

    short: str
    long: str
    phrases: tuple[str, ...]  # the chosen phrases, best first (at most LONG_PHRASES)


def _check_members(members: Mapping[str, np.ndarray], n_docs: int) -> None:
    """Refuse member indices outside the documents (numpy would wrap a negative one)."""
    for rows in members.values():
        rows = np.asarray(rows)
        if rows.size and (rows.min() < 0 or rows.max() >= n_docs):
            raise ValueError(f"member indices must lie in [0, {n_docs})")


def membership_matrix(
    nodes: list[str], members: Mapping[str, np.ndarray], n_docs: int
) -> csr_matrix:
    """Node x document indicator; a document may sit in several nodes (one per level)."""
    _check_members(members, n_docs)
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


def _row_values(df: csr_matrix, row: int, cols: np.ndarray) -> np.ndarray:
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
        own = _row_values(df, parent, cols[span]) / sizes[parent]
        total = np.zeros(len(own))
        for kid in kids:
            total += np.minimum(1.0, _row_values(df, kid, cols[span]) / sizes[kid] / own)
        out[span] = total / len(kids)
    return out


def _forms(table: Phrases, columns: np.ndarray) -> np.ndarray:
    """Per column, an id that `columns` share exactly when their words are one term's up to
    inflection ("markov decision process" and "markov decision processes"), -1 for columns
    outside `columns`: the whole-term search adds up such phrases' counts, and numbering
    them once here spares it reading every candidate's words back per node."""
    singular: dict[str, int] = {}
    word_form = np.fromiter(
        (singular.setdefault(terms.singular(w), len(singular)) for w in table.vocabulary),
        np.int64,
        len(table.vocabulary),
    )
    pad = len(singular)  # no word: a shorter phrase's missing tail
    start, length = table.start[columns], table.length[columns]
    ids = np.zeros(len(columns), np.int64)
    for k in range(int(length.max(initial=0))):
        here = length > k
        code = np.where(here, word_form[table.codes[np.where(here, start + k, 0)]], pad)
        ids = np.unique(ids * (pad + 1) + code, return_inverse=True)[1].ravel()
    forms = np.full(table.x.shape[1], -1, np.int64)
    forms[columns] = ids
    return forms


class _Terms:
    """What one node's papers say about longer terms holding its phrases."""

    def __init__(
        self,
        table: Phrases,
        df: csr_matrix,
        row: int,
        links: tuple[np.ndarray, np.ndarray],
        forms: np.ndarray,
        col_of: dict,
    ):
        self.table, self.df, self.row, self.links = table, df, row, links
        self.forms, self.col_of = forms, col_of

    def _supers(self, col: int, end: int | None = None) -> np.ndarray:
        """The candidates holding column `col` (sorted), those below column `end` if given."""
        indptr, indices = self.links
        supers = indices[indptr[col] : indptr[col + 1]]
        return supers if end is None else supers[: np.searchsorted(supers, end)]

    def _usable(
        self, cols: np.ndarray, need: float, within: str
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Those of `cols` that `need` (and 2) of the node's papers use, inflections counted
        together ("markov decision process" and "... processes"), that say more than
        `within` without boilerplate (`adds_meaning`): columns, group and own counts."""
        own = _row_values(self.df, self.row, cols)
        keep = own >= 2
        cols, own = cols[keep], own[keep]
        _, form = np.unique(self.forms[cols], return_inverse=True)
        group = np.bincount(form.ravel(), weights=own)[form.ravel()]
        old = set(terms.content_words(within))
        fine = np.flatnonzero(group >= need)
        fine = fine[np.array([adds_meaning(self.table.text(c), old) for c in cols[fine]], bool)]
        return cols[fine], group[fine], own[fine]

    def _count(self, col: int) -> float:
        return float(_row_values(self.df, self.row, np.array([col]))[0])

    def _text(self, col: int) -> str:
        text = self.table.text(col)
        self.col_of.setdefault(text, col)
        return text

    def trimmed(self, phrase: str) -> str:
        """The phrase without a boilerplate first word ("existing active learning" ->
        "active learning") when the rest is a candidate at least TRIM_RATIO times as many of
        the node's papers use; a single word is left only when its whole term has several
        ("existing active" -> "active learning", but "generalization bound" stays)."""
        words = phrase.split()
        while len(words) > 1 and specificity(words[0]) == 0:
            rest = " ".join(words[1:])
            mine, theirs = self.col_of.get(" ".join(words)), self.col_of.get(rest)
            if mine is None or theirs is None:
                break
            if self._count(theirs) < TRIM_RATIO * self._count(mine):
                break
            if len(words) == 2:
                grown = self.whole(rest)
                return grown if len(grown.split()) > 1 else phrase
            words = words[1:]
        return " ".join(words)

    def whole(self, phrase: str) -> str:
        """The longest candidate that holds `phrase` and is used by WHOLE_SHARE of the node's
        papers using it, repeated until no longer one qualifies."""
        col = self.col_of.get(phrase)
        if col is None:
            return phrase
        while True:
            need = max(2.0, WHOLE_SHARE * self._count(col))
            cols, group, own = self._usable(self._supers(col), need, self.table.text(col))
            if not len(cols):
                return self._text(col)
            order = np.lexsort((cols, -own, -group, -self.table.length[cols]))
            col = int(cols[order[0]])

    def joint(self, a: str, b: str) -> str | None:
        """A candidate made of both phrases' content words and no other ("word" and
        "embedding": "word embedding") that JOINT_SHARE of the rarer one's papers use."""
        ca, cb = self.col_of.get(a), self.col_of.get(b)
        if ca is None or cb is None:
            return None
        words = set(terms.content_words(a)) | set(terms.content_words(b))
        # Columns run by phrase length, so the short enough supersets are a prefix of each.
        end = self.table.columns_up_to(len(a.split()) + len(b.split()) + 1)
        both = _sorted_common(self._supers(ca, end), self._supers(cb, end))
        texts = [self.table.text(c) for c in both]
        same = np.array([set(terms.content_words(t)) == words for t in texts], dtype=bool)
        # Joined by a stop word ("method of multipliers"), most of the rarer one's papers
        # must use the joint term, as for a whole term.
        share = np.array([JOINT_SHARE if len(t.split()) == len(terms.content_words(t))
                          else WHOLE_SHARE for t in texts])  # fmt: skip
        counts = _row_values(self.df, self.row, both)
        need = np.maximum(2.0, share * min(self._count(ca), self._count(cb)))
        fine = same & (counts >= need) & np.array([specificity(t) > 0 for t in texts], bool)
        cols, counts = both[fine], counts[fine]
        if not len(cols):
            return None
        best = int(cols[np.lexsort((cols, self.table.length[cols], -counts))[0]])
        return self.whole(self._text(best))


def _sorted_common(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The values of `a` also in `b`, both sorted (repeats kept): the shorter looked up in the
    longer, so a common word's hundred thousand supersets are never sorted again
    (np.intersect1d would)."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a):
        return a
    at = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return a[b[at] == a]


def adds_meaning(phrase: str, old: set[str]) -> bool:
    """Whether a longer phrase holding `old`'s words says more without saying boilerplate:
    it is no boilerplate, starts with no boilerplate word it adds ("state-of-the-art batch
    bayesian optimization"), and, holding a stop word as a piece of a sentence does ("test
    them on image benchmarks"), adds only words that are none. A boilerplate word that ends
    a term is fine ("reproducing kernel hilbert space", "markov decision process")."""
    if specificity(phrase) == 0:
        return False
    words = terms.content_words(phrase)
    added = [specificity(w) > 0 for w in words if w not in old]
    if not added or (words[0] not in old and specificity(words[0]) == 0):
        return False
    return all(added) or len(words) == len(phrase.split())


def _better_form(phrase: str, candidate: str, score: float, taken: list) -> bool:
    """Whether `phrase` (the whole term of the ranked `candidate`) should replace the taken
    phrase it is a form of: it spells out the taken abbreviation, or the candidate itself
    extends the taken phrase and scores at least EXTEND_RATIO of it."""
    if terms.abbreviates(taken[0], phrase):
        return True
    return terms.extends(candidate, taken[0]) and score >= EXTEND_RATIO * taken[1]


def _select(candidates: Iterable[tuple[str, float]], context: _Terms | None = None) -> NodeLabel:
    """Take phrases best first (see the module's docstring for what gives way to what)."""
    chosen: list[list] = []  # [phrase, score]
    for seen, (candidate, score) in enumerate(candidates):
        if seen == SCAN_LIMIT or (len(chosen) == LONG_PHRASES and not _extendable(chosen, score)):
            break
        phrase = candidate
        if context:  # trimmed before and after: "existing active" -> "existing active learning"
            candidate = context.trimmed(candidate)
            phrase = context.trimmed(context.whole(candidate))
        clash = [i for i, (p, _) in enumerate(chosen) if terms.same_term(phrase, p)]
        # Whether it replaces what it clashes with is the ranked phrase's own merit.
        if len(clash) == 1 and _better_form(phrase, candidate, score, chosen[clash[0]]):
            if not any(terms.same_term(phrase, p) for p, _ in _others(chosen, clash[0])):
                chosen[clash[0]][0] = phrase
        elif (
            not clash
            and not (context and _joined(chosen, phrase, context))
            and len(chosen) < LONG_PHRASES
        ):
            chosen.append([phrase, score])
    if not chosen:
        return NodeLabel(short=NO_PHRASES, long=NO_PHRASES, phrases=())
    n_short = 2 if len(chosen) > 1 and chosen[1][1] >= SHORT_SECOND_RATIO * chosen[0][1] else 1
    best = tuple(p for p, _ in chosen)
    return NodeLabel(short=", ".join(best[:n_short]), long=", ".join(best), phrases=best)


def _others(chosen: list[list], skip: int) -> list[list]:
    return [c for i, c in enumerate(chosen) if i != skip]


def _joined(chosen: list[list], phrase: str, context: _Terms) -> bool:
    """Replace a taken phrase by the longer term joining it with `phrase`, if there is one."""
    for i, (taken, _) in enumerate(chosen):
        term = context.joint(phrase, taken)
        term = context.trimmed(term) if term else None
        if term == taken:  # only a boilerplate word joined them
            continue
        if term and not any(terms.same_term(term, p) for p, _ in _others(chosen, i)):
            chosen[i][0] = term
            return True
    return False


def _extendable(chosen: list[list], score: float) -> bool:
    """Whether a candidate of this score could still extend a taken phrase."""
    return any(score >= EXTEND_RATIO * s for _, s in chosen)


def _reworded(label: NodeLabel, avoid: set[str]) -> NodeLabel | None:
    """The label led by its best phrase outside `avoid` (alone on the map), if it has one."""
    for lead in label.phrases:
        if lead not in avoid:
            phrases = (lead, *(p for p in label.phrases if p != lead))
            return NodeLabel(short=lead, long=", ".join(phrases), phrases=phrases)
    return None


def _distinct(
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
    _check_members(members, len(docs))
    whole_size = {n: len(np.unique(m)) for n, m in members.items()}
    kept = label_sample(members, parent_of, len(docs), sample, seed)
    if kept is not None:
        docs = [docs[i] for i in kept]
        members = {n: np.searchsorted(kept, np.intersect1d(m, kept)) for n, m in members.items()}
    nodes = list(members)
    table = phrase_table(docs)
    membership = membership_matrix(nodes, members, len(docs))
    sizes = np.diff(membership.indptr).astype(np.float64)
    siblings = sibling_groups(nodes, parent_of, sizes, len(docs))
    corpus_df = np.asarray(table.x.sum(axis=0), dtype=np.float64).ravel()
    df = (membership @ table.x).tocsr()
    df.sort_indices()
    rows, cols, scores = scored_entries(df, sizes, siblings, corpus_df)
    scores = scores * _coverage(df, sizes, nodes, parent_of, rows, cols)
    used, position = np.unique(cols, return_inverse=True)
    texts = np.array([table.text(c) for c in used], dtype=object)
    weight = np.fromiter((specificity(t) for t in texts), np.float64, len(texts))
    scores = scores * weight[position.ravel()]
    # Boilerplate is never a candidate; longer phrases come in only as whole terms.
    keep = (scores > 0) & (table.length[cols] <= RANKED_WORDS)
    rows, position, scores = rows[keep], position.ravel()[keep], scores[keep]
    by_text = np.argsort(texts, kind="stable")
    rank = np.empty(len(used), dtype=np.int64)
    rank[by_text] = np.arange(len(used))
    # By node; best score first, the longer phrase on ties, then the phrase text.
    order = np.lexsort((rank[position], -table.length[used[position]], -scores, rows))
    rows, position, scores = rows[order], position[order], scores[order]
    bounds = np.searchsorted(rows, np.arange(len(nodes) + 1))
    links = superphrases(table, corpus_df >= 2)
    forms = _forms(table, np.flatnonzero((corpus_df >= 2) & (table.length >= 2)))
    col_of = dict(zip(texts.tolist(), used.tolist(), strict=True))
    labels: dict[str, NodeLabel] = {}
    for i, node in enumerate(nodes):
        span = range(bounds[i], bounds[i + 1])
        context = _Terms(table, df, i, links, forms, col_of)
        # Lazy: the walk stops after LONG_PHRASES picks, long before a big node's candidates end.
        labels[node] = _select(((texts[position[k]], float(scores[k])) for k in span), context)
    return _distinct(labels, parent_of, whole_size)
