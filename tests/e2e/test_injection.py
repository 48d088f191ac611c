"""Untrusted text renders literally, everywhere, in a real browser.

Every payload kind (Markdown bold, links, images, underline, Streamlit colour/icon/emoji
syntax, raw HTML, iframes, scripts, `javascript:` links, LaTeX `\\href`, plotly and
template syntax, typographic arrows) goes into every text field of a real build, and, per
page, into one URL that sets every parameter the page reads. In Chromium we then assert:

- no element the payloads describe exists: no `img`, `a`, `strong`, `em`, `u`, `iframe`,
  `script`, KaTeX or coloured/bold span or `tspan` made from data, no Material icon;
- no request leaves for a host other than the server;
- each field's exact payload text is visible, literally, on at least one page.

The corpus is curated too (explorer.curation): four topics are renamed to
labels made of the same payloads, the hostile paper is moved into the first of them, and
one change matches no node (the Curate page lists it), so curated labels go through the
same checks as the data, on every page including Curate.
"""

from __future__ import annotations

import json
import shutil
from urllib.parse import quote, urlencode, urlparse

import pytest

from explorer import curation
from explorer.build.markup import plain_text
from explorer.build.pipeline import build
from explorer.build.sources import read_inputs
from explorer.view.text import WORD_JOINER, shorten
from tests.conftest import EDIT_KEY, SEED_DIR, build_config, topic_ids
from tests.e2e.conftest import ARTIFACTS, no_exception, start_server, stop_server, wait_for_app

pytestmark = [pytest.mark.e2e, pytest.mark.realbuild]

EVIL = "evil.example"
MARK = "PWN"  # every payload's visible text carries it, so what it became can be found
PAYLOADS = (
    "%{customdata} {{7*7}} ${x} <%= 1 %>",
    f"**{MARK}bold** __{MARK}under__",
    f"[{MARK}link](https://{EVIL}/l) https://{EVIL}/auto www.{EVIL}",
    f"![{MARK}img](http://{EVIL}/i.png)",
    f"<u>{MARK}u</u> <b>{MARK}b</b>",
    f":red[{MARK}red] :blue-background[{MARK}bg] :material/home: :smile: :+1:",
    f":material_lock: :streamlit: _www.{EVIL} x_https://{EVIL}/u a@{EVIL} ?x=:smile",
    f"<img src=http://{EVIL}/h.png onerror=alert(1)>{MARK}html",
    f"<iframe src=http://{EVIL}/f></iframe><script>alert(2)</script>",
    f"[{MARK}js](javascript:alert(3))",
    rf"$\href{{http://{EVIL}/x}}{{{MARK}tex}}$ $$x^2$$",
    "a -> b <- c -- d >= e",
    "# heading\n- item",
)
FIELDS = ("title", "authors", "abstract", "venue", "status", "track")
# One payload string per field, distinct, with every kind in it.
VALUES = {field: f"{field.upper()}-{MARK} " + " ".join(PAYLOADS) for field in FIELDS}
VALUES["abstract"] += " We study robustness of neural networks to adversarial examples."
URL_PAYLOAD = " ".join(PAYLOADS[:10])


def _curated_labels() -> tuple[str, ...]:
    """Every payload, in order, packed into as few curated labels as their length limit
    allows, each with a distinct visible prefix (a label holds no line break: record
    refuses control characters, so the heading payload is on one line there)."""
    labels: list[list[str]] = []
    for payload in (p.replace("\n", " ") for p in PAYLOADS):
        if labels and len(" ".join([*labels[-1], payload])) <= curation.MAX_LABEL_CHARS:
            labels[-1].append(payload)
        else:
            labels.append([f"CURATED{len(labels) + 1}-{MARK}", payload])
    return tuple(" ".join(parts) for parts in labels)


CURATED = _curated_labels()  # the hostile paper's topic, then three more topics
UNMATCHED_LABEL = f"UNMATCHED-{MARK} " + " ".join(PAYLOADS[:4])
# Every query parameter each page reads (app.py's `corpus` on all of them).
PAGE_PARAMS = {
    "": ["corpus", "level"],
    "topic_map": ["corpus", "level", "topics", "q", "status", "venue", "years", "minp",
                  "hide_outliers", "ask"],
    "topics": ["corpus", "level", "topic"],
    "trends": ["corpus", "level", "kw", "trend_topics", "counts", "by", "compare", "from", "to"],
    "papers": ["corpus", "topics", "q", "status", "venue", "years", "minp", "hide_outliers",
               "ask", "paper"],
    "curate": ["corpus"],
}  # fmt: skip

# Elements data must never become, and what in them would show it came from data.
FORBIDDEN_JS = """
(mark) => {
  const bad = [];
  const main = document.querySelector('[data-testid="stAppViewContainer"]') || document.body;
  const add = (el, why) => bad.push(`${why}: <${el.tagName.toLowerCase()}> ${el.outerHTML.slice(0, 160)}`);
  for (const el of main.querySelectorAll('img')) {
    if (!(el.getAttribute('src') || '').startsWith('data:') && !(el.src || '').startsWith(location.origin)) add(el, 'image');
  }
  for (const el of main.querySelectorAll('a[href]')) {
    const href = el.getAttribute('href');
    if (href.startsWith('javascript:') || href.includes('evil') || el.textContent.includes(mark)) add(el, 'link');
  }
  for (const el of main.querySelectorAll('iframe, script')) add(el, 'embedded');
  // Math renders only where md_math allows it (a paper's title and abstract): of the
  // payloads only $$x^2$$ passes its allowlist; \\href and the rest must stay text.
  for (const el of main.querySelectorAll('.katex, math')) {
    const katex = el.closest('.katex');
    const source = katex && katex.querySelector('annotation');
    if (!source || source.textContent !== 'x^2') add(el, 'embedded');
  }
  for (const el of main.querySelectorAll('strong, b, em, i, u, del, s, h1, h2, h4, h5, h6, li, blockquote, [data-testid="stMarkdownContainer"] code')) {
    if (el.textContent.includes(mark)) add(el, 'markup');
  }
  for (const el of main.querySelectorAll('span[style], span[class*="olor"]')) {
    if (el.textContent.includes(mark)) add(el, 'styled');
  }
  for (const el of main.querySelectorAll('[data-testid="stMarkdownContainer"] img, [data-testid="stMarkdownContainer"] svg')) {
    if (el.closest('[data-testid="stMarkdownContainer"]').textContent.includes(mark)) add(el, 'inline image');
  }
  for (const el of main.querySelectorAll('[data-testid="stIconMaterial"], [data-testid="stIconEmoji"]')) {
    if ((el.closest('[data-testid="stMarkdownContainer"]') || {}).textContent?.includes(mark)) add(el, 'icon');
  }
  for (const el of main.querySelectorAll('tspan, text')) {
    const styled = el.getAttribute('font-weight') || el.getAttribute('font-style') ||
      (el.getAttribute('style') || '').match(/font-weight:\\s*bold|font-style:\\s*italic|text-decoration/);
    // Data-made markup wraps a payload's inner text, which starts with the mark.
    if (styled && el.textContent.trim().startsWith(mark)) add(el, 'svg-markup');
  }
  return bad;
}
"""


@pytest.fixture(scope="module")
def hostile_cache(seed_cache, tmp_path_factory):
    """A real build: the seed abstracts (2025, two statuses), the planted subject groups
    (tests/planted.py: at least the four topics `_curate` renames, whatever the build
    seed) and two papers (2024) whose every text field holds every payload."""
    from tests.planted import planted_rows

    root = tmp_path_factory.mktemp("hostile")
    rows = [
        {"id": f"s{i}", "title": p.title, "abstract": p.abstract, "year": 2025,
         "status": "Oral" if i % 3 == 0 else "Poster", "venue": "ICML"}
        for i, p in enumerate(read_inputs([SEED_DIR]).papers)
    ]  # fmt: skip
    for n, suffix in (("h1", ""), ("h2", " Second copy.")):
        row = {field: VALUES[field] + (suffix if field == "abstract" else "") for field in FIELDS}
        rows.append({"id": n, "year": 2024, **row})
    rows += planted_rows()
    source = root / "hostile.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    cache = root / "cache"
    shutil.copytree(seed_cache / "embeddings", cache / "embeddings")
    run = build(
        build_config("hostile", [source]),
        cache_dir=cache,
        progress=False,
        log=lambda m: None,
    ).run
    papers = run.table("papers")
    # Ingest turns source markup into text (build/markup.py: the <u> and <b> tags go).
    hostile = papers[papers["abstract"] == plain_text(VALUES["abstract"])]
    assert len(hostile) == 1 and (papers["title"] == plain_text(VALUES["title"])).sum() == 2
    paper_id = str(hostile["paper_id"].iloc[0])
    topic, others = _curate(cache, run, paper_id)
    return cache, paper_id, topic, others


def _curate(cache, run, paper_id: str) -> tuple[str, list[str]]:
    """Curate the hostile corpus: rename four topics to the curated labels (topics, not
    areas: each renamed topic's page shows its label), move the hostile paper into the first of
    them (its detail shows the label), and add a change no node matches (the Curate page
    lists it). Returns the hostile paper's topic now, and the other three."""
    papers, nodes = run.table("papers"), run.table("nodes")
    topics = topic_ids(run)[: len(CURATED)]
    assert len(topics) == len(CURATED), (topics, "the planted groups give enough topics")
    fourth = topics[3]

    def record(op, paper_frame=papers, shown=None, run_id=run.run_id, **args):
        shown = curation.of_run(run).nodes if shown is None else shown
        target = curation.EditTarget(cache, "hostile", run_id, paper_frame)
        curation.record(target, shown, op, source="cli", **args)

    renamed = (topics[0], fourth, *topics[1:3])
    for node, label in zip(renamed, CURATED, strict=True):
        record("rename", node=node, label=label)
    if papers.set_index("paper_id").loc[paper_id, "topic_id"] != topics[0]:
        record("move", paper=paper_id, node=topics[0])
    # Topic 0 "was" one paper of each topic: no node of the run shares half its papers.
    strays = papers.assign(topic_id="9")
    strays.loc[papers.groupby("topic_id").head(1).index, "topic_id"] = "0"
    # Made on another run: found by its papers (not by id), and none share enough.
    record("rename", strays, nodes, run_id="an-older-run", node="0", label=UNMATCHED_LABEL)
    assert len(curation.of_run(run).unmatched) == 1
    return topics[0], topics[1:4]


@pytest.fixture(scope="module")
def hostile_server(hostile_cache):
    proc, url = start_server(hostile_cache[0])
    yield url
    stop_server(proc)


# An element's text with each KaTeX rendering put back as its source, between dollars.
KATEX_AS_SOURCE_JS = """
(el) => { const copy = el.cloneNode(true);
  copy.querySelectorAll('.katex').forEach((k) => {
    const source = k.querySelector('annotation');
    k.replaceWith('$' + (source ? source.textContent : '?') + '$');
  });
  return copy.innerText; }
"""
# What the page's select boxes show as chosen (an input's value, not in innerText).
SELECTED_JS = """
() => Array.from(document.querySelectorAll('[data-testid="stSelectbox"]'), (el) =>
  [el.innerText, ...Array.from(el.querySelectorAll('input'), (i) => i.value)].join('\\n')
).join('\\n')
"""


def _visit(page, url: str, requests: list[str], server: str) -> str:
    """Load `url`, check it, and return its visible text (with what its select boxes show:
    the Curate page's pickers show curated labels)."""
    page.goto(url)
    wait_for_app(page)
    no_exception(page)
    page.wait_for_timeout(1500)  # charts and late images have had their chance to load
    bad = page.evaluate(FORBIDDEN_JS, MARK)
    assert bad == [], f"{url}:\n" + "\n".join(bad)
    outside = [r for r in requests if urlparse(r).netloc != urlparse(server).netloc]
    assert outside == [], f"{url} made requests elsewhere: {outside}"
    assert page.dialogs == [], page.dialogs
    shown = page.inner_text("body") + "\n" + page.evaluate(SELECTED_JS)
    return shown + "\n" + page.evaluate(KATEX_AS_SOURCE_JS, page.query_selector("body"))


def _hover_this_paper(page) -> None:
    """Hover the detail page's star (this paper) so its plotly hover label is drawn."""
    star = page.locator(".js-plotly-plot .scatterlayer .trace").last.locator(".point").first
    star.hover(force=True)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)


def test_payloads_render_literally_on_every_page(hostile_server, hostile_cache, page):
    cache, paper_id, topic_id, renamed = hostile_cache
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    seen: dict[str, str] = {}
    for path, params in PAGE_PARAMS.items():
        pairs = [(p, URL_PAYLOAD) for p in params]
        if path == "curate":  # the host's page: it signs in with the link's key
            pairs.append(("edit_key", EDIT_KEY))
        query = urlencode(pairs, quote_via=quote)
        seen[f"{path}?<payloads>"] = _visit(
            page, f"{hostile_server}/{path}?{query}", requests, hostile_server
        )
        page.screenshot(path=str(ARTIFACTS / f"injection_{path or 'overview'}.png"), full_page=True)
    # The notice about an unknown ?paper= shows the parameter's value literally.
    notice = f"Ignoring ?paper={shorten(URL_PAYLOAD, 60)}: it is not in this corpus."
    assert notice in seen["papers?<payloads>"].replace(WORD_JOINER, "")
    detail = f"{hostile_server}/papers?{urlencode({'paper': paper_id}, quote_via=quote)}"
    seen["papers?paper=<hostile>"] = _visit(page, detail, requests, hostile_server)
    heading = page.locator('[data-testid="stMain"] h3').first
    # The title shows its text literally and its one allowed math span as math (md_math):
    # $$x^2$$ is rendered, $\href{...}$ is not.
    assert heading.locator(".katex").count() == 1
    title = heading.evaluate(KATEX_AS_SOURCE_JS)
    expected = plain_text(VALUES["title"]).replace("\n", " ").replace("$$x^2$$", "$x^2$")
    assert title.replace(WORD_JOINER, "") == expected
    _hover_this_paper(page)
    bad = page.evaluate(FORBIDDEN_JS, MARK)
    assert bad == [], bad
    hover = page.locator(".hoverlayer").text_content()
    # As stored (plain_text dropped the braces of "%{customdata}" and "${x}"), never expanded.
    stored_title = plain_text(VALUES["title"])
    assert stored_title.startswith("TITLE-PWN %customdata {{7*7}} $x <%= 1 %>"), stored_title
    assert stored_title[:40] in hover, hover
    page.screenshot(path=str(ARTIFACTS / "injection_paper.png"), full_page=True)
    seen["topics?topic=<its topic>"] = _visit(
        page, f"{hostile_server}/topics?topic={topic_id}", requests, hostile_server
    )
    for other in renamed:
        seen[f"topics?topic=<renamed {other}>"] = _visit(
            page, f"{hostile_server}/topics?topic={other}", requests, hostile_server
        )
    unmatched = next(
        c for c in curation.read(cache, "hostile") if c.get("label") == UNMATCHED_LABEL
    )
    assert curation.describe(unmatched) in seen["curate?<payloads>"].replace(WORD_JOINER, "")
    seen["trends?by=status"] = _visit(
        page, f"{hostile_server}/trends?by=status", requests, hostile_server
    )
    page.get_by_role("tab", name="Across classes").click()
    page.wait_for_timeout(1500)
    assert page.evaluate(FORBIDDEN_JS, MARK) == []
    ticks = page.locator(".js-plotly-plot .xtick").all_text_contents()
    assert VALUES["status"].replace("\n", " ") in ticks, ticks  # the whole value, literally
    page.screenshot(path=str(ARTIFACTS / "injection_trends_classes.png"), full_page=True)

    curated = {f"curated label {i}": label for i, label in enumerate(CURATED, 1)}
    stored = {f: plain_text(VALUES[f]) for f in ("title", "authors", "abstract")}  # ingest
    for field in ("title", "abstract"):  # md_math renders the one allowed span, as $x^2$
        stored[field] = stored[field].replace("$$x^2$$", "$x^2$")
    for field, value in {**VALUES, **stored, **curated}.items():
        # Markdown contexts keep "a -> b" literal with an invisible word joiner inside;
        # every other character is exactly the field's value.
        shown = [name for name, text in seen.items() if value in text.replace(WORD_JOINER, "")]
        flat = value.replace("\n", " ")
        shown += [name for name, text in seen.items() if flat in text.replace(WORD_JOINER, "")]
        assert shown, f"{field}'s payload is not visible literally on any page"
