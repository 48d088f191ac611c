"""The scale rows of bench/README.md's results table: the build engines (9), fitting on a
sample (10, 10b), 100,000 and 1,000,000 papers (11-11d), the neighbour graph (15) and the
synthetic corpus's checks (16).
"""

from __future__ import annotations

from bench.table_cells import row


def engines_row(result: dict) -> str:
    """Embedding every real abstract with each engine (bench/engines.py): Ray's overhead on
    one machine, where it cannot win."""

    def cell(r: dict) -> str:
        start = f", of which {r['startup_s']} s starting Ray" if r["engine"] == "ray" else ""
        return (f"{r['per_s']}/s ({r['seconds']} s{start}), CPU {r['cpu_s']} s, "
                f"peak RSS {r['peak_rss_mb']:,} MB")  # fmt: skip

    local, ray = result["local"], result["ray"]
    return row(
        f"9. embed {local['texts']:,} real abstracts ({local['precision']}), cold: "
        "`--engine ray` (local Ray, one actor per core) vs local (no target)",
        cell(ray), cell(local), result["ray_over_local"], None, result["when"][:10],
    )  # fmt: skip


def sample_fit_rows(result: dict) -> list[str]:
    """Topics fitted on a sample (the rest assigned) against full fits (bench/sample_fit.py):
    at least as close at the leaf level, on average, as full fits with other seeds are to
    each other. The topic level is given beside it. Probes (samples larger than a build's
    default, leaving out only a few papers) are shown, not judged."""

    def cell(r: dict) -> str:
        return (f"leaf ARI {r['leaf']['mean_ari']} (median {r['leaf']['median_ari']}, "
                f"{r['leaf']['min_ari']}-{r['leaf']['max_ari']}), "
                f"{r['leaf']['mean_matched_share']:.1%} same leaf; topic ARI "
                f"{r['topic']['mean_ari']}, {r['topic']['mean_matched_share']:.1%} same topic")  # fmt: skip

    def span(values: list[int]) -> str:
        return f"{min(values)}-{max(values)}"

    full = result["full_fits"]
    seeds = full["seeds"]
    counts = result["full_counts"]
    stock = (f"full fits, seeds {seeds[0]}-{seeds[-1]}, {full['leaf']['pairs']} pairs: "
             f"{cell(full)}; {span(counts['leaf'])} leaves, {span(counts['topic'])} topics")  # fmt: skip
    rows = []
    for size, runs in result["samples"].items():
        by_fit = [f["leaf"] for f in runs["as_good_as_a_reseed_by_fit"].values()]
        ours = (f"{len(runs['seeds'])} samples x {len(seeds)} full fits: {cell(runs)}; "
                f"{span(runs['counts']['leaf'])} leaves, {span(runs['counts']['topic'])} topics"
                f"; as good as a reseed (a full fit cut to the sample, the rest assigned, "
                f"against the other full fits; leaf per full fit {min(by_fit)}-{max(by_fit)}):"
                f" {cell(runs['as_good_as_a_reseed'])}; against the fit it was cut "
                f"from: leaf {runs['cut_vs_own_fit']['leaf']['mean_ari']}, topic "
                f"{runs['cut_vs_own_fit']['topic']['mean_ari']}")  # fmt: skip
        left_out = 1 - int(size) / result["papers"]
        probe = f" (a probe: {left_out:.1%} left out)" if runs["probe"] else ""
        rows.append(row(
            f"10. fit on a sample of {int(size):,} of {result['papers']:,}{probe}, the rest "
            "assigned: leaf ARI against full fits (mean ≥ the full fits' mean with each other)",
            ours, stock, "",
            None if runs["probe"] else runs["leaf"]["mean_ari"] >= full["leaf"]["mean_ari"],
            result["when"][:10],
        ))  # fmt: skip
    return rows


def sample_quality_rows(result: dict) -> list[str]:
    """The sample fit judged by what users see (bench/sample_quality.py): per measure, the
    sample fits' median within the spread of the full fits' seeds."""

    def cell(spread: dict) -> str:
        def one(key: str, fmt: str) -> str:
            s = spread[key]
            return f"{s['median']:{fmt}} ({s['min']:{fmt}}-{s['max']:{fmt}})"

        return (f"largest leaf {one('largest_leaf_share', '.1%')}, outliers "
                f"{one('outlier_share', '.1%')}, silhouette {one('silhouette', '.3f')}, leaf "
                f"NPMI {one('leaf_npmi', '.3f')}; build {one('wall_s', '.0f')} s, peak RSS "
                f"{one('peak_rss_mb', ',.0f')} MB")  # fmt: skip

    full = result["full_spread"]
    seeds = f"seeds {result['seeds'][0]}-{result['seeds'][-1]}"
    rows = []
    for size, entry in result["samples"].items():
        missed = [k for k, ok in entry["within"].items() if not ok]
        rows.append(row(
            f"10b. fit on a sample of {int(size):,} of {result['papers']:,}, judged as users "
            "see it: median (min-max) over " + seeds + "; each measure's sample median within "
            "the full fits' spread" + (f" (outside: {', '.join(missed)})" if missed else ""),
            cell(entry["spread"]), "full fits: " + cell(full), "", not missed,
            result["when"][:10],
        ))  # fmt: skip
    return rows


def scale_row(result: dict) -> str:
    """bench/scale.py's build at one size and every page on the result: row 11 at 100,000,
    11b at 1,000,000; 11c and 11d the builds that fitted every paper (the curve, no target)."""
    b, c = result["build"], result["build"]["counts"]
    sample = c.get("sample") or {}
    fitted = f" (fitted on {sample['fitted']:,}, {sample['assigned']:,} assigned)" if sample else ""
    stages = ", ".join(f"{k} {v}" for k, v in b["stages"].items())
    pages = result.get("page_s", {})
    ours = (
        f"build {b['wall_s']} s, peak RSS {b['peak_rss_mb']:,} MB; {c['topics']} topics"
        f"{fitted}, {c['subtopics']} subtopics, largest leaf {c['largest_leaf_share']:.1%}, "
        f"outliers {c['outlier_share']:.1%}; stages (s): {stages}; page p50 (s): "
        + (", ".join(f"{k} {v}" for k, v in pages.items()) or "not measured")
    )
    full = bool(result.get("full_fit"))
    ok = None if full else bool(pages) and max(pages.values()) <= 1.5 and b["peak_rss_mb"] <= 16_000
    small = result["papers"] <= 100_000
    label = ("11c" if small else "11d") if full else ("11" if small else "11b")
    what = "synthetic corpus, every paper fitted" if full else "synthetic corpus"
    return row(
        f"{label}. {result['papers']:,} papers ({what}): build, peak RSS (≤ 16 GB), every "
        "page's p50 (≤ 1.5 s each)", ours, "", "", ok, result["when"][:10],
    )  # fmt: skip


def generator_row(size: int, g: dict, when: str) -> str:
    """The synthetic corpus's checks at one size (bench/synthetic_corpus.py)."""
    cells = "; ".join(
        f"{name}: " + ", ".join(f"{q} {v}" for q, v in values.items())
        for name, values in g["nn_similarity"].items()
    )
    return row(
        f"16. synthetic corpus at {size:,} (bench/synthetic_corpus.py): nearest paper is the "
        "source or a paper made from it (< 5%)" + (f", on {g['on']}" if "on" in g else ""),
        f"{g['source_pile_share']:.1%} (the source {g['nearest_is_source']:.1%}, a sibling "
        f"{g['nearest_is_sibling']:.1%}; either parent or a paper made from one "
        f"{g['parent_pile_share']:.1%}; a real paper {g['nearest_is_real_share']:.1%}, "
        f"{g['nearest_is_real_if_alike']:.1%} if synthetic papers were drawn as real ones "
        f"are); nearest-neighbour cosine quantiles: {cells}",
        "", "", g["source_pile_share"] < 0.05, when,
    )  # fmt: skip


def neighbours_rows(result: dict) -> list[str]:
    """bench/neighbours.py: the approximate graph against the exact one (recall@10, times)."""
    when, real = result["when"][:10], result["real"]
    two = real["two_threads"]
    rows = [row(
        f"15. neighbour graph, {real['papers']:,} real abstracts (k = {real['k']}): approximate "
        "recall@10 against exact (≥ 0.95), the same graph twice",
        f"NN-descent {round(real['approximate_s'], 2)} s, recall@10 {real['recall_at_10']}, identical "
        f"twice: {real['deterministic']}; two threads: {two['runs'][0]['seconds']} s, "
        f"identical twice: {two['deterministic']}, same as one thread: "
        f"{two['same_as_one_thread']}", f"exact {real['exact_s']} s",
        real["approximate_over_exact"], real["recall_at_10"] >= 0.95 and real["deterministic"],
        when,
    )]  # fmt: skip
    for size, r in result["synthetic"].items():
        a = r["approximate"]
        exact = r.get("exact")
        rows.append(row(
            f"15. neighbour graph, {int(size):,} papers ({r['real']:,} real + synthetic): time, "
            "peak RSS, recall@10 (no target)"
            + (f" (on {r['recall_on']})" if "recall_on" in r else ""),
            f"NN-descent {a['seconds']} s (+{a['first_small_call_s']} s compiling), peak RSS "
            f"{a['peak_rss_mb']:,} MB (with the vectors loaded: {a['rss_with_vectors_mb']:,} MB),"
            f" recall@10 {r['recall_at_10']}",
            f"exact {exact['seconds']} s, peak RSS {exact['peak_rss_mb']:,} MB" if exact
            else "exact: not run", r.get("approximate_over_exact", ""), None, when,
        ))  # fmt: skip
    return rows
