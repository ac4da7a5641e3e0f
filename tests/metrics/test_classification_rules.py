"""Classification rules beyond the sklearn comparisons in test_classification.py:
a given label set, the zero-division report, the default positive count and the
plateau rule of best_f1_threshold."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn import metrics as skm

from shareval.metrics.classification import (best_f1_threshold, classification_report,
                                             confusion_matrix, encode_labels, macro_prf)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd")), min_size=1,
                max_size=30),
       st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
def test_a_given_label_set_drops_items_outside_it_like_sklearn(rows, labels):
    y_true = [t for t, _ in rows]
    y_pred = [p for _, p in rows]
    if y_true[0] not in labels:          # sklearn needs one label that occurs in y_true
        labels = [y_true[0]] + labels[:3]
    got, t, p = encode_labels(y_true, y_pred, labels)
    assert got.tolist() == labels
    cm = confusion_matrix(t, p, len(labels))
    np.testing.assert_array_equal(cm, skm.confusion_matrix(y_true, y_pred, labels=labels))
    r = classification_report(y_true, y_pred, labels)
    assert r.labels.tolist() == labels
    np.testing.assert_array_equal(r.confusion, cm)


def test_macro_uses_the_given_labels():
    # label "c" is never seen: its P/R/F are 0 and pull the macro average down
    p, r, f = macro_prf(["a", "b"], ["a", "b"], labels=["a", "b", "c"])
    assert (p, r, f) == pytest.approx((2 / 3, 2 / 3, 2 / 3))


def test_zero_division_is_reported_only_when_it_happens():
    assert classification_report(["a", "b"], ["a", "b"]).zero_division == []
    assert classification_report(["a", "b"], ["a", "a"]).zero_division == ["precision"]
    assert classification_report(["a", "a"], ["a", "b"]).zero_division == ["recall"]


def test_default_positive_count_is_the_positives_given():
    s = np.array([0.9, 0.8, 0.4, 0.3])
    y = np.array([True, False, True, False])
    assert best_f1_threshold(s, y) == best_f1_threshold(s, y, n_positive=2)
    assert best_f1_threshold(s, y)[1] == pytest.approx(2 * 2 / (3 + 2))


def test_plateau_picks_the_middle_of_the_thresholds_within_it():
    """Thresholds in descending order with F1 within `plateau` of the best: the one
    at index len // 2 is returned, with its own F1."""
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    y = np.array([True, True, False, True, False, False, False])
    f1 = {t: 2 * np.sum(y & (s >= t)) / (np.sum(s >= t) + y.sum()) for t in s}
    best = max(f1.values())
    for plateau in (0.05, 0.15, 0.3, 0.6):
        near = [t for t in s if f1[t] >= best - plateau]
        t, value = best_f1_threshold(s, y, plateau=plateau)
        assert t == near[len(near) // 2] and value == pytest.approx(f1[t]), plateau
    assert best_f1_threshold(s, y, plateau=0.0) == (0.6, pytest.approx(best))


def test_unequal_lengths_are_refused_with_both_shapes():
    with pytest.raises(ValueError, match=r"differ in length: \(2,\) vs \(3,\)"):
        classification_report(["a", "b"], ["a", "b", "c"])
