"""The serving rows of bench/README.md's results table: the viewer (6), the load runs (7),
semantic search from a published folder (8), curation (13) and one badly behaved client (14).
"""

from __future__ import annotations

from bench.table_cells import row, stored


def viewer_rows() -> list[str]:
    """Target 6: page runs, filter changes, the map's first render and the server's RSS."""
    view = stored("viewer")
    if not view:
        return []
    when = view["when"][:10]
    pages = ", ".join(f"{k} {v}" for k, v in view["page_s"].items())
    rows = [row("6a. page run p50, 3k papers (≤ 0.3 s each)", pages, "", "",
                 view["page_p50_max_s"] <= 0.3, when)]  # fmt: skip
    f = max(view["filter_s"].values())
    rows.append(row("6b. filter change (≤ 0.15 s)",
                     ", ".join(f"{k} {v}" for k, v in view["filter_s"].items()), "", "",
                     f <= 0.15, when))  # fmt: skip
    b = view.get("browser", {})
    if "map_first_render_s" in b:
        rows.append(row("6c. map first render after navigating to it (≤ 2.5 s)",
                         f"{b['map_first_render_s']} s (fresh tab: {b['map_fresh_tab_load_s']} s)",
                         "", "", b["map_first_render_s"] <= 2.5, when))  # fmt: skip
        rows.append(row("6d. Streamlit RSS after every page (≤ 400 MB)", f"{b['rss_mb']} MB",
                         "", "", b["rss_mb"] <= 400, when))  # fmt: skip
    big = ", ".join(f"{k} {v}" for k, v in view["big_page_s"].items())
    rows.append(row(f"6e. page run p50, {view['big_papers']:,} papers (≤ 1.5 s each)", big,
                     "", "", view["big_page_max_s"] <= 1.5, when))  # fmt: skip
    if m := view.get("million"):
        pages = ", ".join(f"{k} {v}" for k, v in m["page_s"].items())
        rss = m.get("rss_mb")
        ok = max(m["page_s"].values()) <= 1.5 and rss is not None and rss <= 1536
        rows.append(row(
            f"6f. {m['papers']:,} papers (synthetic): page run p50 (≤ 1.5 s each) and the "
            "server's RSS after every page (≤ 1.5 GB)",
            f"{pages}; RSS {rss} MB", "", "", ok, when,
        ))  # fmt: skip
    return rows


def load_row(load: dict, label: str, verdict: bool) -> str:
    """One load-test run: changes, latency (p50, p95, slowest session), CPU per change,
    bytes sent per change, memory, errors; `verdict`: whether the row carries a target."""
    parts = [
        f"{load['filter_changes']} changes",
        f"p50 {load['latency_p50_s']} s",
        f"p95 {load['latency_p95_s']} s"
        + (f" (slowest session {s} s)" if (s := load.get("slowest_session_p95_s")) else ""),
    ]
    if cpu := load.get("server_cpu_ms_per_change"):
        parts.append(f"{cpu} ms CPU/change")
    if sent := load.get("sent_kb_per_change_p50"):
        parts.append(f"{sent} KB sent/change")
    parts += [f"RSS {load['rss_growth']:+.1%}", f"{len(load['errors'])} errors"]
    ok = not load.get("missed", ["?"]) if verdict else None
    return row(label, ", ".join(parts), "", "", ok, load["when"][:10])


def onnx_row(result: dict) -> str:
    """The published folder's semantic search: first query and RSS, ONNX against the model."""
    onnx, model = result["encoders"]["onnx"], result["encoders"]["sentence-transformers"]
    site = result["published"]
    ok = site["rss_after_query_mb"] <= 400 and site["semantic"]
    return row(
        f"8. semantic query, published viewer-only folder ({site['corpus']}): server RSS after "
        "every page and the query (≤ 400 MB)",
        f"{site['rss_after_query_mb']} MB; first query {onnx['first_query_s']} s, then "
        f"{onnx['later_query_ms']} ms; folder {site['published_du']}",
        f"sentence-transformers: first query {model['first_query_s']} s, then "
        f"{model['later_query_ms']} ms", "", ok, result["when"][:10],
    )  # fmt: skip


def curation_row(result: dict) -> str:
    """bench/curation.py: one more change and the page load after it, at 10,000 changes."""
    warm, fresh, disk = result["warm"], result["fresh"], result["disk"]
    pages = ", ".join(
        f"{page} {v['full']} s vs {v['empty']} s ({v['ratio']})" for page, v in warm.items()
    )
    ours = (
        f"one change {result['change_ms']} ms (empty history: {result['empty_change_ms']} ms); "
        f"warm page load after it: {pages}; fresh worker: {fresh['full_s']} s vs "
        f"{fresh['empty_s']} s ({fresh['ratio']}); log {disk['log_mb']} MB + members "
        f"{disk['members_mb']} MB ({disk['member_files']} files)"
    )
    label = (
        f"13. curation, {result['corpus']} with {result['changes']:,} changes "
        f"({result['in_effect']:,} in effect): one more change ≤ 50 ms, the page load after "
        "it ≤ 1.2x an empty history's (warm and fresh)"
    )
    ratio = f"warm {result['warm_ratio_max']}, fresh {fresh['ratio']}"
    return row(label, ours, "", ratio, result["ok"], result["when"][:10])


def query_flood_row(result: dict) -> str:
    """bench/query_flood.py: one source's flood of questions against a visitor (issue 52)."""
    ours = result["ours"]
    before = result.get("before")
    then = (
        f"; code before: p50 {before['flood']['p50_s']} s ({before['ratio_p50']}x)"
        if before
        else ""
    )
    label = (
        f"14g. {result['sessions']} sessions from one source ask new 500-character "
        f"questions for {result['flood_s']:.0f} s: a visitor's topic map p50 (< 2x alone)"
    )
    figures = (
        f"p50 {ours['flood']['p50_s']} s (p95 {ours['flood']['p95_s']} s) vs alone "
        f"{ours['calm']['p50_s']} s; attacker pages {ours['attacker_pages']}{then}"
    )
    return row(label, figures, "", str(ours["ratio_p50"]), result["met"], result["when"][:10])


def withstand_rows(result: dict) -> list[str]:
    """bench/withstand.py: what one badly behaved client costs the others (issue 28)."""
    when, missed = result["when"][:10], " ".join(result["missed"])
    conns, fail, clear = result["conns"], result["failover"], result["clear_cache"]
    big, lasso, back = result["big_values"], result["lasso"], result["restart"]

    def one(letter: str, key: str, label: str, ours: str, ratio: str = "") -> str:
        return row(f"14{letter}. {label}", ours, "", ratio, key not in missed, when)

    refused = ", ".join(
        f"{k.replace('_mb', ' MB')} {v}/40" for k, v in big["refused_of_40"].items()
    )
    return [
        one("a", "conns_p95_s", f"one source holds {conns['held']} websockets (its cap): a "
            "new visitor's topic map p95 (≤ 2 s)",
            f"p50 {conns['p50_s']} s, p95 {conns['p95_s']} s over {conns['visits']} visits"),
        one("b", "failover_s", "a SIGSTOPped worker's visitor served again by another (≤ 15 s)",
            f"websocket closed after {fail['closed_after_s']} s, page run again after "
            f"{fail['served_again_s']} s (worker {fail.get('answered_by', '?')})"),
        one("c", "clear_cache_ratio", "a visit after a visitor's clear_cache (≤ 1.5x warm)",
            f"{clear['after_s']} s vs warm {clear['warm_s']} s", str(clear["ratio"])),
        one("d", "big_values_rss_mb", "40 search values of 20 MB (and 40 of 1 MB): worker RSS "
            "growth (≤ 50 MB)", f"{big['growth_mb']:+} MB ({big['rss_before_mb']} → "
            f"{big['rss_after_mb']} MB); refused by Streamlit's size cap: {refused}"),
        one("e", "lasso_cpu_s", f"a {lasso['vertices']:,}-vertex lasso over "
            f"{lasso['points']:,} points: selection CPU (≤ 1 s)", f"{lasso['cpu_s']} s"),
        one("f", "restart_ratio", "first visit to a worker restarted after SIGKILL (≤ 1.5x "
            "warm)", f"{back.get('first_s')} s vs warm {back.get('warm_s')} s; back in rotation "
            f"{back.get('back_after_s')} s after the kill", str(back.get("ratio"))),
    ]  # fmt: skip
