from explorer.build.corpus import MAX_EMBED_CHARS, Paper, dedupe, derive_title, normalise_text


def test_normalise_strips_tags_entities_and_whitespace():
    assert (
        normalise_text("We <em>propose</em>\n  a &amp; b  <br/>method") == "We propose a & b method"
    )


def test_normalise_keeps_math_and_caps_length():
    assert normalise_text("a $O(T)$ bound") == "a $O(T)$ bound"
    assert len(normalise_text("x" * (MAX_EMBED_CHARS + 50))) == MAX_EMBED_CHARS


def test_derive_title_first_sentence_short():
    assert derive_title("Short first sentence. Then more text here.") == "Short first sentence"


def test_derive_title_cuts_at_word_boundary_near_90():
    text = " ".join(["word"] * 60) + "."
    title = derive_title(text)
    assert title.endswith("…")
    body = title[:-1]
    assert len(body) <= 90 and not body.endswith(" ") and text.startswith(body)
    assert body.split()[-1] == "word"


def test_dedupe_merges_exact_duplicates_after_normalisation():
    a = Paper(paper_id="a", title="A", abstract="Same <em>text</em> here")
    b = Paper(paper_id="b", title="B", abstract="Same   text here")
    c = Paper(paper_id="c", title="C", abstract="Other text")
    corpus = dedupe([a, b, c])
    assert [p.paper_id for p in corpus.papers] == ["a", "c"]
    assert corpus.merged == [("a", "b")]


def test_dedupe_is_independent_of_input_order():
    import random

    papers = [
        Paper(paper_id=f"id{i % 7}", title=f"t{i}", abstract=f"abstract {i % 5} of a paper")
        for i in range(20)
    ]
    expected = dedupe(papers)
    for seed in range(5):
        shuffled = papers[:]
        random.Random(seed).shuffle(shuffled)
        again = dedupe(shuffled)
        assert again.papers == expected.papers and again.merged == expected.merged
    # The rule: the copy with the smallest paper id is kept.
    assert [p.paper_id for p in expected.papers] == sorted(p.paper_id for p in expected.papers)
    assert expected.papers[0].paper_id == "id0"


def test_tex_text_commands_are_dropped_but_math_stays():
    from explorer.build.markup import plain_text

    text = r"We \emph{robustly} fit {\em deep} nets, \textbf{\textit{nested}}; $\emph{m}$ \em on"
    assert plain_text(text) == r"We robustly fit deep nets, nested; $\emph{m}$ on"
    assert plain_text(r"an \item and \(\textit{x}\)") == r"an \item and \(\textit{x}\)"
