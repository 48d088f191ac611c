"""Compare: a corpus's nodes between two years (?corpus=X&years=2008,2018), or two corpora's
topics (?mode=corpora&a=X&b=Y). The work is explorer.view.compare's, kept per pair of runs."""

import pandas as pd
import streamlit as st

from explorer.node_ids import topic_of
from explorer.view import compare
from explorer.view.charts.comparisons import shift_bars, topic_sankey
from explorer.view.store.nodes import level_ids, node_name
from explorer.view.text import md, md_format
from explorer.view.ui.data import RunData, colors, corpora, current, per_run, run_of
from explorer.view.ui.router import ensure_router
from explorer.view.ui.widgets.pickers import level_picker, warn_unknown
from explorer.view.ui.widgets.tables import topic_link

ensure_router()
MODE, YEARS, A, B = "mode", "years", "a", "b"  # the page's URL parameters
MODES = {"years": "Two years of one corpus", "corpora": "Two corpora"}
SAME_CORPUS = "Pick two different corpora to compare."
ONE_CORPUS = "Only one corpus is built here: build another with explorer build to compare two."
LINK = st.column_config.LinkColumn("", display_text="open", width="small")


def _years(data: RunData) -> list[int]:
    return sorted(int(y) for y in data.papers["year"].dropna().unique())


def _year_table(data: RunData, level: str, year_a: int, year_b: int) -> pd.DataFrame:
    return compare.year_shares(data.papers, level_ids(data.papers, level), year_a, year_b)


def _pair(data: RunData, corpus_b: str, run_b: str, version_b: tuple):
    """Corpus A (`data`) against corpus B's latest run: kept per pair of runs (and curation)."""
    other = run_of(corpus_b)
    return compare.compare_corpora(
        data.papers, data.topics, data.embeddings, other.papers, other.topics, other.embeddings
    )


def picked_years(years: list[int]) -> tuple[int, int]:
    """?years=A,B when both are years of this corpus, else the first and last year."""
    raw = st.query_params.get(YEARS, "")
    parts = [p.strip() for p in raw.split(",")] if raw else []
    if len(parts) == 2 and all(p.isdigit() and int(p) in years for p in parts):
        return int(parts[0]), int(parts[1])
    if raw:
        st.warning(md_format("Ignoring ?years={raw}: not two years of this corpus.", raw=raw[:40]))
    return years[0], years[-1]


def picked_mode() -> str:
    """?mode= when it names a mode; a link from before it says "corpora" by ?a= or ?b=."""
    raw = st.query_params.get(MODE)
    if raw in MODES:
        return raw
    if raw is not None:
        st.warning(md_format("Ignoring ?mode={raw}: not a way to compare.", raw=raw[:40]))
    return "corpora" if A in st.query_params or B in st.query_params else "years"


def years_mode(data: RunData) -> None:
    for key in (A, B):
        st.query_params.pop(key, None)
    years = per_run(data, _years)
    if len(years) < 2:
        st.info("This corpus has papers from one year only: compare it with another corpus.")
        return
    first, last = picked_years(years)
    left, right = st.columns(2)
    year_a = left.selectbox("From", years, index=years.index(first), key="cmp_from")
    year_b = right.selectbox("To", years, index=years.index(last), key="cmp_to")
    st.query_params[YEARS] = f"{year_a},{year_b}"
    level = level_picker(data)
    table = per_run(data, _year_table, level, year_a, year_b)
    name = node_name(data.nodes)
    emerging = table[table["status"] == "emerging"]
    fading = table[table["status"] == "fading"]
    st.caption(
        md_format(
            "{e} emerging and {f} fading between {a} and {b} (present in a year: at least "
            "{floor:.1%} of its papers).",
            e=len(emerging),
            f=len(fading),
            a=year_a,
            b=year_b,
            floor=compare.PRESENT_SHARE,
        )  # fmt: skip
    )
    st.plotly_chart(shift_bars(table, name, colors(data)), key="shifts")
    shown = table.assign(
        open=[topic_link(data.corpus, topic_of(n)) for n in table["node_id"]],
        node=[name(n) for n in table["node_id"]],
    )[["open", "node", "status", "papers_a", "share_a", "papers_b", "share_b", "shift"]]
    percent = st.column_config.NumberColumn(format="percent")
    st.dataframe(
        shown,
        hide_index=True,
        key="year_table",
        column_config={
            "open": LINK, "shift": percent,
            "share_a": st.column_config.NumberColumn(f"share {year_a}", format="percent"),
            "share_b": st.column_config.NumberColumn(f"share {year_b}", format="percent"),
            "papers_a": f"papers {year_a}", "papers_b": f"papers {year_b}",
        },
    )  # fmt: skip


def _picked_pair(data: RunData, names: list[str]) -> tuple[str, str] | None:
    """Corpus A and B as picked (a link's, else this corpus and another); None, with a line
    saying so, when both are one corpus: it would match every topic to itself."""
    left, right = st.columns(2)
    default_b = next((n for n in names if n != data.corpus), data.corpus)
    for key, default in ((A, data.corpus), (B, default_b)):
        if key not in st.query_params:  # a link's choice wins over the default
            st.session_state.setdefault(key, default)
    corpus_a = left.selectbox("Corpus A", names, key=A, bind="query-params")
    corpus_b = right.selectbox("Corpus B", names, key=B, bind="query-params")
    if corpus_a != corpus_b:
        return corpus_a, corpus_b
    st.info(md(SAME_CORPUS if len(names) > 1 else ONE_CORPUS))
    return None


def corpora_mode(data: RunData) -> None:
    st.query_params.pop(YEARS, None)
    names = corpora()
    for key in (A, B):
        warn_unknown(key, names)
    picked = _picked_pair(data, names)
    if picked is None:
        return
    corpus_a, corpus_b = picked
    one, other = run_of(corpus_a), run_of(corpus_b)
    reason = compare.incomparable(one.manifest.config, other.manifest.config)
    if reason:
        st.error(md_format("These corpora cannot be compared: {reason}.", reason=reason))
        return
    result = per_run(one, _pair, corpus_b, other.run_id, other.curation)
    st.caption(
        md_format(
            "{m} matched pairs (centroid cosine ≥ {c}, within {g} of the best partner), "
            "{a} topics only in {na}, {b} only in {nb}.",
            m=len(result.matches),
            c=compare.MATCH_COSINE,
            g=compare.MATCH_MARGIN,
            a=len(result.only_a),
            na=corpus_a,
            b=len(result.only_b),
            nb=corpus_b,
        )  # fmt: skip
    )
    if len(result.matches):
        sankey = topic_sankey(result.matches, corpus_a, corpus_b, colors(one), colors(other))
        st.plotly_chart(sankey, key="sankey")
    matches = result.matches.assign(
        open_a=[topic_link(corpus_a, t) for t in result.matches["a"]],
        open_b=[topic_link(corpus_b, t) for t in result.matches["b"]],
    )
    st.markdown("**Matched topics**")
    st.dataframe(
        matches[["open_a", "a", "label_a", "size_a", "open_b", "b", "label_b", "size_b", "cosine"]],
        hide_index=True,
        key="matches",
        column_config={
            "open_a": LINK, "open_b": LINK, "a": f"{corpus_a} topic", "b": f"{corpus_b} topic",
            "label_a": "label", "label_b": "label", "size_a": "papers", "size_b": "papers",
        },
    )  # fmt: skip
    for corpus, alone, key in (
        (corpus_a, result.only_a, "only_a"),
        (corpus_b, result.only_b, "only_b"),
    ):
        st.markdown(md_format("**Only in {corpus}**", corpus=corpus))
        st.dataframe(
            alone.assign(open=[topic_link(corpus, t) for t in alone["topic_id"]]),
            hide_index=True,
            key=key,
            column_config={"open": LINK},
        )


data = current()
st.title("Compare")
mode = st.radio(
    "Compare",
    list(MODES),
    index=list(MODES).index(picked_mode()),
    format_func=MODES.__getitem__,
    horizontal=True,
    key=MODE,
)
# By hand, not bind=: Streamlit would write the shown text (?mode=Two+corpora).
st.query_params[MODE] = mode
if mode == "years":
    years_mode(data)
else:
    corpora_mode(data)
