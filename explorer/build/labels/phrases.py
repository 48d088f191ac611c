"""Candidate phrases of a corpus: every run of 1-MAX_WORDS contiguous lower-cased words with
no stop word at either end, counted once per document.

HTML tags are stripped; punctuation (bar an internal hyphen, so "self-supervised" is one
word), $math$, LaTeX commands, links, pure numbers and 1-character words cut the text into
segments no phrase crosses. The table keeps phrases as word codes rather than strings, so a
corpus of 100,000 abstracts fits.
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from explorer.build.labels.terms import initials

# Candidates run to five words, so a term like "alternating direction method of multipliers"
# can be held whole.
MAX_WORDS = 5

# Tags go without a break: "<i>neural</i> networks" reads as "neural networks".
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
# Links (bare domains too), math, LaTeX commands, HTML entities and citations ("et al.")
# are not prose: each becomes a segment break.
_NOT_PROSE = re.compile(
    r"(?:https?|ftp)://\S+|www\.\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|edu|ai)\b(?:/\S*)?"
    r"|\$\$.*?\$\$|\$[^$]*\$|\\[A-Za-z]+|&#?\w+;|\bet al\b\.?",
    re.DOTALL | re.IGNORECASE,
)
_BREAK = " | "
_DOC_END = "|"  # appended to every document: one character, so never part of a phrase
# A word (letters/digits, internal hyphens) or one other non-space character (a break).
_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*|\S")


def prose(text: str) -> str:
    """The text with tags dropped and links, math, LaTeX commands and entities cut to
    breaks: what phrases and keywords are counted from ("https", "github", "com" of a code
    link are no subject)."""
    return _NOT_PROSE.sub(_BREAK, _HTML_TAG.sub(" ", text))


def _tokens(text: str) -> list[str]:
    """Words and break characters of one text, lower-cased, with markup already cut out."""
    return _TOKEN.findall(prose(text).lower())


def _is_word(token: str) -> bool:
    """Pure numbers and 1-character tokens (letters or punctuation) cut phrases instead."""
    return len(token) > 1 and not token.replace("-", "").isdigit()


@dataclass(frozen=True)
class Phrases:
    """Every document's candidate phrases, kept as word codes rather than millions of strings.

    `x` is the binary document x phrase matrix; column j is the phrase of `length[j]` words
    that starts at position `start[j]` of the corpus-wide token `codes`; `length` never
    decreases along the columns.
    """

    x: csr_matrix
    start: np.ndarray
    length: np.ndarray
    codes: np.ndarray
    vocabulary: list[str]
    # Per length k (index k - 1): the sorted start positions of candidate k-word
    # occurrences and each one's column.
    starts: tuple[np.ndarray, ...] = ()
    columns: tuple[np.ndarray, ...] = ()
    # Per document, the position of its last token in `codes`.
    ends: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def columns_up_to(self, words: int) -> int:
        """The first column of a phrase longer than `words`: columns run by length (all
        1-word phrases, then 2-word ones...), so the phrases of up to `words` words are the
        columns below it."""
        return int(np.searchsorted(self.length, words, side="right"))

    def text(self, column: int) -> str:
        """A phrase's words, read back from its first occurrence."""
        at, n = self.start[column], self.length[column]
        return " ".join(self.vocabulary[c] for c in self.codes[at : at + n])


def _encode(docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Corpus-wide token codes (a break token ends every document) and each token's document,
    both int32 (a 100,000-abstract label sample has some 20 million tokens: half the memory
    of int64, and every array derived from them halves too)."""
    index: defaultdict[str, int] = defaultdict()
    index.default_factory = index.__len__  # a new token gets the next code, without a Python call
    codes = array("q")
    lengths = array("q")
    for doc in docs:
        tokens = _tokens(doc)
        tokens.append(_DOC_END)
        codes.extend([index[t] for t in tokens])
        lengths.append(len(tokens))
    if MAX_WORDS * len(codes) >= np.iinfo(np.int32).max:  # columns too are int32
        # Unreachable from a build: labels read a sample of at most nodes.LABEL_SAMPLE papers.
        raise ValueError(f"{len(codes)} tokens: too many for one phrase table (label a sample)")
    owner = np.repeat(np.arange(len(docs), dtype=np.int32), np.frombuffer(lengths, np.int64))
    return np.frombuffer(codes, np.int64).astype(np.int32), owner, list(index)


def edge_words(vocabulary: Sequence[str]) -> np.ndarray:
    """Per vocabulary entry, whether it is a word a phrase may start or end with: no stop
    word, number, 1-character token or break."""
    return np.fromiter(
        (_is_word(t) and t not in ENGLISH_STOP_WORDS for t in vocabulary), bool, len(vocabulary)
    )


def _occurrences(codes: np.ndarray, vocabulary: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per phrase length 1-MAX_WORDS: start positions of candidate occurrences and an id for
    the phrase."""
    word = np.fromiter((_is_word(t) for t in vocabulary), bool, len(vocabulary))
    edge = edge_words(vocabulary)
    is_word, is_edge = word[codes], edge[codes]  # an edge word may start or end a phrase
    n, base = len(codes), len(vocabulary)
    found = []
    run, ids = is_word, codes  # positions starting k words, and the id of those k words
    for k in range(1, MAX_WORDS + 1):
        m = n - k + 1
        if m <= 0:
            found.append((np.zeros(0, np.int32), np.zeros(0, np.int32)))
            continue
        if k > 1:
            # A k-gram's id numbers its first k-1 words' id, so keys stay far below 2**63;
            # keys are formed only where a k-word run starts.
            run = run[:m] & is_word[k - 1 :]
            at = np.flatnonzero(run).astype(np.int32)
            keys = ids[at].astype(np.int64) * base + codes[at + (k - 1)]
            ids = np.zeros(m, np.int32)
            ids[at] = np.unique(keys, return_inverse=True)[1].ravel()
            del at, keys
        starts = np.flatnonzero(run & is_edge[:m] & is_edge[k - 1 :]).astype(np.int32)
        found.append((starts, ids[starts]))
    return found


def phrase_table(docs: Sequence[str]) -> Phrases:
    """Candidate phrases of all documents at once: numpy over token codes, no per-phrase loop."""
    codes, owner, vocabulary = _encode(docs)
    firsts, lengths, rows, cols, places = [], [], [], [], []
    n_columns = 0
    found = _occurrences(codes, vocabulary)
    for n in range(1, MAX_WORDS + 1):
        at, ids = found[n - 1]
        found[n - 1] = None  # each length's ids go as soon as its columns are numbered
        _, first, column = np.unique(ids, return_index=True, return_inverse=True)
        del ids
        firsts.append(at[first])
        lengths.append(np.full(len(first), n, np.int8))  # int64 once joined, as readers expect
        rows.append(owner[at])
        cols.append((column.ravel() + n_columns).astype(np.int32))
        places.append(at)
        n_columns += len(first)
    ends = np.flatnonzero(np.append(owner[1:] != owner[:-1], True)) if len(owner) else owner
    del owner
    x = _binary_matrix(rows, cols, (len(docs), n_columns))
    return Phrases(
        x, np.concatenate(firsts), np.concatenate(lengths).astype(np.int64), codes, vocabulary,
        starts=tuple(places), columns=tuple(cols), ends=ends.astype(np.int64),
    )  # fmt: skip


def _binary_matrix(
    rows: list[np.ndarray], cols: list[np.ndarray], shape: tuple[int, int]
) -> csr_matrix:
    """The binary document x phrase matrix of (document, column) occurrences: a phrase
    counts once per document. `rows` is emptied as it is joined (`cols` stays: the table
    keeps each length's columns), and int32 indices go to scipy as they are."""
    row = np.concatenate(rows)
    rows.clear()
    col = np.concatenate(cols)
    x = csr_matrix((np.ones(len(row), np.int32), (row, col)), shape=shape)
    x.data[:] = 1
    return x


def superphrases(table: Phrases, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every column, the longer candidates (among the columns `keep` marks) that hold it
    as a run of their words: CSR arrays (indptr, indices), indices sorted per column."""
    subs, sups = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for k in range(2, MAX_WORDS + 1):
        longer = np.flatnonzero((table.length == k) & keep)
        for size in range(1, k):
            at, column = table.starts[size - 1], table.columns[size - 1]
            if not len(at) or not len(longer):
                continue
            for offset in range(k - size + 1):
                place = table.start[longer] + offset
                i = np.minimum(np.searchsorted(at, place), len(at) - 1)
                hit = at[i] == place
                subs.append(column[i[hit]])
                sups.append(longer[hit])
    sub, sup = np.concatenate(subs), np.concatenate(sups)
    order = np.lexsort((sup, sub))
    sub, sup = sub[order], sup[order]
    indptr = np.searchsorted(sub, np.arange(table.x.shape[1] + 1))
    return indptr, sup


class Repeats:
    """How many documents say a phrase again: twice or more, or, for a phrase of several
    words, once and its initials as a word ("restricted boltzmann machines (rbms)"). A term
    is what abstracts repeat; a phrase said in passing is written once. Per column on
    demand, from the occurrences of the lengths asked about, each sorted on first use (a
    label sample of 100,000 abstracts has some 20 million occurrences per length; the
    labels ask about a few verb-edged phrases)."""

    def __init__(self, table: Phrases):
        self.table = table
        self._by_length: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._word: dict[str, int] | None = None
        self._said: dict[int, int] = {}

    def _occurrences(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Length k+1's occurrence order by column (int32) and its columns in that order."""
        if k not in self._by_length:
            columns = self.table.columns[k]
            order = np.argsort(columns, kind="stable").astype(np.int32)
            self._by_length[k] = (order, columns[order])
        return self._by_length[k]

    def _word_column(self, word: str) -> int | None:
        if self._word is None:
            self._word = {self.table.text(j): j for j in range(self.table.columns_up_to(1))}
        return self._word.get(word)

    def _documents(self, column: int) -> np.ndarray:
        """The document of each occurrence of the column's phrase (sorted, with repeats)."""
        k = int(self.table.length[column]) - 1
        order, ordered = self._occurrences(k)
        # In the occurrences' own dtype: Python ints would make numpy cast all ~20 million
        # to int64 on every call (48 ms against 0.1 ms; a 100,000-paper build's labels
        # asked thousands of times).
        lo, hi = np.searchsorted(ordered, np.array([column, column + 1], dtype=ordered.dtype))
        places = self.table.starts[k][order[lo:hi]]
        return np.sort(np.searchsorted(self.table.ends, places))

    def said_again(self, column: int) -> int:
        """Documents that use the phrase of `column` twice or more, or once and its initials."""
        if column not in self._said:
            self._said[column] = self._count_again(column)
        return self._said[column]

    def _count_again(self, column: int) -> int:
        docs, counts = np.unique(self._documents(column), return_counts=True)
        again = set(docs[counts > 1].tolist())
        if self.table.length[column] > 1:
            short = initials(self.table.text(column))
            for word in (short, short + "s") if len(short) > 1 else ():
                if (at := self._word_column(word)) is not None:
                    again |= set(np.intersect1d(docs, self._documents(at)).tolist())
        return len(again)


def keyword_terms(text: str) -> list[str]:
    """The keyword analyzer (a CountVectorizer `analyzer`): every word of the prose bar stop
    words, and every pair of two such words written next to each other. A pair never spans
    a stop word, punctuation, a link or formula, so keywords are verbatim terms ("code is
    available" gives no "code available", "maps; code" no "maps code")."""
    terms: list[str] = []
    previous = None
    for token in _tokens(text):
        if _is_word(token) and token not in ENGLISH_STOP_WORDS:
            terms.append(token)
            if previous is not None:
                terms.append(f"{previous} {token}")
            previous = token
        else:
            previous = None
    return terms


def candidate_phrases(text: str) -> set[str]:
    """The 1-MAX_WORDS-word verbatim phrases of one text (lower-cased)."""
    table = phrase_table([text])
    return {table.text(j) for j in range(table.x.shape[1])}
