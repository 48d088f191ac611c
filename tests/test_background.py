"""The background table of phrase frequencies per venue group, and specificity against it."""

from __future__ import annotations

import gzip
import json

import pytest

from explorer.build import background as bg
from explorer.build import background_table as builder

# Every field writes these (the examples): boilerplate, learned from the table.
BOILERPLATE = ["propose", "novel", "demonstrate", "performance", "existing", "settings",
               "better", "proposed method", "experimental results", "state-of-the-art"]  # fmt: skip
# Subjects of one field or another, however common they are there.
SUBJECTS = ["neural networks", "reinforcement learning", "image", "language models",
            "bayesian inference", "domain adaptation", "graph neural networks",
            "markov chain monte carlo", "optimization"]  # fmt: skip


def test_the_shipped_table_is_compact_and_holds_counts_not_texts():
    assert bg.TABLE.stat().st_size < 250_000
    table = json.loads(gzip.decompress(bg.TABLE.read_bytes()))
    assert table["groups"] == list(builder.GROUPS)
    assert "paperlists" in table["source"]
    assert min(table["documents"]) > 300
    for phrase, counts in table["phrases"].items():
        assert 1 <= len(phrase.split()) <= 3, phrase
        assert len(counts) == len(table["groups"])
        sizes = table["documents"]
        assert all(isinstance(c, int) and 0 <= c <= n for c, n in zip(counts, sizes, strict=True))
        shares = sorted(c / n for c, n in zip(counts, sizes, strict=True))
        assert shares[len(shares) // 2] >= table["keep_share"], phrase


@pytest.mark.parametrize("phrase", BOILERPLATE)
def test_what_every_field_writes_is_boilerplate(phrase):
    assert bg.is_boilerplate(phrase)
    assert bg.specificity(phrase) == 0.0


@pytest.mark.parametrize("phrase", SUBJECTS)
def test_a_field_s_subject_is_not_boilerplate(phrase):
    assert not bg.is_boilerplate(phrase)
    assert 0.0 < bg.specificity(phrase) <= 1.0


def test_specificity_is_case_and_space_blind_and_bounded():
    assert bg.specificity("Neural  Networks") == bg.specificity("neural networks")
    values = bg.specificities(["propose", "neural networks", "zebrafish imaging"])
    assert values.tolist()[0] == 0.0 and values.tolist()[2] == 1.0
    assert ((values >= 0) & (values <= 1)).all()


def _write_lists(root, venue_texts: dict[str, list[str]]) -> None:
    for venue, texts in venue_texts.items():
        (root / venue).mkdir(parents=True)
        entries = [{"id": str(i), "abstract": t, "extra": 1} for i, t in enumerate(texts)]
        (root / venue / f"{venue}2020.json").write_text(json.dumps(entries))


def test_the_builder_keeps_phrases_the_typical_group_uses_and_only_counts(tmp_path):
    shared = "We propose a novel method."
    texts = {folder: [f"{shared} {folder} alone here.", shared, ""]
             for folders in builder.GROUPS.values() for folder in folders}  # fmt: skip
    texts["cvpr"].append("Convolutional features of images. We propose things.")
    for folder in ("nips", "cvpr", "acl"):  # three groups of five: the typical one
        texts[folder].append("Zebrafish imaging.")
    _write_lists(tmp_path / "lists", texts)
    out = tmp_path / "table.json.gz"
    builder.main([str(tmp_path / "lists"), "--out", str(out)])
    table = json.loads(gzip.decompress(out.read_bytes()))
    ml = len(builder.GROUPS["machine learning"])
    assert table["documents"] == [2 * ml + 1, 4, 3, 2, 2]  # empty abstracts are skipped
    assert table["phrases"]["propose"] == [2 * ml, 3, 2, 2, 2]
    assert table["phrases"]["novel method"] == [2 * ml, 2, 2, 2, 2]
    assert "convolutional features" not in table["phrases"]  # one group only
    assert table["phrases"]["zebrafish imaging"] == [1, 1, 1, 0, 0]  # most groups: kept


def test_the_builder_reads_recent_lists_only(tmp_path):
    """Boilerplate is how fields write now: lists before MIN_YEAR are not read."""
    texts = {f: ["We propose a novel method."] for g in builder.GROUPS.values() for f in g}
    _write_lists(tmp_path / "lists", texts)
    old = [{"abstract": "Connectionist perceptrons."}] * 5
    (tmp_path / "lists" / "nips" / f"nips{builder.MIN_YEAR - 1}.json").write_text(json.dumps(old))
    out = tmp_path / "table.json.gz"
    builder.main([str(tmp_path / "lists"), "--out", str(out)])
    table = json.loads(gzip.decompress(out.read_bytes()))
    assert "perceptrons" not in table["phrases"]
    assert table["documents"][0] == len(builder.GROUPS["machine learning"])
    assert not any("alone" in p for p in table["phrases"])
    first = out.read_bytes()
    builder.main([str(tmp_path / "lists"), "--out", str(out)])
    assert out.read_bytes() == first  # the same lists give the same bytes


def test_a_background_built_elsewhere_scores_by_its_own_counts(tmp_path):
    table = {"source": "test", "keep_share": 0.0, "groups": ["a", "b"], "documents": [99, 99],
             "phrases": {"common": [50, 50], "lopsided": [90, 5], "rare": [1, 1]}}  # fmt: skip
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(table).encode()))
    assert bg.is_boilerplate("common", path=path)
    assert not bg.is_boilerplate("lopsided", path=path)  # group a's subject
    assert 0 < bg.specificity("rare", path=path) < 1
    assert bg.is_boilerplate("common common", path=path)  # made only of boilerplate words
    assert bg.specificity("unknown words", path=path) == 1.0


# --- said in passing, and verbs at a label's edge (issue 52) ------------------------------

# What abstracts of every field say once and move on from (the seed-corpus words).
SAID_IN_PASSING = ["findings", "highlighting", "computationally efficient", "theoretical findings"]
# Subjects a paper names again, by name or by initials ("large language models (llms)").
REPEATED_SUBJECTS = ["diffusion models", "large language models", "reinforcement learning",
                     "conformal prediction", "gaussian processes", "regret"]  # fmt: skip


def test_the_shipped_table_counts_repeats_and_contexts_not_texts():
    table = json.loads(gzip.decompress(bg.TABLE.read_bytes()))
    assert table["usage_min"] == builder.USAGE_MIN and table["context_min"] == builder.CONTEXT_MIN
    for phrase, (used, again) in table["repeats"].items():
        assert 1 <= len(phrase.split()) <= builder.PHRASE_WORDS, phrase
        assert used >= builder.USAGE_MIN and 0 <= again <= used, phrase
    for word, (uses, after_subject, before_object) in table["contexts"].items():
        assert " " not in word and uses >= builder.CONTEXT_MIN, word
        assert 0 <= after_subject <= uses and 0 <= before_object <= uses, word


@pytest.mark.parametrize("phrase", SAID_IN_PASSING)
def test_a_phrase_said_in_passing_weighs_less_than_any_repeated_subject(phrase):
    assert bg.repeat_share(phrase) < bg.REPEATED
    assert 0 < bg.specificity(phrase) < 0.5
    assert bg.specificity(phrase) < min(bg.specificity(s) for s in REPEATED_SUBJECTS)


@pytest.mark.parametrize("phrase", REPEATED_SUBJECTS)
def test_a_subject_abstracts_repeat_keeps_its_whole_specificity(phrase):
    share = bg.repeat_share(phrase)
    assert share is None or share >= bg.REPEATED
    assert bg.specificity(phrase) == pytest.approx(bg._graded(*bg._shares()[phrase][:2])
                                                   if phrase in bg._shares() else 1.0)  # fmt: skip


def test_a_fragment_of_an_abbreviated_term_shares_its_repeats():
    """ "deep neural" is said again as the "dnns" of "deep neural networks"."""
    assert bg.repeat_share("deep neural") >= bg.repeat_share("deep neural networks")


@pytest.mark.parametrize("word", ["provide", "designed", "enhancing", "effectively", "propose"])
def test_verbs_participles_and_adverbs_are_learned_from_their_contexts(word):
    assert bg.verb_like(word)


@pytest.mark.parametrize("word", ["learning", "framework", "detection", "recommendations",
                                  "reinforcement", "deep", "diffusion", "personalized"])  # fmt: skip
def test_nouns_and_adjectives_are_not_verbs(word):
    assert not bg.verb_like(word)


@pytest.mark.parametrize(
    ("phrase", "edged"),
    [("detection framework designed", True), ("provide personalized recommendations", True),
     ("enhancing", True), ("reinforcement learning", False), ("deep learning", False),
     ("zebrafish imaging", False)],
)  # fmt: skip
def test_a_phrase_is_verb_edged_by_its_first_or_last_word(phrase, edged):
    assert bg.verb_edged(phrase) is edged


def test_a_table_without_usage_counts_judges_as_before(tmp_path):
    """A background built before the usage counts: nothing is said in passing, no verbs."""
    table = {"source": "test", "keep_share": 0.0, "groups": ["a", "b"], "documents": [99, 99],
             "phrases": {"lopsided": [90, 5]}}  # fmt: skip
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(table).encode()))
    assert bg.repeat_share("lopsided", path=path) is None
    assert bg.specificity("lopsided", path=path) == bg._graded(*bg._shares(path)["lopsided"][:2])
    assert not bg.verb_like("provide", path=path)


def test_the_builder_counts_repeats_by_name_or_initials_and_verb_contexts(tmp_path, monkeypatch):
    monkeypatch.setattr(builder, "USAGE_MIN", 2)
    monkeypatch.setattr(builder, "CONTEXT_MIN", 1)
    docs = [
        "Gaussian processes (GPs) model zebrafish. We provide the zebrafish atlas.",
        "Gaussian processes again; gaussian processes scale. To provide a zebrafish map.",
        "Gaussian processes once. The findings hold. We provide insight.",
        "Findings of note; zebrafish findings.",
        "The zebrafish findings.",
    ]
    counts = builder.usage(docs)
    repeats, contexts = counts["repeats"], counts["contexts"]
    assert repeats["gaussian processes"] == [3, 2]  # initials in the first, twice in the second
    assert repeats["findings"] == [3, 1]
    assert repeats["zebrafish"] == [4, 1]
    uses, after_subject, before_object = contexts["provide"]
    assert (uses, after_subject, before_object) == (3, 3, 2)
    assert contexts["zebrafish"][1:] == [0, 0]


# Issue 52: a modifier names nothing alone ("theoretical" analysis, "bayesian" inference);
# the subjects of the issue and nouns stand alone.
MODIFIERS = ["theoretical", "optimal", "bayesian", "deep", "large language", "model-based"]
ALONE = ["diffusion models", "large language models", "reinforcement learning",
         "conformal prediction", "regret", "tokens", "weather", "bayesian inference",
         "gaussian processes", "convolutional neural networks"]  # fmt: skip


@pytest.mark.parametrize("phrase", MODIFIERS)
def test_a_modifier_names_nothing_alone(phrase):
    assert bg.alone_share(phrase) < bg.ALONE
    assert 0 < bg.standing(phrase) < 1 and not bg.stands_alone(phrase)


@pytest.mark.parametrize("phrase", ALONE)
def test_a_subject_stands_alone(phrase):
    assert bg.standing(phrase) == 1 and bg.stands_alone(phrase)


def test_a_phrase_too_rare_to_tell_is_judged_by_its_last_word():
    """It ends where a modifier needs a noun; a phrase the venues write alone stands,
    whatever its last word ("policy gradient", though "gradient" is a modifier)."""
    assert bg.alone_share("zebrafish theoretical") is None
    assert not bg.stands_alone("zebrafish theoretical")
    assert bg.stands_alone("theoretical zebrafish")
    assert not bg.stands_alone("gradient")
    assert bg.alone_share("policy gradient") >= bg.ALONE
    assert bg.stands_alone("policy gradient")


def test_keyword_weights_scale_a_modifier_by_its_alone_share():
    weights = bg.keyword_weights(MODIFIERS + ALONE)
    specific = bg.specificities(MODIFIERS + ALONE)
    for i, phrase in enumerate(MODIFIERS):
        assert weights[i] == pytest.approx(specific[i] * bg.alone_share(phrase) / bg.ALONE)
    assert (weights[len(MODIFIERS) :] == specific[len(MODIFIERS) :]).all()


def test_the_shipped_table_counts_uses_before_another_word_not_texts():
    """Every phrase whose repeats it counts (built by this code: a stale table fails)."""
    table = json.loads(gzip.decompress(bg.TABLE.read_bytes()))
    assert set(table["modifies"]) == set(table["repeats"])
    for phrase, counts in table["modifies"].items():
        assert len(counts) == 2 and 0 <= counts[1] <= counts[0], phrase


def test_a_table_without_modifier_counts_lets_every_phrase_stand(tmp_path):
    table = {"source": "test", "keep_share": 0.0, "groups": ["a"], "documents": [9],
             "phrases": {}}  # fmt: skip
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(table).encode()))
    assert bg.alone_share("theoretical", path=path) is None
    assert bg.standing("theoretical zebrafish", path=path) == 1.0


def test_the_builder_counts_uses_right_before_another_content_word(monkeypatch):
    monkeypatch.setattr(builder, "USAGE_MIN", 2)
    docs = [
        "Theoretical analysis of zebrafish. A theoretical result; zebrafish theoretical.",
        "Theoretical guarantees for zebrafish imaging (ZI), the zebrafish of 2024.",
        "Zebrafish imaging, at last.",
    ]
    modifies = builder.usage(docs)["modifies"]
    # "theoretical" before "analysis", "result", "guarantees"; alone before "."
    assert modifies["theoretical"] == [4, 3]
    # "zebrafish" before "theoretical" and "imaging" (twice); alone before "." and "of".
    assert modifies["zebrafish"] == [5, 3]
    assert modifies["zebrafish imaging"] == [2, 0]  # before "(" and ","
