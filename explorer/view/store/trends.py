"""Keyword and node trends for the Trends page: shares per year or class, rising and falling
terms between two values, and the terms the page starts with.

Pure pandas/numpy, no Streamlit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from explorer.node_ids import OUTLIER_ID, id_order
from explorer.view.store.keywords import one_per_form, ranked_terms, term_specificity
from explorer.view.store.nodes import node_name


def class_values(keywords: pd.DataFrame, dimension: str) -> list[str]:
    """The values (years, statuses, venues...) a dimension takes in this corpus, in order."""
    values = keywords.loc[keywords["dimension"] == dimension, "value"].unique().tolist()
    return sorted(values, key=lambda v: (int(v) if v.isdigit() else 0, v))


def group_sizes(keywords: pd.DataFrame, dimension: str) -> pd.Series:
    """Papers per value of a dimension (the denominator of every share)."""
    rows = keywords[keywords["dimension"] == dimension]
    return rows.groupby("value")["n_docs"].first()


def keyword_trend(keywords: pd.DataFrame, terms: list[str], dimension: str) -> pd.DataFrame:
    """Per term and class value: papers using the term, papers in the class, and the share.

    Every value of the dimension appears for every term (0 where the term is absent),
    so a chart's x axis shows all years present.
    """
    sizes = group_sizes(keywords, dimension)
    rows = keywords[(keywords["dimension"] == dimension) & keywords["term"].isin(terms)]
    grid = pd.MultiIndex.from_product([list(terms), list(sizes.index)], names=["term", "value"])
    counts = rows.set_index(["term", "value"])["df"].reindex(grid, fill_value=0)
    out = counts.rename("papers").reset_index()
    out["class_papers"] = out["value"].map(sizes).astype(int)
    out["share"] = out["papers"] / out["class_papers"].clip(lower=1)
    order = {v: i for i, v in enumerate(class_values(keywords, dimension))}
    return out.sort_values(
        ["term", "value"], key=lambda c: c.map(order) if c.name == "value" else c, ignore_index=True
    )


def node_trend(
    papers: pd.DataFrame,
    groups: pd.Series,
    nodes: pd.DataFrame,
    dimension: str,
    node_ids: list[str] | None = None,
) -> pd.DataFrame:
    """Per node (of one level; `groups` holds each paper's node id) and class value: papers,
    class size and share (topics over time / per class). Outliers are no node."""
    values = papers[dimension].astype("string").fillna("")
    keep = (values != "").to_numpy()
    sizes = values[keep].value_counts().sort_index()
    wanted = list(node_ids) if node_ids else sorted(set(groups) - {OUTLIER_ID}, key=id_order)
    counts = (
        pd.DataFrame({"node_id": groups[keep].astype(str), "value": values[keep]})
        .groupby(["node_id", "value"])
        .size()
    )
    grid = pd.MultiIndex.from_product([wanted, list(sizes.index)], names=["node_id", "value"])
    out = counts.reindex(grid, fill_value=0).rename("papers").reset_index()
    out["class_papers"] = out["value"].map(sizes).astype(int)
    out["share"] = out["papers"] / out["class_papers"].clip(lower=1)
    name = node_name(nodes)
    out["label"] = [name(n) for n in out["node_id"]]
    return out


def preselected_terms(
    keywords: pd.DataFrame, vocab: pd.DataFrame, n_docs: int, *, n: int = 3
) -> list[str]:
    """The Trends page's first terms: the fastest risers from the first year to the last
    that are no boilerplate ("neural" rose on ICML 2013-2019 yet says nothing), or, with one
    year, the corpus's most characteristic terms."""
    years = class_values(keywords, "year")
    if len(years) < 2:
        return one_per_form(ranked_terms(vocab, n_docs), vocab)["term"].head(n).tolist()
    risers = rising_terms(keywords, vocab, "year", years[0], years[-1])
    subjects = set(vocab["term"][term_specificity(vocab) > 0])
    # Boilerplate out before forms fold, so "new" rising faster never hides "news".
    risers = one_per_form(risers[risers["term"].isin(subjects)], vocab)
    return risers["term"].head(n).tolist()


# The rising terms' Dirichlet prior, in pseudo-papers spread over the vocabulary by corpus
# frequency, and the fewest papers (both sides together) a term needs to be ranked at all.
RISING_PRIOR = 1000.0
RISING_MIN_PAPERS = 3


def rising_terms(
    keywords: pd.DataFrame, vocab: pd.DataFrame, dimension: str, before: str, after: str
) -> pd.DataFrame:
    """Terms ranked by how much more (z > 0) or less (z < 0) `after` uses them than `before`.

    Log-odds ratio with an informative Dirichlet prior (Monroe, Colaresi & Quinn 2008),
    on document frequencies: the prior, proportional to each term's corpus frequency,
    keeps rare terms from topping the list on a count of one or two.
    """
    prior, min_papers = RISING_PRIOR, RISING_MIN_PAPERS
    rows = keywords[keywords["dimension"] == dimension]
    a = rows[rows["value"] == before].set_index("term")["df"]
    b = rows[rows["value"] == after].set_index("term")["df"]
    n_a = int(
        rows.loc[rows["value"] == before, "n_docs"].max() if (rows["value"] == before).any() else 0
    )
    n_b = int(
        rows.loc[rows["value"] == after, "n_docs"].max() if (rows["value"] == after).any() else 0
    )
    terms = vocab.set_index("term")["df"]
    y_a = a.reindex(terms.index, fill_value=0).to_numpy(dtype=float)
    y_b = b.reindex(terms.index, fill_value=0).to_numpy(dtype=float)
    alpha = prior * terms.to_numpy(dtype=float) / max(terms.sum(), 1)
    total_a, total_b = y_a.sum(), y_b.sum()
    # A term no paper uses (alpha 0) or a one-term vocabulary divides by zero: such terms
    # fall below min_papers or sort last (NaN), so the warnings would say nothing.
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.log((y_b + alpha) / (total_b + prior - y_b - alpha)) - np.log(
            (y_a + alpha) / (total_a + prior - y_a - alpha)
        )
        z = delta / np.sqrt(1 / (y_a + alpha) + 1 / (y_b + alpha))
    out = pd.DataFrame(
        {
            "term": terms.index,
            "z": z,
            f"papers_{before}": y_a.astype(int),
            f"papers_{after}": y_b.astype(int),
            f"share_{before}": y_a / max(n_a, 1),
            f"share_{after}": y_b / max(n_b, 1),
        }
    )
    out = out[(y_a + y_b) >= min_papers]
    # Ties (a word and the phrase it always appears in) fall back to alphabetical order.
    return out.sort_values(["z", "term"], ascending=[False, True], ignore_index=True)
