"""The quality rows of bench/README.md's results table: topics that hold still across seeds
and precisions (12-12d), short lists (12c), and the tables of topic quality, coherence and
label words per corpus that follow the rows.
"""

from __future__ import annotations

from bench.quality import diversity_met, label_hit_met
from bench.table_cells import row, stored


def reproducibility_rows(result: dict) -> list[str]:
    """Row 12 per corpus: topic and leaf ARI across seeds and precisions, and the grain,
    with the code before beside it where measured (bench/reproducibility.py)."""
    if "corpora" not in result:  # an older result (a single fit per build, ICML only)
        return []
    targets = result["targets"]
    rows = []
    for entry in result["corpora"].values():
        now, before = entry["now"], entry.get("before")
        measured = entry.get("now_measured", result["when"])[:10]  # kept by --skip-agreement
        ok = all(
            now[f"{pair}_{level}_ari"] >= targets[f"{level}_ari"]
            for pair in ("seed", "precision")
            for level in ("topic", "leaf")
        )
        label = (
            f"12. topics that hold still, {entry['name']}: two seeds and float32 vs bfloat16, "
            f"topic ARI (≥ {targets['topic_ari']}) and leaf ARI (≥ {targets['leaf_ari']})"
        )
        rows.append(row(label, _agreement(now), _agreement(before) if before else "",
                         "", ok, measured))  # fmt: skip
    if npmi := _npmi_row(result):
        rows.append(npmi)
    if (quality := result.get("quality")) and "before" in quality:
        now, before = quality["now"], quality["before"]

        def cell(q: dict) -> str:
            return (f"mix venue homogeneity {q['mix_venue_homogeneity']}, WWW keyword lift "
                    f"{q['www_keyword_lift']}, WWW label hit {q['www_label_hit']:.1%}"
                    f"{_www_seeds(q)}")  # fmt: skip

        held = all(now[k] >= before[k] - 0.02 for k in now if k != "www_seeds")
        rows.append(row(
            "12d. no worse where it counts (each within 0.02 of the code before, or better)",
            cell(now), f"code before: {cell(before)}", "", held,
            quality.get("measured", result["when"])[:10],
        ))  # fmt: skip
    if cold := result.get("cold_icml"):
        now, before = cold["now"], cold.get("before")
        ratio = round(now["wall_s"] / before["wall_s"], 3) if before else ""
        rows.append(row(
            "12b. cold build, ICML 2013-2019, consensus vs the code before (≤ 1.5x)",
            _cold_cell(now), _cold_cell(before) if before else "",
            ratio, None if not before else ratio <= 1.5, cold.get("measured", result["when"])[:10],
        ))  # fmt: skip
    return rows


def _www_seeds(quality: dict) -> str:
    """Where measured, WWW 2025's label hit and keyword lift per seed and their means."""
    seeds = quality.get("www_seeds")
    if not seeds:
        return ""
    hits = [s["www_label_hit"] for s in seeds.values()]
    lifts = [s["www_keyword_lift"] for s in seeds.values()]
    return (
        f" (seeds {'/'.join(seeds)}: label hit {' / '.join(f'{h:.1%}' for h in hits)}, mean "
        f"{sum(hits) / len(hits):.1%}; keyword lift mean {sum(lifts) / len(lifts):.3f})"
    )


def _cold_cell(side: dict) -> str:
    """A side's cold build: the median wall time (of how many runs) and its peak memory,
    the process tree's PSS where measured (the consensus fits run in a worker too)."""
    runs = f" (median of {len(side['runs'])})" if side.get("runs") else ""
    pss = side.get("peak_tree_pss_mb")
    memory = f"tree PSS {pss:,.1f} MB" if pss == pss and pss else "own RSS"  # NaN: unmeasured
    own = f"{side['peak_rss_mb']:,.1f} MB"
    return (
        f"{side['wall_s']} s{runs}, peak {memory} {own}"
        if memory == "own RSS"
        else (f"{side['wall_s']} s{runs}, peak {memory} (own RSS {own})")
    )


BUILDS = ("f32", "f32_seed7", "bf16")


def _mean_npmi(side: dict) -> dict[str, float]:
    """Each level's NPMI averaged over one side's three builds (levels every build has)."""
    builds = [side[k]["npmi"] for k in BUILDS]
    levels = [lvl for lvl in builds[0] if all(b.get(lvl) is not None for b in builds)]
    return {lvl: sum(b[lvl] for b in builds) / len(builds) for lvl in levels}


def _sides_dated(entry: dict, when: str) -> str:
    """When a corpus's two sides were measured: one date when side by side, else both (a
    shift between days is also one between hosts' rounding)."""
    now, before = (entry.get(f"{s}_measured", when)[:10] for s in ("now", "before"))
    return f" ({now})" if now == before else f" (now {now}, before {before})"


def _npmi_row(result: dict) -> str | None:
    """Row 12e: issue 49's "no worse" on coherence: each corpus's mean NPMI per level within
    0.02 of the code before's, from the same builds as row 12."""
    corpora = [e for e in result["corpora"].values() if e.get("before")]
    if not corpora:
        return None
    cells, ok = [], True
    for entry in corpora:
        now, before = _mean_npmi(entry["now"]), _mean_npmi(entry["before"])
        shifts = {lvl: now[lvl] - before[lvl] for lvl in now if lvl in before}
        ok &= all(d >= -0.02 for d in shifts.values())
        cells.append(entry["name"] + _sides_dated(entry, result["when"]) + " " + ", ".join(
            f"{lvl} {now[lvl]:.3f} ({before[lvl]:.3f}, {d:+.3f})" for lvl, d in shifts.items()
        ))  # fmt: skip
    when = max(e.get("now_measured", result["when"]) for e in corpora)[:10]
    return row(
        "12e. mean NPMI per level, three builds per corpus, within 0.02 of the code before",
        "; ".join(cells) + " (now (before, shift))", "", "", ok, when,
    )  # fmt: skip


def _agreement(side: dict) -> str:
    """One side of a row-12 cell: agreement, then each build's grain."""
    f32, builds = side["f32"], [side[k] for k in ("f32", "f32_seed7", "bf16")]
    levels = [lvl for lvl, v in f32["npmi"].items() if v is not None]
    npmi = ", ".join(
        f"{lvl} {sum(b['npmi'][lvl] for b in builds) / len(builds):.3f}" for lvl in levels
    )
    return (
        f"seeds: topic {side['seed_topic_ari']}, leaf {side['seed_leaf_ari']}; precisions: "
        f"topic {side['precision_topic_ari']}, leaf {side['precision_leaf_ari']}; topics "
        f"{'/'.join(str(side[k]['topics']) for k in ('f32', 'f32_seed7', 'bf16'))}, leaves "
        f"{'/'.join(str(side[k]['leaves']) for k in ('f32', 'f32_seed7', 'bf16'))}, largest "
        f"leaf {f32['largest_leaf_share']:.1%}, outliers {f32['outlier_share']:.1%}; mean NPMI of "
        f"the three builds {npmi}{_splits_alike(side)}{_areas(side)}"
    )


def _areas(side: dict) -> str:
    """Where measured, the area level's count per build and agreement (no target)."""
    if "seed_area_ari" not in side:
        return ""
    counts = "/".join(str(side[k]["areas"]) for k in ("f32", "f32_seed7", "bf16"))
    return (
        f"; areas {counts}, area ARI seeds {side['seed_area_ari']}, precisions "
        f"{side['precision_area_ari']}"
    )


def _splits_alike(side: dict) -> str:
    """Where measured, how much of the leaf disagreement is a topic split by one build only."""
    if "seed_leaf_ari_splits_alike" not in side:
        return ""
    return (
        f"; leaf ARI had both builds split the same topics: seeds "
        f"{side['seed_leaf_ari_splits_alike']}, precisions {side['precision_leaf_ari_splits_alike']}"
        f" (papers in a topic one build split: {side['seed_split_in_one_share']:.1%}, "
        f"{side['precision_split_in_one_share']:.1%})"
    )


def short_lists_row(result: dict) -> str:
    """Row 12c: short lists grouped as a reader would (bench/short_lists.py)."""
    ours, alone = result["short_list"], result["consensus_only"]

    def cell(r: dict) -> str:
        return (
            f"mean venue homogeneity {r['mean_homogeneity']}, largest topic at most "
            f"{r['max_largest_share']:.0%}, {min(r['topics'])}-{max(r['topics'])} topics, "
            f"outliers {r['mean_outlier_share']:.1%}"
        )

    label = (
        f"12c. {result['samples']} random {result['size']}-paper samples of CVPR + ICML + ACL: "
        "venue homogeneity (mean ≥ 0.8), no topic over 40%"
    )
    return row(label, cell(ours), f"consensus alone: {cell(alone)}", "", result["ok"],
                result["when"][:10])  # fmt: skip


def subtopic_npmi_row(result: dict) -> str:
    """Row 12f: ICML's subtopic NPMI with each side's topics split each way
    (bench/subtopic_npmi.py), the mean over row 12's three builds."""

    def cell(side: dict) -> str:
        m = side["mean"]
        return (f"as built {m['as_built']:.3f}; split again by the consensus "
                f"{m['consensus_split']:.3f}, by one fit {m['single_split']:.3f}")  # fmt: skip

    label = ("12f. ICML 2013-2019 subtopic NPMI, each side's topics split by the consensus "
             "and by one fit (why 12e; no target)")  # fmt: skip
    return row(label, cell(result["now"]), f"topics of the code before: {cell(result['before'])}",
               "", None, result["when"][:10])  # fmt: skip


def subtopic_rules_row(result: dict) -> str:
    """Row 12g: the leaf agreement of ICML's nine build pairs with each topic split other ways
    on the same fits (bench/subtopic_rules.py); the lowest pair and the mean."""
    ways = result["ways"]

    def cell(way: str) -> str:
        w = ways[way]
        return f"{way.replace('_', ' ')} {w['lowest']:.3f} / {w['mean']:.3f}"

    label = ("12g. ICML 2013-2019 leaf ARI of nine build pairs (lowest / mean), each topic "
             "split other ways on the same fits (why 12's leaves part; no target)")  # fmt: skip
    others = ", ".join(cell(w) for w in ways if w != "as_built")
    checked = "" if result["as_built_is_the_run"] else " (as built differs from the runs!)"
    return row(label, cell("as_built") + checked, others, "", None, result["when"][:10])


def quality_rows() -> list[str]:
    """Topic quality per corpus (bench/quality.py): ours at every level against stock."""
    quality = stored("quality")
    if not quality:
        return []
    rows = [
        "",
        "Topic quality (bench/quality.py; targets: largest leaf ≤ 5%, outliers ≤ 10%):",
        "",
        "| corpus | papers | areas · topics · subtopics | largest leaf (stock: topic) | "
        "outliers (stock) | silhouette (stock) | result | measured |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in quality["corpora"].items():
        ours, stock = entry["ours"], entry["stock"]
        ok = entry["leaf_target_met"] and entry["outlier_target_met"]
        rows.append(
            f"| {name} | {ours['papers']:,} | {ours['areas']} · {ours['topics']} · "
            f"{ours['subtopics']} (stock: {stock['topics']} topics) | "
            f"{ours['largest_leaf_share']:.1%} ({stock['largest_topic_share']:.1%}) | "
            f"{ours['outlier_share']:.1%} ({stock['outlier_share']:.1%}) | "
            f"{ours['silhouette']} ({stock['silhouette']}) | {'pass' if ok else 'FAIL'} | "
            f"{entry.get('when', quality['when'])[:10]} |"
        )
    if www := quality["corpora"].get("www", {}).get("author_keywords"):
        met = label_hit_met(www)
        same = www.get("stock_same_length_share")
        cut = "not measured yet" if same is None else f"{same:.1%}"
        verdict = {True: "pass", False: "**fail**", None: "— (re-run bench.quality)"}[met]
        rows += [
            "",
            f"WWW 2025 author keywords sharing a word with the paper's leaf label (the short "
            f"label the map shows; target: at least stock's topic words cut to the same "
            f"length): {www['ours_share']:.1%} (stock cut to that length: {cut}; stock's ten "
            f"words: {www['stock_share']:.1%}; {www['papers_with_keywords']} papers with "
            f"keywords): {verdict}.",
        ]
    return rows + _coherence_rows(quality) + _label_limits_rows()


def _coherence_rows(quality: dict) -> list[str]:
    """Coherence, diversity and the label audit per corpus (issue 29's targets)."""
    rows = [
        "",
        "Coherence and labels (bench/quality.py; targets: leaves' mean NPMI ≥ stock's, "
        "diversity at every level ≥ stock's minus 0.02, no label fault):",
        "",
        "| corpus | mean NPMI: leaves (stock) | areas · topics · subtopics | diversity: "
        "areas · topics · subtopics · leaves (stock) | label faults | result |",
        "|---|---|---|---|---|---|",
    ]
    for name, entry in quality["corpora"].items():
        if "coherence" not in entry:
            continue
        ours, stock = entry["coherence"]["ours"], entry["coherence"]["stock"]
        levels = [ours.get(k, {}) for k in ("area", "topic", "subtopic")]
        npmi = " · ".join(str(q.get("mean_npmi", "—")) for q in levels)
        spread = " · ".join(str(q.get("diversity", "—")) for q in levels)
        faults = entry.get("label_faults", {}).get("count", "—")
        ok = entry["npmi_target_met"] and diversity_met(entry["coherence"]) and faults == 0
        rows.append(
            f"| {name} | {ours['leaf']['mean_npmi']} ({stock['mean_npmi']}) | {npmi} | "
            f"{spread} · {ours['leaf']['diversity']} ({stock['diversity']}) | {faults} | "
            f"{'pass' if ok else '**fail**'} |"
        )
    return rows


def _label_limits_rows() -> list[str]:
    """Top words chosen four ways, in sample and held out, and WWW's keyword hit against
    label length (bench/label_limits.py): why two of issue 29's targets are not met."""
    limits = stored("label-limits")
    if not limits:
        return []
    rows = [
        "",
        "Top words chosen four ways (bench/label_limits.py; mean NPMI / diversity of the "
        "leaves, the lowest diversity of any level; held out: chosen from the even-numbered "
        "abstracts, NPMI over the odd ones):",
        "",
        "| corpus | top words | in sample: leaves | lowest diversity | held out: leaves |",
        "|---|---|---|---|---|",
    ]
    for name, entry in limits["corpora"].items():
        inside, outside = entry["coherence"]["in_sample"], entry["coherence"]["held_out"]
        for way, levels in inside.items():
            leaf, held = levels["leaf"], outside[way]["leaf"]
            lowest = min(q["diversity"] for q in levels.values())
            rows.append(
                f"| {name} | {way} | {leaf['mean_npmi']} / {leaf['diversity']} | {lowest} | "
                f"{held['mean_npmi']} / {held['diversity']} |"
            )
    if hits := limits["corpora"].get("www", {}).get("hit_by_phrases"):
        cells = "; ".join(
            f"{k}: {h['hit']:.1%} ({h['chars']:.0f} characters)"
            for k, h in hits.items()
            if k != "map"
        )
        short = hits.get("map")
        rows += [
            "",
            f"WWW 2025 keyword hit of a leaf's first k label phrases (mean length): {cells}"
            + (
                f"; the map's short label {short['hit']:.1%} ({short['chars']:.0f})"
                if short
                else ""
            )
            + f". Measured {limits['when'][:10]}.",
        ]
    return rows
