import numpy as np
import pytest

from explorer.build.topics import OUTLIER, assign_outliers, default_params
from explorer.errors import InputError


def test_params_scale_with_corpus_size():
    small, mid, large = default_params(38), default_params(3000), default_params(11000)
    assert small.min_topic_size == 3 and small.n_neighbors == 12
    assert small.min_topic_size < mid.min_topic_size < large.min_topic_size
    assert mid.n_neighbors == 15 and mid.min_df == 2
    assert default_params(3000, min_topic_size=25).min_topic_size == 25


def test_too_small_corpus_says_the_minimum():
    with pytest.raises(InputError, match="at least 10 are needed"):
        default_params(4)


def test_assign_outliers_only_when_close_enough():
    emb = np.array(
        [[1, 0], [0.99, 0.1], [0, 1], [0.1, 0.99], [0.995, 0.05], [-1, -1]], dtype=np.float32
    )
    labels = np.array([0, 0, 1, 1, OUTLIER, OUTLIER])
    out, threshold = assign_outliers(emb, labels, 0.05)
    assert out.tolist() == [0, 0, 1, 1, 0, OUTLIER]
    assert 0.9 < threshold < 1.0
