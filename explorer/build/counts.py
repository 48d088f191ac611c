"""Each paper's words counted once: the papers x terms matrix that BERTopic's c-TF-IDF and
merge tree, the keyword statistics and NPMI coherence all read.

BERTopic joins each topic's abstracts into one text and analyses it whole, once to fit its
c-TF-IDF and again for the merge tree; at a million papers those joined texts and their
token lists held 6-9 GB on top of the build. Here the analyser runs over each paper once,
in blocks, and BERTopic is handed paper numbers in place of texts (`paper_keys`): its
vectorizer (`PaperCounts`) adds up the rows of the numbered papers, and its embedder
(`paper_embedder`) looks their vectors up. Only candidate keywords are embedded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix, vstack
from sklearn.feature_extraction.text import CountVectorizer

if TYPE_CHECKING:
    from bertopic.backend import BaseEmbedder

# Terms the keyword statistics, coherence and the doc-terms artifact keep: the most
# widespread, by the number of papers using them (the c-TF-IDF reads every term).
MAX_VOCABULARY = 30_000
# Papers analysed at a time: one block's token lists, not the corpus's, are held at once.
COUNT_BLOCK = 50_000


def make_vectorizer(*, min_df: int, **overrides) -> CountVectorizer:
    """A CountVectorizer with the project's tokenisation, shared by the topic model's
    c-TF-IDF and the keyword statistics, so a keyword in a topic is a term the Trends page
    can count: `phrases.keyword_terms` (words and adjacent pairs of the prose, a hyphenated
    word whole, as in the label phrases and the venue background: "state-of-the-art" stays
    one boilerplate term instead of leaving "state art").
    """
    from explorer.build.labels.phrases import keyword_terms

    return CountVectorizer(min_df=min_df, analyzer=keyword_terms, **overrides)


@dataclass(frozen=True)
class PaperTerms:
    """How often each paper uses each term (CSR, int32, row i for paper i), and the terms
    (sorted, column j for term j)."""

    counts: csr_matrix
    vocabulary: np.ndarray

    def presence(self) -> csr_matrix:
        """Which papers use which term (1 where the count is positive), sharing the
        counts' index arrays."""
        ones = np.ones_like(self.counts.data)
        return csr_matrix((ones, self.counts.indices, self.counts.indptr), self.counts.shape)

    def widest(self, limit: int = MAX_VOCABULARY) -> PaperTerms:
        """Only the `limit` terms the most papers use (ties by name): what the per-class
        keyword tables and the Trends page can hold."""
        df = np.bincount(self.counts.indices, minlength=len(self.vocabulary))
        keep = _most_widespread(self.vocabulary, df, 1, limit)
        if len(keep) == len(self.vocabulary):
            return self
        counts = self.counts[:, keep].tocsr()
        counts.sort_indices()
        return PaperTerms(counts, self.vocabulary[keep])


def count_terms(docs: list[str], *, min_df: int, block: int = COUNT_BLOCK) -> PaperTerms:
    """Every paper's terms counted in blocks of `block` papers, then the terms used by at
    least `min_df` papers (`PaperTerms.widest` caps them).

    One block's token lists are held at a time, and the blocks' counts once; the index of
    every distinct term met grows with the corpus (at a million synthetic papers made from
    23,000 real abstracts it stays that corpus's; a million real ones would hold far more)."""
    index: dict[str, int] = {}
    parts: list[csr_matrix] = []
    df = np.zeros(0, dtype=np.int64)
    for start in range(0, len(docs), block):
        parts.append(_count_block(docs[start : start + block], index))
        df = _added(df, np.bincount(parts[-1].indices, minlength=len(index)))
    names = np.array(list(index), dtype=object)
    keep = _most_widespread(names, df, min_df, len(names))
    column = np.full(len(names), -1, dtype=np.int64)
    column[keep] = np.arange(len(keep))
    kept = []
    while parts:  # each block renumbered to the kept terms and let go of
        kept.append(_renumbered(parts.pop(0), column, len(keep)))
    if not kept:
        return PaperTerms(csr_matrix((0, 0), dtype=np.int32), names[:0])
    counts = vstack(kept, format="csr", dtype=np.int32)
    return PaperTerms(counts, names[keep])


def _added(total: np.ndarray, more: np.ndarray) -> np.ndarray:
    """Two per-term tallies added, the shorter padded (later blocks meet new terms)."""
    out = np.zeros(max(len(total), len(more)), dtype=np.int64)
    out[: len(total)] += total
    out[: len(more)] += more
    return out


def _most_widespread(names: np.ndarray, df: np.ndarray, min_df: int, limit: int) -> np.ndarray:
    """Indices of the terms used by at least `min_df` papers, the `limit` most widespread
    (ties at the cut by name), in the order of their names."""
    eligible = np.flatnonzero(df >= min_df)
    if len(eligible) > limit:
        cut = np.sort(df[eligible])[::-1][limit - 1]
        above = eligible[df[eligible] > cut]
        tied = eligible[df[eligible] == cut]
        tied = tied[np.argsort(names[tied], kind="stable")][: limit - len(above)]
        eligible = np.concatenate([above, tied])
    return eligible[np.argsort(names[eligible], kind="stable")]


def _renumbered(part: csr_matrix, column: np.ndarray, width: int) -> csr_matrix:
    """A block's counts over the kept terms only (`column[j]`: term j's new column, -1
    when dropped), each row's columns in order."""
    new = column[part.indices]
    keep = new >= 0
    rows = np.repeat(np.arange(part.shape[0]), np.diff(part.indptr))[keep]
    out = csr_matrix(
        (part.data[keep], (rows, new[keep].astype(np.int32))),
        shape=(part.shape[0], width),
        dtype=np.int32,
    )
    out.sort_indices()
    return out


def _count_block(docs: list[str], index: dict[str, int]) -> csr_matrix:
    """One block's counts, their columns numbered in `index` (terms first met here added)."""
    vectorizer = make_vectorizer(min_df=1, dtype=np.int32)
    try:
        matrix = vectorizer.fit_transform(docs).tocsr()
    except ValueError:  # no term in any of these papers
        return csr_matrix((len(docs), 0), dtype=np.int32)
    columns = np.array(
        [index.setdefault(t, len(index)) for t in vectorizer.get_feature_names_out()],
        dtype=np.int32,
    )
    matrix.indices = columns[matrix.indices]
    return matrix


def paper_keys(n: int) -> list[str]:
    """The stand-ins BERTopic is given for n papers' texts: their row numbers, as words that
    survive its text clean-up (letters and digits only) and its joining of a topic's texts."""
    return [str(i) for i in range(n)]


def rows_of(key_text: str) -> np.ndarray:
    """The paper rows named in a text of `paper_keys` (one key, or a topic's joined)."""
    return np.array(key_text.split(), dtype=np.int64)


class PaperCounts(CountVectorizer):
    """BERTopic's vectorizer over `paper_keys`: a text's counts are the sum of its papers'
    rows of the precomputed counts. Fitting keeps the vocabulary it was given (BERTopic
    fits on the topics' joined texts; the vocabulary here is the corpus's, by paper).
    It stays a CountVectorizer, so BERTopic's save records its parameters and vocabulary."""

    def attach(self, terms: PaperTerms) -> PaperCounts:
        self.terms_ = terms
        self.vocabulary_ = {str(t): j for j, t in enumerate(terms.vocabulary)}
        return self

    def fit(self, raw_documents, y=None) -> PaperCounts:
        return self

    def fit_transform(self, raw_documents, y=None) -> csr_matrix:
        return self.transform(raw_documents)

    def transform(self, raw_documents) -> csr_matrix:
        rows = [rows_of(text) for text in raw_documents]
        which = np.concatenate(rows) if rows else np.array([], dtype=np.int64)
        owner = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
        n_papers = self.terms_.counts.shape[0]
        pick = csr_matrix((np.ones(len(which), np.int32), (owner, which)), (len(rows), n_papers))
        return (pick @ self.terms_.counts).astype(np.int64).tocsr()

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        return self.terms_.vocabulary


def paper_embedder(
    vectors: np.ndarray, embed_words: Callable[[list[str]], np.ndarray]
) -> BaseEmbedder:
    """A BERTopic embedder for `paper_keys`: a paper's vector is its row of `vectors` (the
    build's own), anything else is a candidate keyword and goes through `embed_words` (the
    embedding cache). KeyBERTInspired asks for both as "documents"; a key is all digits,
    which no keyword is (`phrases.keyword_terms` drops pure numbers)."""
    from bertopic.backend import BaseEmbedder

    def embed(items) -> np.ndarray:
        items = list(items)
        is_key = np.array([item.isdigit() for item in items], dtype=bool)
        out = np.empty((len(items), vectors.shape[1]), dtype=vectors.dtype)
        out[is_key] = vectors[[int(k) for k, key in zip(items, is_key, strict=True) if key]]
        if not is_key.all():
            out[~is_key] = embed_words([w for w, key in zip(items, is_key, strict=True) if not key])
        return out

    class PaperEmbedder(BaseEmbedder):
        def embed(self, documents, verbose: bool = False) -> np.ndarray:
            return embed(documents)

    return PaperEmbedder()
