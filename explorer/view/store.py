"""Read-only queries the pages need: filter, search, select, aggregate, export.

Pure pandas/numpy, no Streamlit, so every rule here is unit-tested directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.artifacts import (
    OUTLIER_ID,
    OUTLIER_LABEL,
    has_area_level,
    id_order,
    leaf_ids,
    level_of,
    topic_of,
)

EXPORT_COLUMNS = (
    "paper_id", "title", "authors", "venue", "year", "status",
    "topic_id", "topic_label", "probability", "x", "y",
    "area_id", "area_label", "subtopic_id", "subtopic_label", "stability", "topic_coherence",
)  # fmt: skip
# A node whose top words co-occur less often than chance would have them (NPMI below this)
# is marked "low coherence" (the build's explorer.build.coherence.LOW_COHERENCE).
LOW_COHERENCE = 0.0


def topic_name(topics: pd.DataFrame):
    """`id: label` of a topic, for the Topics page's topic picker (`node_name` names nodes of
    every level elsewhere)."""
    labels = dict(zip(topics["topic_id"], topics["label"], strict=True))
    return lambda t: f"{t}: {labels.get(t, '?')}"


# --- levels ----------------------------------------------------------------------------


def available_levels(nodes: pd.DataFrame) -> list[str]:
    """The levels this run has: areas only when they group topics, subtopics only when a
    topic was split (small corpora have fewer levels)."""
    out = ["area"] if has_area_level(nodes) else []
    out.append("topic")
    return out + (["subtopic"] if (nodes["level"] == "subtopic").any() else [])


def level_ids(papers: pd.DataFrame, level: str) -> pd.Series:
    """Each paper's node id at `level` (strings; OUTLIER_ID for outliers). At "subtopic", a
    paper whose topic has no subtopics is in its topic."""
    if level == "area":
        return papers["area_id"].astype(str)
    if level == "subtopic":
        return leaf_ids(papers)
    return papers["topic_id"].astype(str)


def node_name(nodes: pd.DataFrame, *, long: bool = False):
    """`id: label`, the one way a node of any level is named in pickers, URLs and charts."""
    labels = dict(zip(nodes["node_id"], nodes["long_label" if long else "label"], strict=True))
    labels[OUTLIER_ID] = OUTLIER_LABEL
    return lambda n: f"{n}: {labels.get(str(n), '?')}"


def nodes_at(nodes: pd.DataFrame, level: str) -> pd.DataFrame:
    """The nodes shown at `level`: at "subtopic", subtopics plus the topics not split."""
    if level != "subtopic":
        return nodes[nodes["level"] == level]
    split = set(nodes.loc[nodes["level"] == "subtopic", "parent_id"])
    leaf_topics = (nodes["level"] == "topic") & ~nodes["node_id"].isin(split)
    return nodes[(nodes["level"] == "subtopic") | leaf_topics]


def opened_by(nodes: pd.DataFrame, node: str, shown: str) -> tuple[str, str]:
    """The topic, and the level, the Topics page opens at for a click on `node` in a chart
    of level `shown` (its detail shows a topic): a topic or subtopic opens its topic at the
    level clicked (an unsplit topic among the subtopics stays among them); an area opens
    its largest topic among the topics (a table of areas above one topic's detail reads as
    if the topic were the area)."""
    if level_of(node) != "area":
        return topic_of(node), shown
    topics = nodes[(nodes["level"] == "topic") & (nodes["parent_id"] == node)]
    largest = topics.sort_values("size", ascending=False, kind="stable")["node_id"].iloc[0]
    return str(largest), "topic"


def export_frame(papers: pd.DataFrame, nodes: pd.DataFrame) -> pd.DataFrame:
    """One row per paper with the columns `explorer export` promises, in that order: the
    original eleven, then the paper's area and subtopic (ids as text, short labels;
    subtopic empty where its topic has no subtopics), then its topic's stability and
    coherence."""
    label = dict(zip(nodes["node_id"], nodes["label"], strict=True))
    frame = papers.loc[:, list(EXPORT_COLUMNS[:11])].reset_index(drop=True)
    frame["area_id"] = papers["area_id"].astype(str).to_numpy()
    frame["area_label"] = [label.get(a, OUTLIER_LABEL) for a in frame["area_id"]]
    if "area" not in available_levels(nodes):  # each topic its own area: no area level
        frame["area_id"], frame["area_label"] = "", ""
    frame["subtopic_id"] = papers["subtopic_id"].astype(str).to_numpy()
    frame["subtopic_label"] = [label.get(n, "") for n in frame["subtopic_id"]]
    # The topic's stability (its consensus fits), empty where not computed.
    frame["stability"] = papers["stability"].to_numpy() if "stability" in papers else np.nan
    # The topic's coherence (NPMI of its top words), empty for outliers and older builds.
    coherence = (
        dict(zip(nodes["node_id"], nodes["coherence"], strict=True)) if "coherence" in nodes else {}
    )
    frame["topic_coherence"] = [coherence.get(t, np.nan) for t in frame["topic_id"].astype(str)]
    return frame


# --- filtering -----------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """The sidebar's filters; empty means 'no restriction'. They compose with AND."""

    topics: tuple[str, ...] = ()  # node ids of any level (areas, topics, subtopics)
    statuses: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()
    years: tuple[int, int] | None = None
    query: str = ""
    min_probability: float = 0.0
    show_outliers: bool = True
    show_hidden: bool = False  # papers in nodes a curator hid
    min_stability: float = 0.0  # hide topics less stable than this (consensus fits)


def year_range(chosen: tuple[int, int] | None, available: list[int]) -> tuple[int, int] | None:
    """The slider's range as a filter: the full span means 'no restriction', so papers
    without a year stay visible until the user actually narrows the range."""
    if chosen is None or not available or tuple(chosen) == (available[0], available[-1]):
        return None
    return (int(chosen[0]), int(chosen[1]))


def search_haystack(papers: pd.DataFrame) -> pd.Series:
    """What the text search looks in: title, abstract and authors, casefolded, as Python
    strings (a substring test per string is 2.5x faster than Arrow's on abstracts). Built
    once per run by the pages, where it was most of a search's cost, and passed in."""
    text = papers["title"] + "\n" + papers["abstract"] + "\n" + papers["authors"]
    return pd.Series([t.casefold() for t in text], index=papers.index, dtype=object)


def search_mask(papers: pd.DataFrame, query: str, haystack: pd.Series | None = None) -> np.ndarray:
    """Case-insensitive literal match of every word of `query` in title, abstract or authors.

    `haystack` is `search_haystack` of a frame holding these papers (rows matched by index).
    """
    words = query.casefold().split()
    if not words:
        return np.ones(len(papers), dtype=bool)
    hay = search_haystack(papers) if haystack is None else haystack.loc[papers.index]
    texts = hay.to_numpy()
    return np.fromiter((all(w in t for w in words) for t in texts), dtype=bool, count=len(texts))


def filter_mask(
    papers: pd.DataFrame, filters: Filters, haystack: pd.Series | None = None
) -> np.ndarray:
    """Which rows of `papers` pass every filter (`haystack`: see `search_mask`)."""
    mask = np.ones(len(papers), dtype=bool)
    if filters.topics:  # node ids of any level: a paper passes when its path holds one
        chosen = [str(t) for t in filters.topics]
        mask &= (
            papers["topic_id"].astype(str).isin(chosen)
            | papers["area_id"].isin(chosen)
            | papers["subtopic_id"].isin(chosen)
        ).to_numpy()
    if not filters.show_outliers:
        mask &= (papers["topic_id"] != OUTLIER_ID).to_numpy()
    if not filters.show_hidden and "hidden" in papers:
        mask &= ~papers["hidden"].to_numpy(dtype=bool)
    if filters.min_stability > 0 and "stability" in papers:  # outliers have none: kept
        mask &= ~(papers["stability"] < filters.min_stability).to_numpy(dtype=bool)
    if filters.statuses:
        mask &= papers["status"].isin(filters.statuses).to_numpy()
    if filters.venues:
        mask &= papers["venue"].isin(filters.venues).to_numpy()
    if filters.years is not None:
        low, high = filters.years
        years = papers["year"]
        mask &= (years.ge(low) & years.le(high)).fillna(False).to_numpy(dtype=bool)
    if filters.min_probability > 0:
        mask &= (papers["probability"] >= filters.min_probability).to_numpy()
    if filters.query.strip():
        mask &= search_mask(papers, filters.query, haystack)
    return mask


def filter_papers(
    papers: pd.DataFrame, filters: Filters, haystack: pd.Series | None = None
) -> pd.DataFrame:
    return papers.loc[filter_mask(papers, filters, haystack)]


# --- selections ------------------------------------------------------------------------


def selection_to_ids(points: list[dict], visible_ids: set[str] | None = None) -> list[str]:
    """Paper ids from a plotly selection event's points (paper_id travels in customdata).

    Points without a paper id (labels, annotations) are ignored; with `visible_ids`,
    ids no longer shown (the filters changed since the selection) are dropped.
    """
    ids: list[str] = []
    for point in points or []:
        custom = point.get("customdata")
        if isinstance(custom, (list, tuple)):
            custom = custom[0] if custom else None
        if isinstance(custom, str) and (visible_ids is None or custom in visible_ids):
            ids.append(custom)
    return list(dict.fromkeys(ids))


# A selection is visitor input: its size must not set its cost. At most MAX_SHAPES boxes and
# lassos count; a lasso is decimated to MAX_LASSO_VERTICES (a drawn lasso has one vertex per
# mouse move, far more than its shape needs), and further while the edge-point tests it
# would need exceed MAX_LASSO_WORK (only a polygon that zigzags across every point does).
MAX_SHAPES = 8
MAX_LASSO_VERTICES = 512
MAX_LASSO_WORK = 20_000_000


def in_region(x: np.ndarray, y: np.ndarray, boxes: list[dict], lassos: list[dict]) -> np.ndarray:
    """Which points (x, y) lie in any of a plotly selection's boxes ({"x": [x0, x1], "y":
    [y0, y1]}) or lasso polygons ({"x": [...], "y": [...]}; even-odd rule). Malformed shapes
    are ignored; the cost is bounded whatever the browser sent (MAX_* above)."""
    inside = np.zeros(len(x), dtype=bool)
    for box in _shapes(boxes):
        if len(box["x"]) < 2 or len(box["y"]) < 2:
            continue  # the browser sends a box without corners for some drags
        (bx0, bx1), (by0, by1) = np.sort(box["x"][:2]), np.sort(box["y"][:2])
        inside |= (x >= bx0) & (x <= bx1) & (y >= by0) & (y <= by1)
    for lasso in _shapes(lassos):
        px, py = lasso["x"], lasso["y"]
        if len(px) < 3 or len(px) != len(py):
            continue
        near = (x >= px.min()) & (x <= px.max()) & (y >= py.min()) & (y <= py.max())
        cand = np.flatnonzero(near & ~inside)
        inside[cand[in_polygon(x[cand], y[cand], px, py)]] = True
    return inside


def _shapes(shapes: object) -> list[dict[str, np.ndarray]]:
    """The first MAX_SHAPES well-formed shapes, as finite float arrays."""
    out = []
    for shape in (shapes if isinstance(shapes, list) else [])[:MAX_SHAPES]:
        try:
            xs = np.asarray(shape["x"], dtype=float)
            ys = np.asarray(shape["y"], dtype=float)
        except (TypeError, ValueError, KeyError, IndexError):
            continue
        if xs.ndim == 1 and ys.ndim == 1 and np.isfinite(xs).all() and np.isfinite(ys).all():
            out.append({"x": xs, "y": ys})
    return out


def in_polygon(xs: np.ndarray, ys: np.ndarray, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon, vectorised: points sorted by y once, so each edge tests
    only the points whose y it spans (a slice), not every point."""
    order = np.argsort(ys, kind="stable")
    sy, sx = ys[order], xs[order]
    px, py = bounded_polygon(px, py, sy)
    starts, ends, (xa, ya, xb, yb) = _edge_spans(px, py, sy)
    odd = np.zeros(len(xs), dtype=bool)
    for i in np.flatnonzero(ends > starts):
        seg = slice(starts[i], ends[i])
        at = xa[i] + (sy[seg] - ya[i]) * (xb[i] - xa[i]) / (yb[i] - ya[i])
        odd[seg] ^= sx[seg] < at
    out = np.zeros(len(xs), dtype=bool)
    out[order] = odd
    return out


def _edge_spans(px: np.ndarray, py: np.ndarray, sorted_y: np.ndarray):
    """Per edge (i-1, i): the slice of sorted_y it crosses (min <= y < max, the even-odd
    rule's half-open test), and its end points."""
    xa, ya = np.roll(px, 1), np.roll(py, 1)
    lo, hi = np.minimum(ya, py), np.maximum(ya, py)
    starts = np.searchsorted(sorted_y, lo, side="left")
    ends = np.searchsorted(sorted_y, hi, side="left")
    return starts, ends, (xa, ya, px, py)


def bounded_polygon(
    px: np.ndarray, py: np.ndarray, sorted_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The polygon decimated (every k-th vertex) to at most MAX_LASSO_VERTICES, and further
    until its edges span at most MAX_LASSO_WORK point tests over the points' sorted ys."""
    step = max(1, -(-len(px) // MAX_LASSO_VERTICES))
    while True:
        qx, qy = px[::step], py[::step]
        starts, ends, _ = _edge_spans(qx, qy, sorted_y)
        if int((ends - starts).sum()) <= MAX_LASSO_WORK or len(qx) <= 3:
            return qx, qy
        step *= 2


@dataclass(frozen=True)
class Neighbours:
    """Every paper's most similar papers as row positions into the papers table.

    The neighbours table holds k rows of two id strings per paper: 10 million strings at a
    million papers, about 480 MB as Arrow. As positions it is 12 bytes a row, and a paper's
    list is a slice, not a scan of the table.
    """

    starts: np.ndarray  # int64, one more than papers: paper row r's list is starts[r]:starts[r+1]
    rows: np.ndarray  # int32 neighbour rows, best first within each paper
    similarity: np.ndarray  # float32

    @classmethod
    def of(cls, paper_ids: pa.Array, table: pa.Table) -> Neighbours:
        """From the neighbours table (paper_id, neighbor_id, similarity; each paper's rows
        best first); rows naming a paper not in `paper_ids` are dropped."""
        query = pc.index_in(table["paper_id"], value_set=paper_ids)
        found = pc.index_in(table["neighbor_id"], value_set=paper_ids)
        keep = pc.and_(pc.is_valid(query), pc.is_valid(found))
        query = pc.filter(query, keep).to_numpy().astype(np.int64)
        found = pc.filter(found, keep).to_numpy().astype(np.int32)
        similarity = pc.filter(table["similarity"], keep).to_numpy().astype(np.float32)
        order = np.argsort(query, kind="stable")  # keeps each paper's rows best first
        return cls(
            starts=np.searchsorted(query[order], np.arange(len(paper_ids) + 1)),
            rows=found[order],
            similarity=similarity[order],
        )

    def of_row(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """Paper row `row`'s neighbour rows and similarities, best first."""
        span = slice(self.starts[row], self.starts[row + 1])
        return self.rows[span], self.similarity[span]


def class_counts(papers: pd.DataFrame, column: str) -> pd.DataFrame:
    """Papers per value of a class column, largest first; a missing value reads '(none)'."""
    return (
        papers[column]
        .replace("", "(none)")
        .value_counts()
        .rename_axis(column)
        .reset_index(name="papers")
    )


def topic_mix(papers: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """How many of `papers` fall in each topic, largest first."""
    counts = papers["topic_id"].value_counts().rename_axis("topic_id").reset_index(name="papers")
    mix = counts.merge(topics[["topic_id", "label"]], on="topic_id", how="left")
    mix["share"] = mix["papers"] / max(len(papers), 1)
    return mix.sort_values(["papers", "topic_id"], ascending=[False, True], ignore_index=True)


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
    """Each term's specificity against the venue background (0: boilerplate), as the build
    scored it; 1 for every term of a run built before it did."""
    if "specificity" not in vocab:
        return np.ones(len(vocab))
    return vocab["specificity"].to_numpy(dtype=np.float64)


def ranked_terms(vocab: pd.DataFrame, n_docs: int) -> pd.DataFrame:
    """The vocabulary, most characteristic of this corpus first: papers using a term x its
    specificity x log(1 + the corpus's share of papers using it / the venues' typical
    share), so boilerplate ("propose", "novel") comes last, and a word the corpus uses no
    more often than every venue does ("extensive") comes after its subjects. A run built
    before the venue background ranks by papers alone."""
    df = vocab["df"].to_numpy(dtype=np.float64)
    weight = df * term_specificity(vocab)
    if "background_share" in vocab:
        typical = vocab["background_share"].to_numpy(dtype=np.float64)
        weight *= np.log1p(df / max(n_docs, 1) / np.maximum(typical, 1e-6))
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


def node_table(nodes: pd.DataFrame, level: str) -> pd.DataFrame:
    """The Topics page's table at one level: id, parent, long label, size, share, the
    stability of topics and subtopics where the build scored it (its consensus fits), and
    each node's coherence (NPMI of its top words) with `low coherence` noted below
    LOW_COHERENCE."""
    columns = ["node_id", "parent_id", "long_label", "size", "share"]
    if "stability" in nodes and nodes_at(nodes, level)["stability"].notna().any():
        columns.append("stability")
    if "coherence" in nodes:
        columns.append("coherence")
    table = nodes_at(nodes, level).loc[:, columns]
    table = table.rename(columns={"node_id": "id", "parent_id": "parent", "long_label": "label"})
    if not has_area_level(nodes):  # each topic its own area: an id no page offers
        areas = nodes.loc[nodes["level"] == "area", "node_id"]
        table["parent"] = table["parent"].where(~table["parent"].isin(areas), "")
    if "coherence" in table:
        table["note"] = np.where(table["coherence"] < LOW_COHERENCE, "low coherence", "")
    return table.sort_values("size", ascending=False, kind="stable").reset_index(drop=True)


def topic_table(topics: pd.DataFrame, nodes: pd.DataFrame) -> pd.DataFrame:
    """The Topics page's CSV download: one row per topic, long label, keywords joined, and
    its coherence and stability where the build computed them. Without an area level the
    area column is empty, as in `export_frame`."""
    columns = ["topic_id", "area_id", "long_label", "size", "share", "keywords"]
    columns += [c for c in ("coherence", "stability") if c in topics]
    table = topics.loc[topics["topic_id"] != OUTLIER_ID, columns].rename(
        columns={"long_label": "label"}
    )
    table["keywords"] = [", ".join(k) for k in table["keywords"]]
    if not has_area_level(nodes):  # each topic its own area
        table["area_id"] = ""
    return table.reset_index(drop=True)


# --- keyword and topic trends ----------------------------------------------------------


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
