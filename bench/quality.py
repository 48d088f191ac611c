"""Topic quality at every level, against stock BERTopic, on three mixes and WWW 2025.

For each corpus: papers, count per level, the largest leaf's share (target <= 5%), the
outlier share (target <= 10%), the silhouette of leaves in the embedding space (cosine,
outliers left out), and ten leaf labels picked at random; the same figures for stock
BERTopic (`BERTopic().fit_transform(docs, embeddings)` on the very same vectors). On WWW
2025, whose papers carry author keywords: the share of papers whose keywords share a word
with their leaf's label (stock: with its topic's top ten words). Per corpus, the NPMI
coherence of every node's top 10 words (explorer.build.coherence; documents as the window,
over the corpus's own abstracts) and the topic diversity of every level, ours and stock's,
both scored on one document x word matrix (the build's vectorizer, stop words out): our
nodes' top words as the build ranked them, stock's its own c-TF-IDF ranking with stop words
skipped. The label audit (explorer.build.labels.audit: boilerplate, fragments of a longer
term, one term twice, shared sibling labels) of every run; the target is no fault.

    python -m bench.quality            # writes bench/results/quality.json
"""

from __future__ import annotations

import json
import random
import re
import sys
from typing import TYPE_CHECKING

import numpy as np

from bench.common import (
    PAPERLISTS,
    WORK,
    explorer_cmd,
    now,
    require_shared,
    reuse_embeddings,
    run_child,
    timed,
    write_results,
)
from explorer.node_ids import OUTLIER_ID

if TYPE_CHECKING:
    import pandas as pd

CORPORA = {
    "neurips-icml-aistats": [f"nips/nips20{y:02d}.json" for y in range(8, 19)]
    + ["icml", "aistats"],
    "cvpr-icml-acl": ["cvpr", "icml", "acl"],
    "icml": ["icml"],
}
WWW = ["www"]
SILHOUETTE_SAMPLE = 5000
LEAF_TARGET, OUTLIER_TARGET = 0.05, 0.10
# Issue 52's rules (decided on issue 29's two open targets): every level's topic diversity at
# least stock BERTopic's minus DIVERSITY_MARGIN, and the WWW label hit at least stock's when
# stock's topic words are cut to the same number of characters as the map's label.
DIVERSITY_MARGIN = 0.02
_WORD = re.compile(r"[a-z][a-z0-9-]+")


def build_run(cache, name: str, paths: list[str], *options: str):
    """`explorer build` of `paths` in a child process, its wall time and peak RSS measured:
    the run and the child's result (bench/sample_quality.py builds through this too). A
    failed build ends the benchmark with the end of its stderr."""
    from explorer.artifacts import open_run

    args = explorer_cmd(
        "--cache-dir", str(cache), "build", *paths, "--name", name, "--no-progress", *options
    )
    result = run_child(timed(args))
    if result.returncode != 0:
        sys.exit(f"build of {name} failed:\n{result.stderr[-2000:]}")
    return open_run(cache, name), result


def run_vectors(run, cache) -> tuple[list[str], np.ndarray]:
    """The run's papers' texts and their cached float32 embeddings (nothing is re-embedded)."""
    from explorer.build.corpus import normalise_text
    from explorer.build.embed import embed_texts
    from explorer.build.models import Embedder

    config = run.manifest.config
    docs = [normalise_text(a) for a in run.table("papers")["abstract"]]
    embedder = Embedder.of(
        config.embedding_model, cache_root=cache, precision=config.embedding_precision
    )
    vectors, new = embed_texts(docs, embedder, progress=False)
    assert new == 0, "the build embedded every text; the cache must hold them"
    return docs, vectors


def _silhouette(vectors: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import silhouette_score

    keep = np.flatnonzero(labels != OUTLIER_ID)
    if len(set(labels[keep].tolist())) < 2:
        return float("nan")
    rng = np.random.default_rng(0)
    sample = rng.choice(keep, size=min(SILHOUETTE_SAMPLE, len(keep)), replace=False)
    return round(float(silhouette_score(vectors[sample], labels[sample], metric="cosine")), 4)


def our_scores(run, vectors: np.ndarray) -> dict:
    from explorer.view.store.nodes import level_ids

    papers, nodes = run.table("papers"), run.table("nodes")
    leaf = level_ids(papers, "subtopic").astype(str).to_numpy()
    levels = run.manifest.counts.levels
    leaves = nodes[nodes["node_id"].isin(set(leaf) - {OUTLIER_ID})]
    picked = random.Random(0).sample(sorted(leaves["node_id"]), min(10, len(leaves)))
    label = dict(zip(nodes["node_id"], nodes["label"], strict=True))
    return {
        "papers": len(papers),
        "areas": levels.areas,
        "topics": levels.topics,
        "subtopics": levels.subtopics,
        "leaves": len(leaves),
        "largest_leaf_share": levels.largest_leaf_share,
        "outlier_share": run.manifest.counts.outlier_share,
        "silhouette": _silhouette(vectors, leaf),
        "random_leaf_labels": [f"{n}: {label[n]}" for n in picked],
        "seconds": round(sum(run.manifest.timings.values()), 1),
    }


def _stock(docs: list[str], vectors: np.ndarray) -> tuple[dict, np.ndarray, object]:
    import time

    from bertopic import BERTopic

    start = time.perf_counter()
    model = BERTopic()
    topics, _ = model.fit_transform(docs, vectors)
    topics = np.asarray(topics)
    real = topics[topics != -1]
    sizes = np.bincount(real) if len(real) else np.array([0])
    return (
        {
            "topics": int(len(set(real.tolist()))),
            "largest_topic_share": round(float(sizes.max() / len(topics)), 4),
            "outlier_share": round(float((topics == -1).mean()), 4),
            "silhouette": _silhouette(vectors, topics.astype(str)),
            "seconds": round(time.perf_counter() - start, 1),
        },
        topics,
        model,
    )


def _stock_top_words(model, topic: int, n: int) -> list[str]:
    """Stock BERTopic's best words of a topic by its own c-TF-IDF, stop words skipped."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    names = model.vectorizer_model.get_feature_names_out()
    row = np.asarray(model.c_tf_idf_[topic + model._outliers].todense()).ravel()
    best = [str(names[i]) for i in np.argsort(-row, kind="stable") if row[i] > 0]
    return [w for w in best if w not in ENGLISH_STOP_WORDS and " " not in w][:n]


def run_terms(run, docs: list[str]):
    """The run's documents as one binary document x word matrix and its vocabulary (the
    build's tokenisation and the run's own min_df): what coherence is scored over."""
    from explorer.build.summaries import document_terms
    from explorer.build.topics import TopicParams

    return document_terms(docs, min_df=TopicParams(**run.manifest.config.params).min_df)


def list_scorer(matrix, vocabulary):
    """NPMI and diversity of word lists over `matrix`'s documents, as a function of the
    lists, so every way of choosing words (ours, stock's) is scored alike."""
    from explorer.build.coherence import diversity, npmi

    column = {str(t): i for i, t in enumerate(vocabulary)}

    def scored(lists: list[list[str]]) -> dict:
        values = [npmi(matrix, [column[w] for w in words if w in column]) for words in lists]
        values = [v for v in values if v == v]
        return {
            "nodes": len(lists),
            "mean_npmi": round(float(np.mean(values)), 4) if values else None,
            "below_0": int(sum(v < 0 for v in values)),
            "diversity": round(diversity(lists), 4) if lists else None,
        }

    return scored


def _scorer(run, docs: list[str]):
    """`list_scorer` over the run's documents."""
    return list_scorer(*run_terms(run, docs))


def node_words(run) -> tuple[pd.DataFrame, dict[str, list[str]], list[str]]:
    """The run's nodes, each node's top words, and its leaves' ids (outliers left out)."""
    from explorer.view.store.nodes import level_ids

    nodes = run.table("nodes")
    leaves = set(level_ids(run.table("papers"), "subtopic").astype(str)) - {OUTLIER_ID}
    words = dict(zip(nodes["node_id"], nodes["top_words"].map(list), strict=True))
    return nodes, words, sorted(leaves)


def leaf_coherence(run, docs: list[str]) -> dict:
    """Mean NPMI and diversity of the run's leaves (bench/sample_quality.py)."""
    _, words, leaves = node_words(run)
    return _scorer(run, docs)([words[n] for n in leaves])


def _coherence(run, docs: list[str], topics: np.ndarray, model) -> dict:
    """Mean NPMI and diversity per level, ours and stock's, on one document x word matrix."""
    from explorer.build.coherence import TOP_WORDS

    scored = _scorer(run, docs)
    nodes, words, leaves = node_words(run)
    ours = {
        level: scored([words[n] for n in nodes.loc[nodes["level"] == level, "node_id"]])
        for level in ("area", "topic", "subtopic")
        if (nodes["level"] == level).any()
    }
    ours["leaf"] = scored([words[n] for n in leaves])
    stock = [_stock_top_words(model, t, TOP_WORDS) for t in sorted(set(topics.tolist()) - {-1})]
    return {"ours": ours, "stock": scored(stock)}


def label_words(text: str) -> set[str]:
    """A label's or keyword list's words, stop words out: what a keyword hit compares."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return {w for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS}


def keyword_words() -> dict[str, set[str]]:
    """WWW 2025's papers, by lower-cased title: the words of their author keywords."""
    keywords = {}
    for entry in json.loads((PAPERLISTS / "www" / "www2025.json").read_text()):
        text = entry.get("keywords") or ""
        text = "; ".join(text) if isinstance(text, list) else str(text)
        keywords[str(entry.get("title", "")).strip().lower()] = label_words(text)
    return keywords


def keyword_papers(run) -> list[tuple[int, str, set[str]]]:
    """The run's WWW papers that carry author keywords: (row, leaf id, keyword words)."""
    from explorer.view.store.nodes import level_ids

    keywords = keyword_words()
    papers = run.table("papers")
    leaf = level_ids(papers, "subtopic").astype(str)
    return [
        (i, node, words)
        for i, (title, node) in enumerate(zip(papers["title"], leaf, strict=True))
        if (words := keywords.get(str(title).strip().lower()))
    ]


def _keyword_agreement(run, topics: np.ndarray, model) -> dict:
    """Share of WWW papers whose author keywords share a word with their leaf's label."""
    nodes = run.table("nodes")
    label = dict(zip(nodes["node_id"], nodes["label"], strict=True))
    with_keywords = keyword_papers(run)
    ours = stock = stock_cut = 0
    for i, node, words in with_keywords:
        ours_label = label.get(node, "")
        ours += bool(words & label_words(ours_label))
        topic = int(topics[i])  # stock's outliers (-1) get no topic words: no credit
        stock_words = (
            " ".join(w for w, _ in (model.get_topic(topic) or [])[:10]) if topic >= 0 else ""
        )
        stock += bool(words & label_words(stock_words))
        stock_cut += bool(words & label_words(cut_to(stock_words, len(ours_label))))
    total = len(with_keywords)
    return {
        "papers_with_keywords": total,
        "ours_share": round(ours / max(total, 1), 4),
        "stock_share": round(stock / max(total, 1), 4),
        "stock_same_length_share": round(stock_cut / max(total, 1), 4),
    }


def cut_to(words: str, length: int) -> str:
    """`words`' first words that fit in `length` characters: stock's topic words as long as
    the label they are compared with (a longer list names more words and would hit more)."""
    kept = ""
    for word in words.split():
        candidate = f"{kept} {word}" if kept else word
        if len(candidate) > length:
            break
        kept = candidate
    return kept


def diversity_met(coherence: dict) -> bool:
    """Every level's diversity at least stock's (its one topic level) minus the margin."""
    floor = (coherence["stock"]["diversity"] or 0) - DIVERSITY_MARGIN
    return all((q["diversity"] or 0) >= floor for q in coherence["ours"].values())


def label_hit_met(keywords: dict) -> bool | None:
    """Ours at least stock's at the same length; None when stored before that was measured."""
    same_length = keywords.get("stock_same_length_share")
    return None if same_length is None else keywords["ours_share"] >= same_length


def main() -> None:
    """`python -m bench.quality [--corpora www,icml]`: every corpus, or the named ones (their
    entries replace the stored ones, each with its own date; the others are kept)."""
    import argparse

    from bench.table_cells import stored
    from explorer.build.labels.audit import run_faults

    every = {**CORPORA, "www": WWW}
    parser = argparse.ArgumentParser(prog="python -m bench.quality")
    parser.add_argument("--corpora", default=",".join(every), help="comma-separated")
    names = parser.parse_args().corpora.split(",")
    if unknown := [n for n in names if n not in every]:
        parser.error(f"unknown corpora {unknown}; known: {', '.join(every)}")
    require_shared(PAPERLISTS)
    cache = WORK / "quality"  # kept between runs: the embeddings are computed once
    cache.mkdir(parents=True, exist_ok=True)
    reuse_embeddings(cache)  # the real abstracts, when an earlier benchmark embedded them
    before = stored("quality") or {}  # each kept entry keeps its own date
    results = {n: {"when": before["when"], **e} for n, e in before.get("corpora", {}).items()}
    for name in names:
        inputs = every[name]
        print(f"Quality: {name}…", flush=True)
        run, _ = build_run(cache, f"q-{name}", [str(PAPERLISTS / i) for i in inputs])
        docs, vectors = run_vectors(run, cache)
        ours = our_scores(run, vectors)
        stock, topics, model = _stock(docs, vectors)
        entry = {
            "when": now(),
            "ours": ours,
            "stock": stock,
            "leaf_target_met": ours["largest_leaf_share"] <= LEAF_TARGET,
            "outlier_target_met": ours["outlier_share"] <= OUTLIER_TARGET,
        }
        entry["coherence"] = _coherence(run, docs, topics, model)
        leaf, stock_npmi = entry["coherence"]["ours"]["leaf"], entry["coherence"]["stock"]
        entry["npmi_target_met"] = (leaf["mean_npmi"] or -1) >= (stock_npmi["mean_npmi"] or -1)
        entry["diversity_target_met"] = diversity_met(entry["coherence"])
        faults = run_faults(run.table("papers"), run.table("nodes"))
        entry["label_faults"] = {"count": len(faults), "first": faults[:10]}
        if name == "www":
            entry["author_keywords"] = _keyword_agreement(run, topics, model)
            entry["label_hit_target_met"] = label_hit_met(entry["author_keywords"])
        results[name] = entry
        print(json.dumps(entry, indent=1), flush=True)
    write_results("quality", {"corpora": results})


if __name__ == "__main__":
    main()
