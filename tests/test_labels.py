"""Phrase labels for hierarchy nodes: verbatim candidates, sibling-relative ranking, nesting."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from explorer.build.labels import candidates
from explorer.build.labels import phrases as phrases_module
from explorer.build.labels.audit import occurs
from explorer.build.labels.nodes import label_nodes, label_sample
from explorer.build.labels.phrases import MAX_WORDS, candidate_phrases, phrase_table
from explorer.build.labels.selection import NO_PHRASES, NodeLabel

# area -> (phrase every child of the area shares, {child: its own terms})
AREAS = {
    "A0": (
        "image benchmarks",
        {
            "detection": ["object detectors", "anchor boxes", "bounding box regression",
                          "region proposals", "detection heads", "IoU thresholds",
                          "pedestrian datasets", "occluded instances", "localisation errors",
                          "hard negatives"],
            "segmentation": ["semantic masks", "pixel labels", "mask decoders",
                             "boundary refinement", "panoptic quality", "superpixel graphs",
                             "dense prediction", "label maps", "stuff classes",
                             "atrous convolution"],
            "video": ["temporal frames", "optical flow", "action clips", "frame sampling",
                      "motion cues", "tracking identities", "clip embeddings",
                      "pooled descriptors", "video transformers", "keyframe selection"],
        },
    ),
    "A1": (
        "text corpora",
        {
            "translation": ["target languages", "bilingual lexicons", "beam search",
                            "parallel sentences", "low-resource pairs", "BLEU gains",
                            "alignment heads", "back-translation", "subword units",
                            "decoder fluency"],
            "parsing": ["dependency trees", "syntactic heads", "constituency grammars",
                        "treebank annotations", "chart parsers", "arc scores",
                        "span representations", "transition systems", "head rules",
                        "parse accuracy"],
        },
    ),
    "A2": (
        "reward signals",
        {
            "robots": ["robotic arms", "joint torques", "wrist poses", "contact dynamics",
                       "sim-to-real transfer", "manipulation skills", "gripper sensors",
                       "motor commands", "legged locomotion", "tactile feedback"],
            "games": ["board games", "self-play agents", "Monte Carlo rollouts",
                      "opponent modelling", "game trees", "Atari scores", "league training",
                      "chess engines", "card decks", "poker hands"],
            "bandits": ["regret bounds", "arm pulls", "confidence intervals",
                        "Thompson sampling", "contextual features", "exploration bonuses",
                        "posterior draws", "elimination rounds", "arm budgets",
                        "cumulative losses"],
        },
    ),
}  # fmt: skip
FILLERS = ["careful analysis", "strong baselines", "public code", "ablation studies"]
DOCS_PER_CHILD = 12
EMPTY_AREA_DOCS = ["The 42 of it; and 7.", "", "We (a) do it - 3 of them, by $x^2$."]


def _abstract(terms: list[str], shared: str, k: int) -> str:
    """Eight of the child's ten terms (rotating), the area's shared phrase, and a filler."""
    own = [terms[(k + j) % len(terms)] for j in range(8)]
    if k % 3 == 0:
        own = [t.upper() if j % 2 else t.title() for j, t in enumerate(own)]
    return (
        f"We study {', '.join(own[:4])}. We test them on {shared} with {FILLERS[k % 4]}; "
        f"it improves {', '.join(own[4:])} (see Section {k + 1})."
    )


def _corpus() -> tuple[list[str], dict[str, np.ndarray], dict[str, str | None]]:
    """Three areas of 2-3 topics, one topic with a single subtopic, and one area of no words."""
    docs: list[str] = []
    members: dict[str, np.ndarray] = {}
    parent_of: dict[str, str | None] = {}
    for area, (shared, children) in AREAS.items():
        start = len(docs)
        for child, terms in children.items():
            ids = np.arange(len(docs), len(docs) + DOCS_PER_CHILD)
            docs += [_abstract(terms, shared, k) for k in range(DOCS_PER_CHILD)]
            members[child], parent_of[child] = ids, area
        members[area], parent_of[area] = np.arange(start, len(docs)), None
    members["video.0"], parent_of["video.0"] = members["video"][:5], "video"
    members["A3"], parent_of["A3"] = np.arange(len(docs), len(docs) + 3), None
    docs += EMPTY_AREA_DOCS
    return docs, members, parent_of


@pytest.fixture(scope="module")
def corpus():
    docs, members, parent_of = _corpus()
    return docs, members, parent_of, label_nodes(docs, members, parent_of)


# --- candidate_phrases ------------------------------------------------------------------


def test_candidates_are_verbatim_runs_of_words():
    phrases = candidate_phrases("We train convolutional neural networks (CNNs) on images.")
    assert "convolutional neural networks" in phrases
    assert {"cnns", "images", "neural networks"} <= phrases
    assert "networks cnns" not in phrases
    assert "cnns on images" not in phrases  # the bracket cuts the run


def test_candidates_never_start_or_end_with_a_stop_word():
    phrases = candidate_phrases("We report the accuracy of the model and a bag of words.")
    assert {"model", "accuracy", "bag of words"} <= phrases
    assert not {"of the model", "the model", "accuracy of", "we", "the"} & phrases


def test_candidates_are_lower_cased():
    assert candidate_phrases("Graph Neural NETWORKS") == {
        "graph", "neural", "networks", "graph neural", "neural networks", "graph neural networks"
    }  # fmt: skip


def test_internal_hyphens_stay_inside_words():
    phrases = candidate_phrases("Self-supervised learning, pre- and post-training")
    assert {"self-supervised", "self-supervised learning", "post-training"} <= phrases
    assert not {"self", "supervised", "supervised learning", "pre and post-training"} & phrases


def test_numbers_and_single_letters_are_dropped_and_cut_the_text():
    phrases = candidate_phrases("Trained for 100 epochs on 3d scenes with a b c loss 2-3 x")
    assert {"epochs", "3d scenes", "loss"} <= phrases
    assert not {"100", "100 epochs", "trained epochs", "2-3", "b", "c loss"} & phrases


@pytest.mark.parametrize(
    "text, joined",
    [
        ("graphs; neural networks", "graphs neural"),
        ("encoder/decoder models", "encoder decoder"),
        ('the "sparse" coding trick', "sparse coding"),
        ("kernel [12] methods", "kernel methods"),
        ("linear $O(n)$ time", "linear time"),
        ("smooth \\emph{convex} losses", "smooth convex"),
        ("fast &amp; robust", "fast robust"),
    ],
)
def test_punctuation_math_and_markup_cut_phrases(text, joined):
    phrases = candidate_phrases(text)
    assert set(joined.split()) <= phrases
    assert joined not in phrases
    assert not {"emph", "amp", "o(n)"} & phrases


def test_html_tags_are_stripped_not_kept_as_words():
    phrases = candidate_phrases("<p>We learn <i>sparse</i> coding</p>")
    assert {"sparse coding", "learn sparse coding"} <= phrases
    assert not {"p", "i"} & phrases


@st.composite
def _texts(draw, markup: bool = True) -> str:
    pieces = st.one_of(
        st.sampled_from(["the", "of", "a", "Neural", "self-supervised", "42", "x", "pre-", "1-2"]),
        st.text(alphabet="abcXYZé019-", min_size=1, max_size=6),
        st.sampled_from(list(",.;:()[]{}\"'/-_" + ("$\\" if markup else ""))),
    )
    tokens = draw(st.lists(pieces, max_size=25))
    separators = draw(st.lists(st.sampled_from([" ", "  ", "\n", ""]), min_size=len(tokens)))
    return "".join(t + s for t, s in zip(tokens, separators, strict=False))


def _obvious_phrases(text: str) -> set[str]:
    """The rules spelled out as loops, for texts without markup: what the numpy code must match."""
    found = set()
    for run in re.split(r"[^\w\s-]|_|(?<![^\W_])-|-(?![^\W_])", text.lower()):
        words = run.split()
        for i in range(len(words)):
            for j in range(i, min(i + MAX_WORDS, len(words))):
                gram = words[i : j + 1]
                if any(len(w) < 2 or w.replace("-", "").isdigit() for w in gram):
                    break
                if gram[0] not in ENGLISH_STOP_WORDS and gram[-1] not in ENGLISH_STOP_WORDS:
                    found.add(" ".join(gram))
    return found


@settings(max_examples=300, deadline=None)
@given(_texts())
def test_every_candidate_is_a_short_verbatim_phrase(text):
    flat = " ".join(text.lower().split())
    for phrase in candidate_phrases(text):
        words = phrase.split()
        assert 1 <= len(words) <= MAX_WORDS
        assert words[0] not in ENGLISH_STOP_WORDS and words[-1] not in ENGLISH_STOP_WORDS
        assert phrase in flat


@settings(max_examples=300, deadline=None)
@given(_texts(markup=False))
def test_candidates_are_exactly_the_runs_the_rules_allow(text):
    assert candidate_phrases(text) == _obvious_phrases(text)


# --- label_nodes ------------------------------------------------------------------------


def test_every_node_gets_a_label(corpus):
    _, members, _, labels = corpus
    assert set(labels) == set(members)
    assert all(isinstance(label, NodeLabel) for label in labels.values())


def test_label_phrases_occur_in_a_member_abstract(corpus):
    docs, members, _, labels = corpus
    for node, label in labels.items():
        texts = [docs[i] for i in members[node]]
        for phrase in label.phrases:
            assert any(occurs(phrase, t) for t in texts), (node, phrase)


def test_label_phrases_have_no_stop_word_at_either_end(corpus):
    for label in corpus[3].values():
        for phrase in label.phrases:
            words = phrase.split()
            assert words[0] not in ENGLISH_STOP_WORDS and words[-1] not in ENGLISH_STOP_WORDS


def test_no_phrase_nests_in_another_of_the_same_label(corpus):
    for label in corpus[3].values():
        sets = [frozenset(p.split()) for p in label.phrases]
        for i, a in enumerate(sets):
            assert not any(a <= b or b <= a for b in sets[i + 1 :]), label.phrases


def test_a_phrase_the_whole_parent_shares_labels_the_parent_not_the_children(corpus):
    labels = corpus[3]
    for area, (shared, children) in AREAS.items():
        assert labels[area].phrases[0] == shared
        for child in children:
            assert shared not in labels[child].phrases, child
            assert not set(shared.split()) & set(" ".join(labels[child].phrases).split())


def test_children_are_labelled_by_their_own_terms(corpus):
    for _, children in AREAS.values():
        for child, terms in children.items():
            lowered = {t.lower() for t in terms}
            assert set(corpus[3][child].phrases) <= lowered, child


def test_every_document_is_read_up_to_the_sample_size():
    assert label_sample({"a": np.arange(10)}, {"a": None}, 10, 10, seed=0) is None


def test_a_sample_keeps_each_finest_node_in_proportion_and_a_small_one_whole():
    # Area "A" holds topics "big" (2,000 papers) and "small" (40); 600 sit in no node.
    members = {"A": np.arange(2040), "big": np.arange(2000), "small": np.arange(2000, 2040)}
    parent_of = {"A": None, "big": "A", "small": "A"}
    rows = label_sample(members, parent_of, 2640, 264, seed=3)
    assert np.all(np.diff(rows) > 0)
    assert np.isin(members["small"], rows).all()  # below LABEL_FLOOR: whole
    assert np.isin(rows, members["big"]).sum() == 200  # its tenth
    assert np.isin(rows, np.arange(2040, 2640)).sum() == 60  # the unassigned's tenth
    assert np.array_equal(rows, label_sample(members, parent_of, 2640, 264, seed=3))
    assert not np.array_equal(rows, label_sample(members, parent_of, 2640, 264, seed=4))


def test_labels_from_a_sample_name_each_node_by_its_own_terms(corpus, monkeypatch):
    docs, members, parent_of, _ = corpus
    monkeypatch.setattr("explorer.build.labels.nodes.LABEL_FLOOR", 4)
    sampled = label_nodes(docs, members, parent_of, sample=len(docs) // 2, seed=1)
    assert set(sampled) == set(members)
    for area, (shared, children) in AREAS.items():
        assert sampled[area].phrases[0] == shared
        for child, terms in children.items():
            assert sampled[child].phrases
            assert set(sampled[child].phrases) <= {t.lower() for t in terms}, child


def test_a_sampled_node_keeps_its_whole_size_when_siblings_share_a_label():
    # Sampled, "a" (60 papers) and "b" (400) both keep the floor's 50: the whole sizes, not
    # the sampled ones (a tie, which the id would break), decide which keeps the label.
    docs = ["Spin glasses."] * 460
    members = {"a": np.arange(60), "b": np.arange(60, 460)}
    parent_of: dict[str, str | None] = {"a": None, "b": None}
    assert len(label_sample(members, parent_of, 460, 44, seed=0)) == 100
    labels = label_nodes(docs, members, parent_of, sample=44)
    assert labels["b"].short == "spin glasses"
    assert labels["a"].short == "spin glasses (a)"


def test_member_indices_outside_the_documents_are_refused_before_sampling():
    with pytest.raises(ValueError, match="member indices"):
        label_nodes(["a b"] * 3, {"n": np.array([-1, 0])}, {"n": None}, sample=1)


def test_short_and_long_sizes_and_form(corpus):
    for label in corpus[3].values():
        if not label.phrases:
            continue
        assert 1 <= len(label.short.split(", ")) <= 2
        assert len(label.phrases) <= 8
        assert label.long == ", ".join(label.phrases)
        assert label.short == ", ".join(label.phrases[: len(label.short.split(", "))])


def test_a_lone_node_is_ranked_against_the_corpus(corpus):
    _, _, _, labels = corpus
    assert labels["video.0"].phrases
    assert "image benchmarks" not in labels["video.0"].phrases


def test_a_node_without_usable_text_has_no_phrases(corpus):
    label = corpus[3]["A3"]
    assert label == NodeLabel(short=NO_PHRASES, long=NO_PHRASES, phrases=())


def test_labels_are_deterministic(corpus):
    docs, members, parent_of, labels = corpus
    shuffled = dict(reversed(list(members.items())))
    assert label_nodes(docs, members, parent_of) == labels
    assert label_nodes(docs, shuffled, parent_of) == labels


def test_phrases_do_not_run_across_documents():
    docs = ["quantum annealing", "spin glasses", "spin glasses"]
    labels = label_nodes(docs, {"all": np.arange(3)}, {"all": None})
    assert "annealing spin" not in labels["all"].phrases
    assert labels["all"].phrases == ("spin glasses",)


def test_a_phrase_in_one_document_suffices_only_for_a_tiny_node():
    docs = ["quantum annealing", "quantum annealing", "graph kernels", "spin glasses"]
    members = {"big": np.array([0, 1, 2]), "tiny": np.array([3])}
    labels = label_nodes(docs, members, {"big": None, "tiny": None})
    assert labels["big"].phrases == ("quantum annealing",)
    assert labels["tiny"].phrases == ("spin glasses",)


def test_links_are_not_phrases():
    phrases = candidate_phrases(
        "Code is available at https://github.com/x/y and www.example.org, see "
        "[papercopilot.com](https://papercopilot.com) or arxiv.org/abs/1."
    )
    assert not {"com", "papercopilot", "arxiv", "org", "abs"} & phrases
    assert not any(w in p for p in phrases for w in ("https", "github", "www", "example"))
    assert "code" in phrases


def test_plural_and_singular_do_not_both_label_a_node():
    from explorer.build.labels.selection import select

    label = select([("graphs", 3.0), ("graph", 2.9), ("graph neural", 1.5), ("nodes", 1.0)])
    assert label.phrases == ("graphs", "nodes")


def test_a_longer_phrase_that_extends_a_taken_one_replaces_it():
    from explorer.build.labels.selection import select

    label = select(
        [("answering", 3.0), ("graphs", 2.5), ("visual question answering", 2.0), ("x y", 0.5)]
    )
    assert label.phrases == ("visual question answering", "graphs", "x y")
    weak = select([("answering", 3.0), ("visual question answering", 1.0)])
    assert weak.phrases == ("answering",)  # too weak to replace it


# --- whole terms, one form per term, no boilerplate, distinct siblings -----------------

BOILERPLATE_SENTENCE = (
    "We propose a novel method that achieves better performance than existing methods."
)
# Each term sits between punctuation and the fill, so no longer run of words repeats.
TERMS = {
    "sampling": [
        "{x}: markov chain monte carlo.",
        "{x} posterior; markov chain monte carlo; a reproducing kernel hilbert space.",
        "Markov chain monte carlo, {x}.",
    ],
    "privacy": [
        "Generative adversarial networks (GANs), {x}, differential privacy.",
        "Differentially private GANs: {x}.",
        "{x}; generative adversarial networks; differential privacy.",
    ],
    "words": [
        "A word embedding: {x}; subword units.",
        "{x}, the word embedding.",
        "Word embedding, subword units: {x}.",
    ],
}  # fmt: skip
FILLS = ["gene expression", "galaxy surveys", "protein folding", "river flows"]


def _terms_corpus():
    """Three sibling topics under one area, each using its terms whole, and twin topics
    whose papers are word for word alike (so only the sibling rule tells them apart)."""
    docs, members, parent_of = [], {}, {}
    for node, templates in TERMS.items():
        start = len(docs)
        for k in range(12):
            fill = FILLS[k % len(FILLS)]
            docs.append(f"{templates[k % 3].format(x=fill)} {BOILERPLATE_SENTENCE}")
        members[node], parent_of[node] = np.arange(start, len(docs)), "A0"
    members["A0"], parent_of["A0"] = np.arange(len(docs)), None
    start = len(docs)
    twin = "Quantum annealing of spin glasses with tensor networks. " + BOILERPLATE_SENTENCE
    docs += [twin] * 8
    members["twin.0"], parent_of["twin.0"] = np.arange(start, start + 4), "twin"
    members["twin.1"], parent_of["twin.1"] = np.arange(start + 4, start + 8), "twin"
    members["twin"], parent_of["twin"] = np.arange(start, start + 8), "A1"
    members["A1"], parent_of["A1"] = np.arange(start, start + 8), None
    return docs, members, parent_of


@pytest.fixture(scope="module")
def terms_corpus():
    docs, members, parent_of = _terms_corpus()
    return docs, members, parent_of, label_nodes(docs, members, parent_of)


def assert_readable_labels(docs, members, parent_of, labels) -> None:
    """The label properties of issue 29, for any corpus and hierarchy."""
    from explorer.build.labels.audit import label_faults

    assert label_faults(docs, members, parent_of, labels) == []


def test_the_audit_reports_each_broken_rule():
    """The checker itself catches what it is for (so an empty report means something)."""
    from explorer.build.labels.audit import label_faults

    docs = ["We study markov chain monte carlo methods and zebrafish."] * 4
    members = {"A0": np.arange(4), "0": np.arange(2), "1": np.arange(2, 4)}
    parent_of = {"A0": None, "0": "A0", "1": "A0"}
    labels = {
        "A0": NodeLabel("zebrafish", "zebrafish", ("zebrafish",)),
        "0": NodeLabel("chain monte carlo", "x", ("chain monte carlo", "propose")),
        "1": NodeLabel("chain monte carlo", "x", ("zebrafish", "zebrafishes")),
    }
    faults = "\n".join(label_faults(docs, members, parent_of, labels))
    assert "0: 'chain monte carlo' is a fragment of" in faults
    assert "'propose' is boilerplate" in faults
    assert "'zebrafish' and 'zebrafishes' are one term" in faults
    assert "children of A0: 'chain monte carlo' twice" in faults


def test_planted_labels_have_every_readable_property(terms_corpus):
    assert_readable_labels(*terms_corpus)


def test_fixture_labels_have_every_readable_property(corpus):
    assert_readable_labels(*corpus)


def test_terms_longer_than_three_words_are_held_whole(terms_corpus):
    phrases = terms_corpus[3]["sampling"].phrases
    assert "markov chain monte carlo" in phrases
    assert not {"chain monte carlo", "markov chain monte", "markov chain", "monte carlo"} & set(
        phrases
    )
    assert not any(p in {"kernel hilbert", "kernel hilbert space"} for p in phrases)


def test_one_term_appears_once_in_a_label(terms_corpus):
    privacy = terms_corpus[3]["privacy"].phrases
    assert not {"gans", "generative adversarial networks"} <= set(privacy)
    assert not {"differential privacy", "differentially private"} <= set(privacy)
    words = terms_corpus[3]["words"].phrases
    assert "word embedding" in words
    assert not {"word", "embedding"} & set(words)


def test_boilerplate_every_paper_shares_labels_nothing(terms_corpus):
    for label in terms_corpus[3].values():
        assert not {"novel method", "better performance", "existing methods", "propose"} & set(
            label.phrases
        )


def test_twin_siblings_get_different_labels_and_the_parent_keeps_its_own(terms_corpus):
    labels = terms_corpus[3]
    assert labels["twin.0"].short != labels["twin.1"].short
    assert labels["twin.0"].phrases and labels["twin.1"].phrases
    # "twin" holds all of A1's papers: it is essentially that child, so they may agree.
    assert set(labels["twin"].phrases) == set(labels["A1"].phrases)


def test_abbreviation_and_expansion_are_one_term():
    from explorer.build.labels.terms import abbreviates, same_term

    assert abbreviates("gans", "generative adversarial networks")
    assert abbreviates("rkhs", "reproducing kernel hilbert space")
    assert abbreviates("ssl", "self-supervised learning")
    assert abbreviates("nmf", "non-negative matrix factorization")
    assert abbreviates("nnmf", "non-negative matrix factorization")
    assert not abbreviates("gans", "generative models")
    assert not abbreviates("rl", "reinforcement")
    assert same_term("differential privacy", "differentially private")
    assert same_term("subgroup fairness", "fair")
    assert not same_term("art", "artificial")
    assert same_term("graphs", "graph neural networks")
    assert not same_term("convex", "convolution")
    assert not same_term("generative models", "generalization bounds")


def test_an_abbreviation_gives_way_to_its_expansion():
    from explorer.build.labels.selection import select

    label = select(
        [("gans", 3.0), ("mode collapse", 2.0), ("generative adversarial networks", 1.0)]
    )
    assert label.phrases == ("generative adversarial networks", "mode collapse")


@pytest.mark.realbuild
def test_seed_corpus_labels_have_every_readable_property(seed_run):
    from explorer.build.labels.audit import label_faults, run_hierarchy
    from explorer.build.labels.nodes import label_nodes as relabel

    papers, nodes = seed_run.table("papers"), seed_run.table("nodes")
    docs, members, parent_of, built = run_hierarchy(papers, nodes)
    assert built == relabel(docs, members, parent_of)  # the build labelled what we check
    assert label_faults(docs, members, parent_of, built) == []


@pytest.mark.realbuild
def test_merge_tree_parents_are_named_without_boilerplate(planted_cache):
    """The Topics page's "First merged into" of a topic is the merge tree's node: named like any. The
    planted build (seed abstracts and planted subjects) has topics to merge whatever the
    seed."""
    from explorer.artifacts import open_run

    run = open_run(planted_cache, "planted")
    tree, vocab = run.table("hierarchy"), run.table("vocab").set_index("term")
    assert len(tree)
    for label in tree["parent_label"]:
        words = label.split(", ")
        # Words of the corpus's vocabulary, none boilerplate (a fallback is none of them).
        assert 1 <= len(words) <= 3 and set(words) <= set(vocab.index), label
        assert (vocab.loc[words, "specificity"] > 0).all(), label


@settings(deadline=None)
@given(
    st.lists(st.integers(0, 60), unique=True, max_size=30),
    st.lists(st.integers(0, 60), unique=True, max_size=30),
)
def test_sorted_common_is_the_intersection(a, b):
    a, b = np.array(sorted(a), np.int64), np.array(sorted(b), np.int64)
    assert np.array_equal(candidates._sorted_common(a, b), np.intersect1d(a, b))


def test_one_term_in_two_inflections_shares_a_form_and_columns_run_by_length():
    docs = ["markov decision process", "markov decision processes", "markov decision model"]
    table = phrase_table(docs)
    end = table.columns_up_to(2)
    assert np.all(table.length[:end] <= 2) and np.all(table.length[end:] > 2)
    col = {table.text(c): c for c in range(table.x.shape[1])}
    forms = candidates.term_forms(table, np.flatnonzero(table.length >= 2))
    assert forms[col["markov decision process"]] == forms[col["markov decision processes"]]
    assert forms[col["markov decision process"]] != forms[col["markov decision model"]]
    assert forms[col["markov decision"]] != forms[col["markov decision process"]]
    assert forms[col["markov"]] == -1


_WORDS = ["graph", "neural", "of", "the", "model", "x", "2024", "deep-learning", ",", "."]


def _reference_phrases(doc: str) -> set[str]:
    """Plain Python: every run of 1-MAX_WORDS words with no stop word at either end."""
    tokens = phrases_module._tokens(doc)
    found = set()
    for i in range(len(tokens)):
        for k in range(1, MAX_WORDS + 1):
            run = tokens[i : i + k]
            if len(run) < k or not all(phrases_module._is_word(t) for t in run):
                break
            if run[0] not in ENGLISH_STOP_WORDS and run[-1] not in ENGLISH_STOP_WORDS:
                found.add(" ".join(run))
    return found


@settings(deadline=None, max_examples=60)
@given(st.lists(st.lists(st.sampled_from(_WORDS), max_size=14), min_size=1, max_size=6))
def test_phrase_table_holds_each_documents_phrases_once_in_int32_indices(words):
    docs = [" ".join(w) for w in words]
    table = phrase_table(docs)
    for i, doc in enumerate(docs):
        row = table.x[i]
        assert {table.text(c) for c in row.indices} == _reference_phrases(doc)
        assert set(row.data.tolist()) <= {1}
    # Index arrays are int32 (half the memory of a 100,000-paper label sample's table).
    assert table.codes.dtype == np.int32 and table.x.indices.dtype == np.int32
    assert all(a.dtype == np.int32 for a in (*table.starts, *table.columns))


# --- pieces of sentences and what is said in passing (issue 52) ---------------------------


def test_repeats_count_a_phrase_said_twice_or_once_with_its_initials():
    from explorer.build.labels.phrases import Repeats

    docs = [
        "Restricted boltzmann machines (RBMs) are shallow; zebrafish.",
        "Restricted boltzmann machines, and restricted boltzmann machines again.",
        "Restricted boltzmann machines, once; zebrafish and zebrafish.",
        "No such term here.",
    ]
    table = phrase_table(docs)
    column = {table.text(j): j for j in range(table.x.shape[1])}
    repeats = Repeats(table)
    assert repeats.said_again(column["restricted boltzmann machines"]) == 2
    assert repeats.said_again(column["zebrafish"]) == 1
    assert repeats.said_again(column["shallow"]) == 0


SENTENCE_PIECES = ["we provide personalized recommendations", "a detection framework designed"]


def _pieces_corpus():
    """Two sibling topics whose papers write their subject phrase beside a verb in every
    abstract; one also repeats a term that starts with a verb-like word ("restricted")."""
    docs, members, parent_of = [], {}, {}
    for node, (subject, piece) in {
        "recs": ("session graphs", SENTENCE_PIECES[0]),
        "detect": ("phishing pages", SENTENCE_PIECES[1]),
    }.items():
        start = len(docs)
        for k in range(10):
            docs.append(f"For {subject}, {piece} to {FILLS[k % 4]}. Results on {subject}.")
        members[node], parent_of[node] = np.arange(start, len(docs)), "A0"
    start = len(docs)
    for k in range(10):
        docs.append(f"Restricted boltzmann machines (RBMs) of {FILLS[k % 4]}; restricted "
                    "boltzmann machines train slowly.")  # fmt: skip
    members["rbm"], parent_of["rbm"] = np.arange(start, len(docs)), "A0"
    members["A0"], parent_of["A0"] = np.arange(len(docs)), None
    return docs, members, parent_of


def test_no_label_phrase_starts_or_ends_with_a_verb_unless_the_corpus_repeats_it():
    from explorer.build.background import verb_edged

    docs, members, parent_of = _pieces_corpus()
    labels = label_nodes(docs, members, parent_of)
    for node in ("recs", "detect"):
        assert not [p for p in labels[node].phrases if verb_edged(p)], labels[node]
    assert "session graphs" in labels["recs"].phrases
    assert "phishing pages" in labels["detect"].phrases
    assert "restricted boltzmann machines" in labels["rbm"].phrases  # a term, said again
    assert_readable_labels(docs, members, parent_of, labels)


def test_the_audit_reports_a_piece_of_a_sentence_and_a_modifier_alone():
    from explorer.build.labels.audit import label_faults

    docs, members, parent_of = _pieces_corpus()
    labels = {n: NodeLabel("x", "x", ("zebrafish",)) for n in members}
    labels["recs"] = NodeLabel("x", "x", ("provide personalized recommendations",))
    labels["rbm"] = NodeLabel("y", "y", ("restricted boltzmann machines",))
    labels["detect"] = NodeLabel("x", "x", ("theoretical",))
    faults = "\n".join(label_faults(docs, members, parent_of, labels))
    assert "detect: 'theoretical' is a modifier alone" in faults
    assert "recs: 'provide personalized recommendations' starts or ends with a verb" in faults
    assert "restricted boltzmann machines' starts" not in faults


def test_a_word_said_in_passing_labels_nothing_its_papers_repeat_instead():
    """Every paper of a topic writes "findings" and "highlighting" once and its subject
    twice: the subject labels it (the venues' habit decides, on any list size)."""
    docs, members, parent_of = [], {}, {}
    for node, subject in {"a": "zebrafish imaging", "b": "galaxy surveys"}.items():
        start = len(docs)
        for k in range(6):
            docs.append(f"Our findings, highlighting {FILLS[k % 4]}: {subject}. "
                        f"More {subject}.")  # fmt: skip
        members[node], parent_of[node] = np.arange(start, len(docs)), "A0"
    members["A0"], parent_of["A0"] = np.arange(len(docs)), None
    labels = label_nodes(docs, members, parent_of)
    for node, subject in {"a": "zebrafish imaging", "b": "galaxy surveys"}.items():
        assert labels[node].phrases[0] == subject
    assert labels["A0"].phrases[0] not in {"findings", "highlighting"}


def _modifiers_corpus():
    """Sibling topics whose every paper writes a modifier the venues never write alone
    ("theoretical", "model-based") before varied words, and its subject once or twice."""
    docs, members, parent_of = [], {}, {}
    tails = ["analysis", "results", "guarantees"]
    for node, (modifier, subject) in {
        "theory": ("theoretical", "zebrafish imaging"),
        "rl": ("model-based", "reinforcement learning"),
    }.items():
        start = len(docs)
        for k in range(9):
            # "model-based reinforcement learning" in a third of the papers: no whole term
            # by itself, but the modifier's term once both are taken.
            joined = f"{modifier} {subject}" if node == "rl" and k % 3 == 0 else subject
            docs.append(f"{modifier.capitalize()} {tails[k % 3]} of {FILLS[k % 4]}; "
                        f"{modifier} {tails[(k + 1) % 3]}. On {joined}.")  # fmt: skip
        members[node], parent_of[node] = np.arange(start, len(docs)), "A0"
    members["A0"], parent_of["A0"] = np.arange(len(docs)), None
    return docs, members, parent_of


def test_a_modifier_labels_only_within_its_whole_term():
    from explorer.build.background import stands_alone

    docs, members, parent_of = _modifiers_corpus()
    labels = label_nodes(docs, members, parent_of)
    for node, label in labels.items():
        assert all(stands_alone(p) for p in label.phrases), (node, label)
    assert labels["theory"].phrases[0] == "zebrafish imaging"
    assert "model-based reinforcement learning" in labels["rl"].phrases
    assert_readable_labels(docs, members, parent_of, labels)


class _ModifierContext:
    """A selection context whose only modifiers are the ones given; "deep" and "learning"
    join into "deep learning"."""

    def __init__(self, modifiers: set[str]):
        self.modifiers = modifiers

    def trimmed(self, phrase):
        return phrase

    whole = trimmed

    def fits(self, phrase):
        return True

    def stands_alone(self, phrase):
        return phrase not in self.modifiers

    def joint(self, a, b):
        return "deep learning" if {a, b} == {"deep", "learning"} else None


def test_a_hidden_modifier_shows_once_a_candidate_names_it():
    """Taken hidden in its rank's place: a later whole term holding it takes that place."""
    from explorer.build.labels.selection import select

    context = _ModifierContext({"theoretical", "deep", "large language"})
    label = select([("theoretical", 3.0), ("galaxy", 2.5), ("deep", 2.0),
                    ("theoretical analysis", 1.0)], context)  # fmt: skip
    assert label.phrases == ("theoretical analysis", "galaxy")
    joined = select([("deep", 3.0), ("galaxy", 2.5), ("learning", 1.0)], context)
    assert joined.phrases == ("deep learning", "galaxy")  # in the modifier's place
    alone = select([("deep", 3.0)], context)
    assert alone.phrases == () and alone.short == "(no phrases)"


def test_only_a_phrase_naming_a_hidden_modifier_takes_its_place():
    from explorer.build.labels.selection import select

    context = _ModifierContext({"policy gradient", "large language"})
    # "policy" is a form of "policy gradient" but names less: it ranks where it ranks.
    label = select([("policy gradient", 3.0), ("galaxy", 2.0), ("policy", 0.2)], context)
    assert label.phrases == ("galaxy", "policy") and label.short == "galaxy"
    # A whole term clashing with a shown phrase and a hidden one replaces the shown one
    # (a better form of it) and the hidden one goes.
    both = select([("large language", 3.0), ("language models", 2.0),
                   ("large language models", 1.9)], context)  # fmt: skip
    assert both.phrases == ("large language models",)


def test_a_label_shows_at_most_its_long_size_whatever_joins_reveal():
    from explorer.build.labels.selection import LONG_PHRASES, select

    context = _ModifierContext({"deep"})
    nouns = ["galaxy", "river", "protein", "gene", "quasar", "coral", "glacier", "volcano"]
    words = [(w, 2.0 - k / 100) for k, w in enumerate(nouns[:LONG_PHRASES])]
    label = select([("deep", 3.0), *words, ("learning", 1.9)], context)
    assert len(label.phrases) == LONG_PHRASES
    assert label.phrases[0] == "deep learning"
