import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from explorer.view.store.filters import Filters, filter_mask
from explorer.view.store.keywords import contrast_keywords, term_document_frequency
from explorer.view.store.nodes import opened_by
from explorer.view.store.selection import selection_to_ids, topic_mix
from explorer.view.store.topics import node_table


def papers():
    return pd.DataFrame(
        {
            "paper_id": ["a", "b", "c", "d"],
            "title": ["Graph nets", "Bandits", "Graph <b>kernels</b>", "Noise"],
            "abstract": ["We study graphs.", "Regret bounds.", "Kernels on graphs.", "Other."],
            "authors": ["Ann Lee", "Bo Li", "Ann Lee; Cy Dee", ""],
            "venue": ["ICML", "ICML", "NeurIPS", "NeurIPS"],
            "year": pd.array([2019, 2020, 2020, None], dtype="Int64"),
            "status": ["Oral", "Poster", "Poster", ""],
            "topic_id": ["0", "1", "0", "-1"],
            "area_id": ["A0", "A1", "A0", "-1"],
            "subtopic_id": ["0.0", "", "0.1", ""],
            "probability": [0.9, 0.5, 0.7, 0.0],
        }
    )


def ids(frame):
    return frame["paper_id"].tolist()


def passing(papers, filters):
    """The rows passing `filters`, as the pages select them (`filter_mask`)."""
    return papers.loc[filter_mask(papers, filters)]


def test_filters_compose():
    p = papers()
    assert ids(passing(p, Filters())) == ["a", "b", "c", "d"]
    assert ids(passing(p, Filters(topics=("0",)))) == ["a", "c"]
    assert ids(passing(p, Filters(topics=("0",), statuses=("Poster",)))) == ["c"]
    # A node of any level: an area, a subtopic, or several of mixed levels.
    assert ids(passing(p, Filters(topics=("A1",)))) == ["b"]
    assert ids(passing(p, Filters(topics=("0.1",)))) == ["c"]
    assert ids(passing(p, Filters(topics=("0.0", "A1")))) == ["a", "b"]
    assert ids(passing(p, Filters(years=(2020, 2020)))) == ["b", "c"]
    assert ids(passing(p, Filters(show_outliers=False, min_probability=0.6))) == ["a", "c"]
    assert ids(passing(p, Filters(query="ann GRAPH"))) == ["a", "c"]
    assert ids(passing(p, Filters(query="<b>"))) == ["c"]  # literal, not a regex or markup
    assert ids(passing(p, Filters(venues=("NeurIPS",), query="kernels"))) == ["c"]


def test_selection_to_ids_reads_customdata_and_drops_hidden():
    points = [
        {"customdata": ["b"], "point_index": 1},
        {"customdata": "a"},
        {"customdata": ["b"]},
        {"point_index": 7},
        {"customdata": [12]},
    ]
    assert selection_to_ids(points) == ["b", "a"]
    assert selection_to_ids(points, visible_ids={"a"}) == ["a"]
    assert selection_to_ids([]) == []


def test_topic_mix_counts_and_shares():
    topics = pd.DataFrame(
        {"topic_id": ["-1", "0", "1"], "label": ["Outliers", "graphs", "bandits"]}
    )
    mix = topic_mix(papers(), topics)
    assert mix[["topic_id", "papers"]].values.tolist() == [["0", 2], ["-1", 1], ["1", 1]]
    assert mix["share"].sum() == 1.0


def test_term_df_and_contrast_keywords():
    # 4 docs x 3 terms: "graph" in docs 0, 2; "regret" in 1; "the" in all.
    rows = [[0, 2], [1, 2], [0, 2], [2]]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = np.array([t for r in rows for t in r])
    vocab = pd.DataFrame({"term": ["graph", "regret", "the"], "df": [2, 1, 4]})
    assert term_document_frequency(indptr, indices, np.array([0, 2]), 3).tolist() == [2, 0, 2]
    assert term_document_frequency(indptr, indices, np.array([], dtype=int), 3).tolist() == [
        0,
        0,
        0,
    ]
    top = contrast_keywords(indptr, indices, vocab, np.array([0, 2]))
    assert top["term"].tolist()[0] == "graph"
    assert "regret" not in top["term"].tolist()


def keyword_table():
    # 2019: 10 papers, 2020: 20 papers. "rising" 1 -> 15, "steady" 5 -> 10, "falling" 6 -> 1.
    rows = [
        ("year", "2019", "rising", 1, 10), ("year", "2019", "steady", 5, 10), ("year", "2019", "falling", 6, 10),
        ("year", "2020", "rising", 15, 20), ("year", "2020", "steady", 10, 20), ("year", "2020", "falling", 1, 20),
        ("status", "Oral", "rising", 4, 5), ("status", "Poster", "rising", 12, 25),
    ]  # fmt: skip
    keywords = pd.DataFrame(rows, columns=["dimension", "value", "term", "df", "n_docs"])
    vocab = pd.DataFrame({"term": ["rising", "steady", "falling"], "df": [16, 15, 7]})
    return keywords, vocab


def test_keyword_trend_shares_and_zero_fill():
    from explorer.view.store.trends import keyword_trend

    keywords, _ = keyword_table()
    trend = keyword_trend(keywords, ["rising", "falling"], "year")
    assert trend[["term", "value", "papers", "class_papers"]].values.tolist() == [
        ["falling", "2019", 6, 10], ["falling", "2020", 1, 20], ["rising", "2019", 1, 10], ["rising", "2020", 15, 20],
    ]  # fmt: skip
    assert trend["share"].tolist() == [0.6, 0.05, 0.1, 0.75]
    by_class = keyword_trend(keywords, ["rising"], "status")
    assert dict(zip(by_class["value"], by_class["share"], strict=True)) == {
        "Oral": 0.8,
        "Poster": 0.48,
    }


def test_rising_terms_rank_the_planted_term_first_and_falling_last():
    from explorer.view.store.trends import rising_terms

    keywords, vocab = keyword_table()
    ranked = rising_terms(keywords, vocab, "year", "2019", "2020")
    assert ranked["term"].tolist() == ["rising", "steady", "falling"]
    assert ranked["z"].iloc[0] > 0 > ranked["z"].iloc[-1]
    assert ranked["papers_2020"].iloc[0] == 15 and ranked["share_2019"].iloc[0] == 0.1


def test_node_trend_shares_per_year_at_any_level():
    from explorer.view.store.nodes import level_ids
    from explorer.view.store.trends import node_trend

    papers = pd.DataFrame(
        {
            "year": pd.array([2019, 2019, 2019, 2019, 2020, 2020, 2020, 2020], dtype="Int64"),
            "topic_id": ["0", "0", "0", "1", "0", "0", "0", "0"],
            "area_id": ["A0"] * 8,
            "subtopic_id": ["0.0", "0.0", "0.1", "", "0.0", "0.0", "0.1", "0.1"],
        }
    )
    nodes = pd.DataFrame(
        {"node_id": ["A0", "0", "1", "0.0", "0.1"], "label": ["area", "a", "b", "a0", "a1"]}
    )
    trend = node_trend(papers, level_ids(papers, "topic"), nodes, "year")
    assert trend[["node_id", "value", "papers", "share"]].values.tolist() == [
        ["0", "2019", 3, 0.75], ["0", "2020", 4, 1.0], ["1", "2019", 1, 0.25], ["1", "2020", 0, 0.0],
    ]  # fmt: skip
    sub = node_trend(papers, level_ids(papers, "subtopic"), nodes, "year", ["0.1", "1"])
    assert sub[["node_id", "value", "papers"]].values.tolist() == [
        ["0.1", "2019", 1], ["0.1", "2020", 2], ["1", "2019", 1], ["1", "2020", 0],
    ]  # fmt: skip
    assert sub["label"].iloc[0] == "0.1: a1"


def test_class_counts_names_missing_values():
    from explorer.view.store.papers import class_counts

    counts = class_counts(papers(), "status")
    assert counts.values.tolist() == [["Poster", 2], ["Oral", 1], ["(none)", 1]]


def test_full_year_range_keeps_papers_without_a_year():
    from explorer.view.store.filters import year_range

    p = papers()  # paper "d" has no year
    full = year_range((2019, 2020), [2019, 2020])
    assert full is None and ids(passing(p, Filters(years=full))) == ["a", "b", "c", "d"]
    narrowed = year_range((2020, 2020), [2019, 2020])
    assert ids(passing(p, Filters(years=narrowed))) == ["b", "c"]
    assert year_range(None, [2019]) is None


def test_search_with_a_prebuilt_haystack_matches_without_one():
    from explorer.view.store.filters import search_haystack, search_mask

    p = papers()
    hay = search_haystack(p)
    for query in ("ann GRAPH", "<b>", "kernels", "nothing-here", ""):
        assert (search_mask(p, query, hay) == search_mask(p, query)).all(), query
    subset = p.iloc[[2, 0]]  # a filtered frame: rows found by index, not position
    assert search_mask(subset, "kernels", hay).tolist() == [True, False]


def test_memo_keeps_the_most_recent_entries_and_computes_each_once():
    import threading

    from explorer.view.ui.data import Memo

    memo, calls = Memo(2), []

    def make(key):
        calls.append(key)
        return key * 10

    assert memo.get(1, lambda: make(1)) == 10
    assert memo.get(2, lambda: make(2)) == 20
    assert memo.get(1, lambda: make(1)) == 10  # a hit: 1 is now the most recent
    memo.get(3, lambda: make(3))  # evicts 2, the least recently used
    memo.get(1, lambda: make(1))
    memo.get(2, lambda: make(2))
    assert calls == [1, 2, 3, 2]
    # Many sessions at once: the bound holds and nothing raises.
    shared = Memo(8)
    workers = [
        threading.Thread(target=lambda i=i: [shared.get(k % 20, lambda: i) for k in range(2000)])
        for i in range(8)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(shared._values) == 8


def test_in_region_takes_boxes_and_lassos_by_the_even_odd_rule():
    import numpy as np

    from explorer.view.store.selection import in_region

    x = np.array([0.3, 2.0, 0.2, 0.9, 5.0])
    y = np.array([0.3, 2.0, 0.1, 0.9, 5.0])
    box = {"x": [1.5, 2.5], "y": [2.5, 1.5]}  # corners in any order
    triangle = {"x": [0, 1, 0], "y": [0, 0, 1]}  # below the line x + y = 1
    assert in_region(x, y, [box], []).tolist() == [False, True, False, False, False]
    assert in_region(x, y, [], [triangle]).tolist() == [True, False, True, False, False]
    both = in_region(x, y, [box], [triangle])
    assert both.tolist() == [True, True, True, False, False]
    assert not in_region(x, y, [], []).any()
    assert not in_region(x, y, [], [{"x": [0, 1], "y": [0, 1]}]).any()  # not a polygon
    assert not in_region(x, y, [{"x": [], "y": []}], []).any()  # a box without corners


def test_neighbours_are_row_positions_best_first_whatever_the_table_order():
    import pyarrow as pa

    from explorer.view.store.papers import Neighbours

    ids = pa.array(["a", "b", "c", "d"])
    table = pa.table(
        {  # c's rows first, a row naming a paper the run lacks, d with no neighbours
            "paper_id": ["c", "c", "a", "a", "b", "b"],
            "neighbor_id": ["a", "b", "c", "gone", "a", "d"],
            "similarity": np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], dtype=np.float32),
        }
    )
    near = Neighbours.of(ids, table)
    rows, similarity = near.of_row(2)  # c
    assert rows.tolist() == [0, 1] and similarity.tolist() == pytest.approx([0.9, 0.8])
    assert near.of_row(0)[0].tolist() == [2]  # a: the unknown neighbour dropped
    assert near.of_row(1)[0].tolist() == [0, 3]
    assert near.of_row(3)[0].tolist() == []


def test_shared_strings_equal_python_strings_and_share_repeated_values():
    from explorer.view.ui.data import _shared_strings

    column = pd.Series(["ICML", None, "NeurIPS", "ICML"] * 3, dtype="str", name="venue")
    shared = _shared_strings(column)
    pd.testing.assert_series_equal(shared, column.astype(object))
    assert shared.iloc[0] is shared.iloc[3]  # one object per distinct value


def test_semantic_scores_in_blocks_equal_one_product(monkeypatch):
    from explorer import vectors as V
    from explorer.view import search_scores

    vectors = V.unit_float16(np.random.default_rng(0).normal(size=(1000, 16)))
    query = np.random.default_rng(1).normal(size=16)
    whole = search_scores.semantic_scores(vectors, query)
    monkeypatch.setattr(V, "ROW_BLOCK", 7)
    # The same products, summed in another order by BLAS: equal to float32 rounding.
    np.testing.assert_allclose(search_scores.semantic_scores(vectors, query), whole, atol=1e-6)


def _even_odd(xs, ys, px, py):
    """The even-odd rule edge by edge over every point: the reference in_polygon must match."""
    import numpy as np

    odd = np.zeros(len(xs), dtype=bool)
    for i in range(len(px)):
        xa, ya, xb, yb = px[i - 1], py[i - 1], px[i], py[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            at = xa + (ys - ya) * (xb - xa) / (yb - ya)
        odd ^= ((ya > ys) != (yb > ys)) & (xs < at)
    return odd


@settings(max_examples=60, deadline=None)
@given(hs.integers(3, 40), hs.integers(0, 2**32 - 1))
def test_in_polygon_agrees_with_the_even_odd_rule(vertices, seed):
    import numpy as np

    from explorer.view.store.selection import in_polygon

    rng = np.random.default_rng(seed)
    px, py = rng.normal(size=vertices), rng.normal(size=vertices)
    xs, ys = rng.normal(size=400), rng.normal(size=400)
    assert (in_polygon(xs, ys, px, py) == _even_odd(xs, ys, px, py)).all()


def test_a_lasso_of_any_size_is_bounded_in_vertices_and_work():
    import numpy as np

    from explorer.view.store import selection

    rng = np.random.default_rng(0)
    ys = np.sort(rng.normal(size=200_000))
    # A 50,000-vertex zigzag whose every edge spans every point: the worst a client can send.
    px, py = np.linspace(-5, 5, 50_000), np.tile([-5.0, 5.0], 25_000)
    qx, qy = selection.bounded_polygon(px, py, ys)
    assert len(qx) <= selection.MAX_LASSO_VERTICES
    starts, ends, _ = selection._edge_spans(qx, qy, ys)
    assert (ends - starts).sum() <= selection.MAX_LASSO_WORK or len(qx) <= 3
    # A drawn lasso (a circle of 50,000 mouse moves) keeps its shape once decimated.
    t = np.linspace(0, 2 * np.pi, 50_000, endpoint=False)
    xs = rng.uniform(-2, 2, size=len(ys))
    circle = {"x": list(np.cos(t)), "y": list(np.sin(t))}
    inside = selection.in_region(xs, ys, [], [circle])
    truth = xs**2 + ys**2 < 1
    assert (inside != truth).mean() < 0.001  # only points within a hair of the circle differ


def test_malformed_or_too_many_shapes_are_ignored():
    import numpy as np

    from explorer.view.store import selection

    x, y = np.array([0.5, 5.0]), np.array([0.5, 5.0])
    junk = [{"x": "abc", "y": [1]}, {"x": [[0, 1]], "y": [0, 1]}, {"y": [0, 1]}, "box", None]
    assert not selection.in_region(x, y, junk, junk).any()
    assert not selection.in_region(x, y, [{"x": [0, float("nan")], "y": [0, 1]}], "lasso").any()
    far = {"x": [10, 11], "y": [10, 11]}
    hit = {"x": [0, 1], "y": [0, 1]}
    assert selection.in_region(x, y, [far] * (selection.MAX_SHAPES - 1) + [hit], [])[0]
    assert not selection.in_region(x, y, [far] * selection.MAX_SHAPES + [hit], [])[
        0
    ]  # past the cap


def test_topics_table_names_no_area_where_the_run_has_no_area_level():
    """Below MIN_TOPICS_FOR_AREAS each topic is its own area: "A0" would name nothing the
    pages offer (the Overview counts 0 areas)."""
    nodes = pd.DataFrame(
        {
            "node_id": ["A0", "A1", "0", "1", "0.0", "0.1"],
            "level": ["area", "area", "topic", "topic", "subtopic", "subtopic"],
            "parent_id": [None, None, "A0", "A1", "0", "0"],
            "long_label": list("abcdef"),
            "size": [6, 3, 6, 3, 4, 2],
            "share": [0.6, 0.3, 0.6, 0.3, 0.4, 0.2],
        }
    )
    assert node_table(nodes, "topic")["parent"].tolist() == ["", ""]
    assert node_table(nodes, "subtopic")["parent"].tolist() == ["0", "", "0"]
    grouped = pd.concat([nodes.iloc[:1], nodes.iloc[2:]]).assign(
        parent_id=[None, "A0", "A0", "0", "0"]
    )  # one area over two topics: a level of its own
    assert node_table(grouped, "topic")["parent"].tolist() == ["A0", "A0"]


def test_the_topics_csv_names_no_area_where_the_run_has_no_area_level():
    """As the papers' export does: below MIN_TOPICS_FOR_AREAS each topic is its own area."""
    from explorer.view.store.topics import topic_table

    topics = pd.DataFrame(
        {
            "topic_id": ["-1", "0", "1"],
            "area_id": ["-1", "A0", "A1"],
            "long_label": ["outliers", "a", "b"],
            "size": [1, 6, 3],
            "share": [0.1, 0.6, 0.3],
            "keywords": [[], ["x", "y"], ["z"]],
        }
    )
    nodes = pd.DataFrame(
        {"node_id": ["A0", "A1", "0", "1"], "level": ["area", "area", "topic", "topic"]}
    )
    assert topic_table(topics, nodes)["area_id"].tolist() == ["", ""]
    grouped = nodes.iloc[1:].assign(node_id=["A0", "0", "1"])  # one area over two topics
    assert topic_table(topics, grouped)["area_id"].tolist() == ["A0", "A1"]


def test_a_click_on_an_area_opens_its_largest_topic_among_the_topics():
    """The Topics page's detail shows a topic: opened with the table at the area level, it
    read as if the topic were the clicked area."""
    nodes = pd.DataFrame(
        {
            "node_id": ["A0", "A1", "0", "1", "2", "0.0", "0.1"],
            "level": ["area", "area", "topic", "topic", "topic", "subtopic", "subtopic"],
            "parent_id": [None, None, "A1", "A1", "A0", "0", "0"],
            "size": [3, 9, 4, 5, 3, 2, 2],
        }
    )
    assert opened_by(nodes, "A1", "area") == ("1", "topic")  # the larger of its two topics
    assert opened_by(nodes, "A0", "area") == ("2", "topic")
    assert opened_by(nodes, "1", "topic") == ("1", "topic")
    assert opened_by(nodes, "0.1", "subtopic") == ("0", "subtopic")  # its topic, that level
    # An unsplit topic among the subtopics opens at the subtopic level it was clicked at.
    assert opened_by(nodes, "1", "subtopic") == ("1", "subtopic")
