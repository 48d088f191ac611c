"""The map's labels, placed as the map page places them: boxes at every try once per run and
level (`candidate_boxes`), then the greedy placement of those the view calls for."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.view.charts.maps import LabelLayout, map_labels
from explorer.view.map_layout import (
    ASSUMED_HEIGHT,
    ASSUMED_WIDTH,
    Label,
    candidate_boxes,
    moved,
    place_boxes,
)


def test_map_labels_never_overlap_and_areas_come_first():
    rng = np.random.default_rng(3)
    areas = [Label(*rng.uniform(0, 10, 2), f"area label {i}", "area") for i in range(10)]
    topics = [Label(*rng.uniform(0, 10, 2), f"topic phrase {i}", "topic") for i in range(200)]
    placed = place_boxes(candidate_boxes(areas + topics, (0, 10), (0, 10)))
    assert [i for i, _ in placed[:10]] == list(range(10))  # every area fits
    assert 15 <= len(placed) < 210  # as many as fit, not all
    boxes = [box for _, box in placed]
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[1] >= 0 and a[2] <= ASSUMED_WIDTH and a[3] <= ASSUMED_HEIGHT
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])
    # A placed label is drawn at its box's centre, in data coordinates.
    label = moved(areas[0], boxes[0], (0, 10), (0, 10))
    assert label.x == pytest.approx((boxes[0][0] + boxes[0][2]) / 2 / ASSUMED_WIDTH * 10)
    assert label.y == pytest.approx(10 - (boxes[0][1] + boxes[0][3]) / 2 / ASSUMED_HEIGHT * 10)


def test_areas_whose_centres_meet_are_all_named_and_finer_labels_stay_near_theirs():
    """Five areas and five topics centred on one point: every area label is placed (the
    first ring of nudges held three), no topic label strays beyond its first ring."""
    areas = [Label(5.0, 5.0, f"area label {i}", "area") for i in range(5)]
    topics = [Label(5.0, 5.0, f"topic phrase {i}", "topic") for i in range(5)]
    boxes = candidate_boxes(areas + topics, (0, 10), (0, 10))
    placed = place_boxes(boxes)
    assert [i for i, _ in placed if i < 5] == list(range(5))
    centre = np.array([ASSUMED_WIDTH / 2, ASSUMED_HEIGHT / 2])
    for i, box in placed:
        if i >= 5:  # a topic: within one box of its point
            middle = np.array([box[0] + box[2], box[1] + box[3]]) / 2
            assert (np.abs(middle - centre) <= [box[2] - box[0], box[3] - box[1]]).all()


def test_a_degenerate_map_places_no_labels():
    layout = LabelLayout(
        labels=[Label(1.0, 1.0, "a", "topic")],
        needs=[frozenset({"0"})],
        boxes=np.zeros((1, 9, 4)),
        extent=((1.0, 1.0), (0.0, 1.0)),  # no width: one paper, or every paper at one x
    )
    assert map_labels(layout, {"0"}) == []


def _greedy(boxes: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The placement rule spelled out: each candidate's first try inside the plot that
    overlaps no label placed before it."""
    out: list[tuple[int, np.ndarray]] = []
    for i, tries in enumerate(boxes):
        for box in tries:
            inside = box[0] >= 0 and box[1] >= 0 and box[2] <= ASSUMED_WIDTH
            if not (inside and box[3] <= ASSUMED_HEIGHT):
                continue
            if not any(
                box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for _, b in out
            ):
                out.append((i, box))
                break
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_areas=st.integers(0, 6), n_topics=st.integers(0, 60))
def test_placement_is_the_greedy_rule(seed, n_areas, n_topics):
    """The vectorised placement places the same labels in the same boxes as the rule read
    one try at a time."""
    rng = np.random.default_rng(seed)
    labels = [
        Label(*rng.uniform(0, 10, 2), "x" * int(rng.integers(3, 40)), level)
        for level, count in (("area", n_areas), ("topic", n_topics))
        for _ in range(count)
    ]
    boxes = candidate_boxes(labels, (0, 10), (0, 10))
    got, want = place_boxes(boxes), _greedy(boxes)
    assert [i for i, _ in got] == [i for i, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
