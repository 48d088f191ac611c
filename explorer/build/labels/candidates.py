"""Which phrase a ranked candidate stands for in one node: its whole term, trimmed of a
boilerplate first word, or the term joining it with a phrase already taken.

A phrase gives way to a longer candidate that holds it when most of the node's papers that
use it use the longer one ("chain monte carlo" becomes "markov chain monte carlo"); two
taken phrases that one longer candidate joins become it ("word", "embedding" -> "word
embedding"). `NodeTerms` answers these questions for one node; `selection.select` asks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from explorer.build.background import specificity, stands_alone
from explorer.build.labels import terms
from explorer.build.labels.ranking import reads_as_term, row_values

if TYPE_CHECKING:
    from explorer.build.labels.phrases import Phrases
    from explorer.build.labels.ranking import Ranking

# A phrase is a fragment of a longer candidate that holds it when at least this share of the
# node's papers using it use the longer one: then the longer one is taken instead.
WHOLE_SHARE = 0.75
# A ranked phrase loses a boilerplate first word when the rest is this many times as used.
TRIM_RATIO = 1.5
# Two taken phrases that one longer candidate holds together give way to it when at least
# this share of the rarer one's papers (in the node) use it.
JOINT_SHARE = 0.5


def term_forms(table: Phrases, columns: np.ndarray) -> np.ndarray:
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


class NodeTerms:
    """What one node's papers say about longer terms holding its phrases."""

    def __init__(
        self,
        table: Phrases,
        ranking: Ranking,
        row: int,
        links: tuple[np.ndarray, np.ndarray],
        forms: np.ndarray,
        col_of: dict,
    ):
        self.table, self.ranking, self.df, self.row = table, ranking, ranking.df, row
        self.links, self.forms, self.col_of = links, forms, col_of

    def reads_as_term(self, col: int) -> bool:
        """`ranking.reads_as_term` of the phrase in column `col`."""
        used = self.ranking.corpus_df[col]
        return reads_as_term(self.table.text(col), col, used, self.ranking.repeats)

    def fits(self, phrase: str) -> bool:
        """Whether a phrase the selection arrived at can label (`reads_as_term`); one that
        is no column of the table was checked where it was formed."""
        col = self.col_of.get(phrase)
        return col is None or self.reads_as_term(col)

    @staticmethod
    def stands_alone(phrase: str) -> bool:
        """Whether the phrase names something alone (`background.stands_alone`): a modifier
        ("theoretical", "model-based") labels only joined into a whole term."""
        return stands_alone(phrase)

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
        own = row_values(self.df, self.row, cols)
        keep = own >= 2
        cols, own = cols[keep], own[keep]
        _, form = np.unique(self.forms[cols], return_inverse=True)
        group = np.bincount(form.ravel(), weights=own)[form.ravel()]
        old = set(terms.content_words(within))
        fine = np.flatnonzero(group >= need)
        fine = fine[
            np.array(
                [
                    adds_meaning(self.table.text(c), old) and self.reads_as_term(c)
                    for c in cols[fine]
                ],
                bool,
            )
        ]
        return cols[fine], group[fine], own[fine]

    def _count(self, col: int) -> float:
        return float(row_values(self.df, self.row, np.array([col]))[0])

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
        # The word test first: most pairs have no common superset of just their words.
        same = [set(terms.content_words(t)) == words for t in map(self.table.text, both)]
        both = both[np.array(same, dtype=bool)]
        if not len(both):
            return None
        texts = [self.table.text(c) for c in both]
        # Joined by a stop word ("method of multipliers"), most of the rarer one's papers
        # must use the joint term, as for a whole term.
        share = np.array([JOINT_SHARE if len(t.split()) == len(terms.content_words(t))
                          else WHOLE_SHARE for t in texts])  # fmt: skip
        counts = row_values(self.df, self.row, both)
        need = np.maximum(2.0, share * min(self._count(ca), self._count(cb)))
        fit = [
            specificity(t) > 0 and stands_alone(t) and self.reads_as_term(c)
            for t, c in zip(texts, both, strict=True)
        ]
        fine = (counts >= need) & np.array(fit, bool)
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
