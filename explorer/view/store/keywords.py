"""The vocabulary as the pages rank it: terms most characteristic of the corpus first, one
inflection per term, and the terms that set a selection of papers apart.

Pure pandas/numpy, no Streamlit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def term_document_frequency(
    indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray, n_terms: int
) -> np.ndarray:
    """Document frequency of every term among `rows` of the binary doc-term matrix."""
    if len(rows) == 0:
        return np.zeros(n_terms, dtype=np.int64)
    starts, stops = indptr[rows], indptr[rows + 1]
    lengths = stops - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    picked = indices[np.arange(lengths.sum()) + offsets]
    return np.bincount(picked, minlength=n_terms)


def term_specificity(vocab: pd.DataFrame) -> np.ndarray:
    """Each term's specificity against the venue background (0: boilerplate; a modifier
    that names nothing alone graded down), as the build scored it; 1 for every term of a
    run built before it did."""
    if "specificity" not in vocab:
        return np.ones(len(vocab))
    return vocab["specificity"].to_numpy(dtype=np.float64)


# The corpus's share of papers using a term is taken at the lower end of its Wilson interval
# at this many standard errors: what the counts can support, not what they happen to show.
SHARE_Z = 1.0


def supported_share(df: np.ndarray, n_docs: int) -> np.ndarray:
    """The lower Wilson bound of df / n_docs (SHARE_Z standard errors): on 38 papers, 5 using
    "theoretical" support a share of 7.6%, not 13%; on 5,000 the bound is the share. Clipped
    to [0, df / n_docs]: at df = 0 the bound's arithmetic leaves float residue above zero."""
    n = max(n_docs, 1)
    p, z2 = np.clip(df / n, 0.0, 1.0), SHARE_Z**2
    centre = p + z2 / (2 * n)
    spread = SHARE_Z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return np.clip((centre - spread) / (1 + z2 / n), 0.0, p)


def ranked_terms(vocab: pd.DataFrame, n_docs: int) -> pd.DataFrame:
    """The vocabulary, most characteristic of this corpus first: papers using a term x its
    specificity x log(1 + the corpus's supported share of papers using it / the venues'
    typical share), so boilerplate ("propose", "novel") comes last, and a word the corpus
    uses no more often than every venue does ("extensive", or "theoretical" on a short
    list) comes after its subjects. A run built before the venue background ranks by
    papers alone."""
    df = vocab["df"].to_numpy(dtype=np.float64)
    weight = df * term_specificity(vocab)
    if "background_share" in vocab:
        typical = vocab["background_share"].to_numpy(dtype=np.float64)
        weight *= np.log1p(supported_share(df, n_docs) / np.maximum(typical, 1e-6))
    ranked = vocab.assign(weight=weight)
    ranked = ranked.sort_values(["weight", "df", "term"], ascending=[False, False, True])
    return ranked.drop(columns="weight").reset_index(drop=True)


def one_per_form(ranked: pd.DataFrame, vocab: pd.DataFrame) -> pd.DataFrame:
    """The ranked terms (a frame with `term`, best first), each term's inflections after
    its first left out ("algorithms" ranked first hides "algorithm"), by the vocabulary's
    `form`; a run built before it had one keeps every term."""
    if "form" not in vocab:
        return ranked
    if "form" in ranked:  # ranked from the vocabulary itself (`ranked_terms`)
        form = ranked["form"]
    else:
        form = ranked["term"].map(dict(zip(vocab["term"], vocab["form"], strict=True)))
    return ranked[~form.duplicated().to_numpy()].reset_index(drop=True)


def contrast_keywords(
    indptr: np.ndarray,
    indices: np.ndarray,
    vocab: pd.DataFrame,
    rows: np.ndarray,
    *,
    top: int = 15,
) -> pd.DataFrame:
    """Terms that characterise `rows` against the whole corpus, c-TF-IDF style:
    share of selected papers using the term x log(1 + corpus size / corpus df), times the
    term's specificity (boilerplate scores 0); one inflection per term (`one_per_form`)."""
    n_docs = len(indptr) - 1
    selected = term_document_frequency(
        indptr, indices, np.asarray(rows, dtype=np.int64), len(vocab)
    )
    corpus_df = vocab["df"].to_numpy()
    min_count = 2 if len(rows) >= 10 else 1
    score = (selected / max(len(rows), 1)) * np.log1p(n_docs / np.maximum(corpus_df, 1))
    score = score * term_specificity(vocab)
    score[selected < min_count] = 0
    best = np.argsort(-score, kind="stable")
    best = best[score[best] > 0]
    ranked = pd.DataFrame(
        {
            "term": vocab["term"].to_numpy()[best],
            "selected_papers": selected[best],
            "selected_share": selected[best] / max(len(rows), 1),
            "corpus_share": corpus_df[best] / max(n_docs, 1),
            "score": score[best],
        }
    )
    if "form" in vocab:  # the best-scoring inflection of each term
        ranked["form"] = vocab["form"].to_numpy()[best]
    return one_per_form(ranked, vocab).head(top).drop(columns="form", errors="ignore")
