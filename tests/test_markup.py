"""Source markup becomes the text its authors meant (issue 52, item 3): the forms the paper
lists carry, found by a scan of ../shared/data/paperlists, each turned into text; math spans
kept as written; text without markup untouched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.build.corpus import Paper, clean_display_text
from explorer.build.markup import plain_text


@pytest.mark.parametrize(
    ("source", "text"),
    [
        (r"an edge {—} and {–} too", "an edge — and – too"),
        (r"under \textitsafe rules", "under safe rules"),  # a command fused with its word
        (r"40\% of 3\&4, a\_b, \#1", "40% of 3&4, a_b, #1"),
        (r"Schr{\"o}dinger, \"{U}ber, \'{\i}, \`a, \^o, \~n", "Schrödinger, Über, í, à, ô, ñ"),
        (r"\c{c}a, \v s, {\ss}, \o, \aa", "ça, š, ß, ø, å"),
        ("a &amp; b, &lt;i&gt;x&lt;/i&gt;, <i>y</i><br>z, <sub>2</sub>", "a & b, x, y z, 2"),
        ("a <b and c> d, AT&T", "a <b and c> d, AT&T"),  # not tags, not entities
        (r"{G}aussian {BERT}, {0, 1}", "Gaussian BERT, {0, 1}"),  # sets keep their braces
        (r"pages 10--20, a---b, state-of-the-art", "pages 10–20, a—b, state-of-the-art"),
        (r"as in \cite{smith20}. See~\citep[p.~3]{a,b}", "as in. See"),
        (r"code at \url{https://x.org/a_b}", "code at https://x.org/a_b"),
        (r"costs \$5 and \$10", "costs $5 and $10"),
        (r"\emph{\textbf{deep}} nets, {\em robust}", "deep nets, robust"),
        # Left alone: math written without dollars, other commands, loose ampersands.
        (
            r"O(\sqrt{T}), \mathcal{O}(n), x^{10}, \frac{1}{2}",
            r"O(\sqrt{T}), \mathcal{O}(n), x^{10}, \frac{1}{2}",
        ),
        (r"\textuparrow and \urlstyle", r"\textuparrow and \urlstyle"),
        ("B&regular, &param; and &#233;", "B&regular, &param; and é"),
        (r"save $5 with \emph{x} and $\frac{a}{b}$", r"save $5 with x and $\frac{a}{b}$"),
        ("a\x00b\x01c\x02", "abc"),  # the placeholders plain_text uses
    ],
)
def test_markup_becomes_text(source, text):
    assert plain_text(source) == text


@pytest.mark.parametrize(
    "math",
    [r"$O(\sqrt{T})$", r"$\textbf{x}_{i}$", r"$$\sum_i {\"o}$$", r"\(\emph{a}\)", r"\[a--b\]"],
)
def test_math_spans_stay_as_written(math):
    assert plain_text(f"regret {math} with \\emph{{low}} cost") == f"regret {math} with low cost"


@given(st.text(alphabet=st.characters(blacklist_characters="\\{}<&-\x00\x01\x02")))
def test_text_without_markup_is_untouched(text):
    assert plain_text(text) == text


@given(st.text(alphabet="\\{}$<>&;-'\"`^~=.ab io%_#c"))
def test_any_text_gives_text(text):
    assert isinstance(plain_text(text), str)  # never raises, whatever the markup


def test_ingest_cleans_title_abstract_and_authors_and_keeps_the_id():
    paper = Paper(
        "p1", r"On {G}aussian \emph{processes}", r"We fit 90\% {—} fast", authors=r"G{\"o}del"
    )
    clean = clean_display_text(paper)
    assert (clean.title, clean.abstract, clean.authors) == (
        "On Gaussian processes",
        "We fit 90% — fast",
        "Gödel",
    )
    assert clean.paper_id == "p1"
    assert clean_display_text(clean) is clean  # nothing left to change: the same object


@pytest.mark.parametrize(
    "text",
    ["-" + " " * 20000, "{" * 10000 + "x" + "}" * 10000, r"\(" * 10000, r"\emph{" * 5000 + "x"],
)
def test_adversarial_texts_end(text):
    """Inputs that made a regex quadratic or a loop deep: each finishes (bounded work)."""
    assert isinstance(plain_text(text), str)
