"""Scores for free-text search: papers ranked by embedding similarity, or by TF-IDF without
a model (the search box, explorer.view.ui.search_box, decides which).

Light (numpy, re) so the viewer can import it: the query's embedding is computed by
the caller, which decides whether a model is available; this module only scores.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from explorer.vectors import float32_blocks

_TOKEN = re.compile(r"\w\w+")
# Words that carry no topic in a paper abstract; TF-IDF down-weights the rest of the
# common ones by itself.
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "are",
        "was",
        "were",
        "our",
        "which",
        "these",
        "their",
        "than",
        "into",
        "can",
        "has",
        "have",
        "been",
        "its",
        "also",
        "such",
        "using",
        "use",
        "used",
        "based",
        "via",
        "over",
        "under",
        "between",
        "both",
        "how",
        "what",
        "when",
        "where",
        "who",
        "why",
        "not",
        "but",
        "all",
        "any",
        "each",
        "more",
        "most",
        "other",
        "some",
        "only",
        "new",
        "show",
        "we",
        "paper",
        "papers",
        "about",
        "on",
        "of",
        "in",
        "to",
        "a",
        "an",
        "by",
        "as",
        "at",
        "be",
        "or",
        "is",
        "it",
    ]
)


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


@dataclass(frozen=True)
class LexicalIndex:
    """An inverted index of title + abstract words: postings per term, idf, doc norms."""

    vocabulary: dict[str, int]
    indptr: np.ndarray  # postings of term t: docs[indptr[t]:indptr[t + 1]]
    docs: np.ndarray
    idf: np.ndarray
    doc_norm: np.ndarray  # sqrt of the summed idf^2 of each document's distinct terms


def build_lexical_index(texts: Iterable[str]) -> LexicalIndex:
    """Index each text's distinct words (binary term frequency, smoothed idf)."""
    vocabulary: dict[str, int] = {}
    doc_of: list[int] = []
    term_of: list[int] = []
    n_docs = 0
    for doc, text in enumerate(texts):
        n_docs = doc + 1
        for word in set(tokens(text)):
            term = vocabulary.setdefault(word, len(vocabulary))
            term_of.append(term)
            doc_of.append(doc)
    terms = np.asarray(term_of, dtype=np.int64)
    docs = np.asarray(doc_of, dtype=np.int64)
    order = np.argsort(terms, kind="stable")
    df = np.bincount(terms, minlength=len(vocabulary))
    indptr = np.concatenate([[0], np.cumsum(df)])
    idf = np.log((1 + n_docs) / (1 + df)) + 1.0
    norm = np.sqrt(np.bincount(docs, weights=idf[terms] ** 2, minlength=n_docs))
    return LexicalIndex(vocabulary, indptr, docs[order], idf, np.maximum(norm, 1e-12))


def lexical_scores(index: LexicalIndex, query: str) -> np.ndarray:
    """Cosine between the query's and each document's TF-IDF vectors (binary tf)."""
    scores = np.zeros(len(index.doc_norm), dtype=np.float64)
    terms = [index.vocabulary[w] for w in set(tokens(query)) if w in index.vocabulary]
    if not terms:
        return scores
    for term in terms:
        postings = index.docs[index.indptr[term] : index.indptr[term + 1]]
        scores[postings] += index.idf[term] ** 2
    query_norm = np.sqrt(sum(index.idf[t] ** 2 for t in terms))
    return scores / (index.doc_norm * query_norm)


def semantic_scores(unit_embeddings: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """Cosine similarity of every paper to the query (paper vectors are stored unit-length)."""
    query = np.asarray(query_vector, dtype=np.float32).ravel()
    query = query / max(float(np.linalg.norm(query)), 1e-12)
    scores = np.empty(len(unit_embeddings), dtype=np.float32)
    for start, block in float32_blocks(unit_embeddings):
        scores[start : start + len(block)] = block @ query
    return scores


def top(scores: np.ndarray, candidates: np.ndarray, n: int) -> np.ndarray:
    """Positions of the n best-scoring candidates (ties by position), best first."""
    candidates = np.asarray(candidates, dtype=np.int64)
    if candidates.size == 0:
        return candidates
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:n]]
