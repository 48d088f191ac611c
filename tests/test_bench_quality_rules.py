"""bench/quality.py's verdicts (issue 52): diversity against stock's minus a margin, and the
WWW label hit against stock's words cut to the label's length."""

from bench.quality import DIVERSITY_MARGIN, cut_to, diversity_met, label_hit_met


def test_stock_words_are_cut_to_whole_words_within_the_length():
    assert cut_to("learning graph neural networks", 14) == "learning graph"
    assert cut_to("learning graph", 100) == "learning graph"
    assert cut_to("reinforcement", 5) == ""  # no word fits: nothing to hit


def test_every_level_needs_stocks_diversity_less_the_margin():
    stock = {"diversity": 0.734}
    within = {"area": {"diversity": 0.9}, "subtopic": {"diversity": 0.734 - DIVERSITY_MARGIN}}
    below = {**within, "topic": {"diversity": 0.734 - DIVERSITY_MARGIN - 0.001}}
    assert diversity_met({"ours": within, "stock": stock})
    assert not diversity_met({"ours": below, "stock": stock})


def test_the_label_hit_is_judged_only_once_stock_was_cut_to_its_length():
    assert label_hit_met({"ours_share": 0.45, "stock_same_length_share": 0.44}) is True
    assert label_hit_met({"ours_share": 0.43, "stock_same_length_share": 0.44}) is False
    assert label_hit_met({"ours_share": 0.45, "stock_share": 0.43}) is None  # stored before
