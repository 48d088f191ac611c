from explorer.corpus import MAX_EMBED_CHARS, Paper, dedupe, derive_title, normalise_text


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
