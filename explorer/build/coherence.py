"""Topic coherence (NPMI) per node and topic diversity per level.

A node's top words are its TOP_WORDS best single words of the topic model's vocabulary
(stop words already out), ranked as BERTopic ranks a topic's words, by class-based TF-IDF
against the rest of the corpus, boilerplate left out (specificity 0 against the venue
background). Weighting them by their specificity as well favoured rare words that seldom
meet (ICML 2013-2019: leaf NPMI 0.146 against 0.211 with boilerplate merely left out, stock
BERTopic 0.184); ranked against its siblings, as its labels are, they came out rarer still
(0.068). Its coherence is
the mean normalised pointwise mutual information of every pair of them over the corpus's own
abstracts, a document being the window: NPMI(a, b) = log(p(a, b) / (p(a) p(b))) / -log p(a, b),
-1 for words that never meet and 1 for words that always do. A level's diversity is the share
of distinct words among all its nodes' top words (1: no two nodes share a top word). The
same functions score stock BERTopic's topics in `bench/quality.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from explorer.build.background import specificity

TOP_WORDS = 10
# A node whose top words co-occur less than chance would have them is marked.
LOW_COHERENCE = 0.0


def npmi(matrix: csr_matrix, columns: Sequence[int]) -> float:
    """Mean NPMI over the pairs of `columns` of a binary document x term matrix (NaN for
    fewer than two words)."""
    columns = list(dict.fromkeys(int(c) for c in columns))
    if len(columns) < 2 or matrix.shape[0] == 0:
        return float("nan")
    return float(np.mean(pair_npmi(matrix, columns)[np.triu_indices(len(columns), k=1)]))


def pair_npmi(matrix: csr_matrix, columns: Sequence[int]) -> np.ndarray:
    """NPMI of every pair of `columns` (distinct) of a binary document x term matrix, as a
    square array (its diagonal means nothing): what `npmi` averages, and what
    bench/label_limits.py picks words by."""
    sub = (matrix[:, list(columns)] > 0).astype(np.float64)
    joint = np.asarray((sub.T @ sub).todense()) / matrix.shape[0]
    single = np.diag(joint).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(joint / np.outer(single, single)) / -np.log(joint)
    value = np.where(joint == 0, -1.0, value)
    return np.where(joint >= 1, 1.0, value)  # a pair in every document: -log p = 0


def diversity(word_lists: Sequence[Sequence[str]]) -> float:
    """Share of distinct words among all the lists' words (NaN when there are none)."""
    words = [w for words in word_lists for w in words]
    return len(set(words)) / len(words) if words else float("nan")


@dataclass(frozen=True)
class WordCounts:
    """Per node, how many of its papers use each single word of the vocabulary: what its
    top words are ranked from."""

    df: csr_matrix  # node x single word, sorted indices
    sizes: np.ndarray  # papers per node
    corpus_df: np.ndarray  # papers per single word in the whole corpus
    n_docs: int
    names: np.ndarray  # the single words

    def merged(self, groups: Sequence[Sequence[int]]) -> WordCounts:
        """The counts of nodes each made of a group of these rows that share no paper (the
        merge tree's parents, made of topics): their rows summed."""
        rows = np.concatenate([np.zeros(0, np.int64), *(np.asarray(g, np.int64) for g in groups)])
        indptr = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
        ones = np.ones(len(rows), dtype=np.int32)
        union = csr_matrix((ones, rows, indptr), shape=(len(groups), self.df.shape[0]))
        df = (union @ self.df).tocsr()
        df.sort_indices()
        return replace(self, df=df, sizes=union @ self.sizes)


def word_counts(
    matrix: csr_matrix, vocabulary: Sequence[str], members: Mapping[str, np.ndarray]
) -> WordCounts:
    """The single words' counts of every node of `members`, in its order."""
    from explorer.build.labels.ranking import membership_matrix

    vocabulary = np.asarray(vocabulary, dtype=object)
    single = np.flatnonzero(_single(vocabulary))
    words = matrix[:, single].tocsr()
    membership = membership_matrix(list(members), members, matrix.shape[0])
    df = (membership @ words).tocsr()
    df.sort_indices()
    return WordCounts(
        df=df,
        sizes=np.diff(membership.indptr).astype(np.float64),
        corpus_df=np.asarray(words.sum(axis=0), dtype=np.float64).ravel(),
        n_docs=matrix.shape[0],
        names=vocabulary[single],
    )


def ranked_words(
    counts: WordCounts,
    *,
    n: int = TOP_WORDS,
    weights: np.ndarray | None = None,
    by_specificity: bool = False,
) -> list[list[str]]:
    """Each row's `n` best words (see the module docstring); `weights`, one per single word,
    is their specificity when the caller has it already (the build's vocabulary table), so
    it is not scored twice. `by_specificity` weights each score by it, as labels are
    weighted: a name, where coherent words matter less than telling words."""
    rows, cols, _ = scored_words(counts, weights=weights, by_specificity=by_specificity)
    bounds = np.searchsorted(rows, np.arange(counts.df.shape[0] + 1))
    names = counts.names
    return [
        [str(names[c]) for c in cols[a:b][:n]] for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def scored_words(
    counts: WordCounts, *, weights: np.ndarray | None = None, by_specificity: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (node, single word, score) `ranked_words` ranks from, by node and best first
    (ties by word), boilerplate left out: the whole ranking, not only the top words."""
    from explorer.build.labels.ranking import scored_entries, sibling_groups

    names, nodes = counts.names, [str(k) for k in range(counts.df.shape[0])]
    # Every node its own sibling group: each is ranked against the rest of the corpus.
    siblings = sibling_groups(nodes, {k: k for k in nodes}, counts.sizes, counts.n_docs)
    rows, cols, scores = scored_entries(counts.df, counts.sizes, siblings, counts.corpus_df)
    used, position = np.unique(cols, return_inverse=True)
    if weights is None:
        weight = np.fromiter((specificity(str(names[c])) for c in used), np.float64, len(used))
    else:
        weight = np.asarray(weights, dtype=np.float64)[used]
    weight = weight[position.ravel()]
    scores = scores * weight if by_specificity else scores
    keep = (scores > 0) & (weight > 0)
    rows, cols, scores = rows[keep], cols[keep], scores[keep]
    order = np.lexsort((names[cols].astype(str), -scores, rows))
    return rows[order], cols[order], scores[order]


def single_word_weights(vocabulary: Sequence[str], weights: np.ndarray) -> np.ndarray:
    """The weights of the vocabulary's single words, in `WordCounts.names`'s order."""
    return np.asarray(weights, dtype=np.float64)[_single(vocabulary)]


def _single(vocabulary: Sequence[str]) -> np.ndarray:
    """Which terms of the vocabulary are single words (the others are phrases)."""
    return np.array([" " not in str(t) for t in vocabulary], dtype=bool)


def with_coherence(
    nodes: pd.DataFrame,
    matrix: csr_matrix,
    vocabulary: Sequence[str],
    best: Mapping[str, list[str]],
) -> pd.DataFrame:
    """The node table with each node's `top_words` (`best`, from `ranked_words`) and their
    NPMI `coherence`."""
    column = {str(t): i for i, t in enumerate(vocabulary)}
    nodes = nodes.copy()
    nodes["top_words"] = [best.get(n, []) for n in nodes["node_id"]]
    nodes["coherence"] = [npmi(matrix, [column[w] for w in words]) for words in nodes["top_words"]]
    return nodes


def level_quality(nodes: pd.DataFrame, levels: Sequence[str]) -> dict[str, dict]:
    """Per level: mean coherence, diversity and the number of low-coherence nodes."""
    out: dict[str, dict] = {}
    if "coherence" not in nodes:
        return out
    for level in levels:
        at = nodes[nodes["level"] == level]
        if at.empty:
            continue
        scores = at["coherence"].dropna()
        out[level] = {
            "coherence": round(float(scores.mean()), 4) if len(scores) else None,
            "diversity": round(diversity(at["top_words"].tolist()), 4),
            "low_coherence": int((scores < LOW_COHERENCE).sum()),
        }
    return out
