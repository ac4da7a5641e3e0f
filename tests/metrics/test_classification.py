"""Classification metrics equal scikit-learn's on random and edge-case inputs."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn import metrics as skm

from shareval.metrics.classification import classification_report, macro_prf, prf_from_counts

labels_st = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=40)


@st.composite
def pairs(draw):
    y_true = draw(labels_st)
    y_pred = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]),
                           min_size=len(y_true), max_size=len(y_true)))
    return y_true, y_pred


@settings(max_examples=300, deadline=None)
@given(pairs())
def test_report_equals_sklearn(data):
    y_true, y_pred = data
    r = classification_report(y_true, y_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = sorted(set(y_true) | set(y_pred))
        assert list(r.labels) == labels
        np.testing.assert_array_equal(r.confusion, skm.confusion_matrix(y_true, y_pred, labels=labels))
        p, rc, f, s = skm.precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
        np.testing.assert_allclose(r.precision, p, atol=1e-9)
        np.testing.assert_allclose(r.recall, rc, atol=1e-9)
        np.testing.assert_allclose(r.f1, f, atol=1e-9)
        np.testing.assert_array_equal(r.support, s)
        for avg in ("micro", "macro", "weighted"):
            p, rc, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, average=avg,
                                                              zero_division=0)
            assert r.averages[avg]["precision"] == pytest.approx(p, abs=1e-9)
            assert r.averages[avg]["recall"] == pytest.approx(rc, abs=1e-9)
            assert r.averages[avg]["f1"] == pytest.approx(f, abs=1e-9)
        assert r.accuracy == pytest.approx(skm.accuracy_score(y_true, y_pred), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=30))
def test_binary_macro_equals_sklearn_default(rows):
    """SV-Ident Task 1 per document: sklearn's average='macro' with its default zero_division."""
    y_true = [a for a, _ in rows]
    y_pred = [b for _, b in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = skm.precision_recall_fscore_support(y_true, y_pred, average="macro")[:3]
    assert macro_prf(y_true, y_pred) == pytest.approx(expected, abs=1e-9)


def test_zero_division_is_reported():
    r = classification_report(["a", "a"], ["b", "b"])
    assert "precision" in r.zero_division and "recall" in r.zero_division
    assert r.averages["macro"]["f1"] == 0.0


def test_single_class_everywhere_is_perfect():
    assert macro_prf([0, 0, 0], [0, 0, 0]) == (1.0, 1.0, 1.0)


def test_prf_from_counts_zero_division():
    p, r, f = prf_from_counts(0, 0, 0)
    assert (p, r, f) == (0.0, 0.0, 0.0)
    p, r, f = prf_from_counts(3, 1, 2)
    assert (p, r, f) == pytest.approx((0.75, 0.6, 6 / 9))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=1, max_size=40),
       st.integers(0, 5))
def test_best_f1_threshold_matches_sklearn_over_every_threshold(pairs, unscored):
    from shareval.metrics.classification import best_f1_threshold
    scores = np.array([p[0] / 6 for p in pairs])          # few values: many ties
    positive = np.array([p[1] for p in pairs])
    n_pos = int(positive.sum()) + unscored               # positives no score reaches

    def f1(t):      # sklearn's F1 of "score >= t", with the unscored positives as misses
        y_true = np.r_[positive, np.ones(unscored, bool)]
        y_pred = np.r_[scores >= t, np.zeros(unscored, bool)]
        return skm.f1_score(y_true, y_pred, zero_division=0)

    t, best = best_f1_threshold(scores, positive, n_pos)
    assert best == pytest.approx(max(f1(x) for x in scores))
    assert best == pytest.approx(f1(t))
    t2, near = best_f1_threshold(scores, positive, n_pos, plateau=0.1)
    assert near == pytest.approx(f1(t2)) and near >= best - 0.1 - 1e-12


def test_f1_threshold_is_the_best_or_the_middle_of_the_plateau():
    from shareval.metrics.classification import best_f1_threshold
    rng = np.random.default_rng(5)
    for _ in range(20):
        y = rng.random(300) < 0.2
        p = np.clip(y * 0.3 + rng.random(300) * 0.7, 0, 1)
        n_gold = int(y.sum()) + 5          # some gold pairs are never candidates
        f1_at = {t: 2 * np.sum(y & (p >= t)) / (np.sum(p >= t) + n_gold) for t in p}
        t, f1 = best_f1_threshold(p, y, n_gold)
        assert f1 == pytest.approx(max(f1_at.values())) == pytest.approx(f1_at[t])
        t2, f2 = best_f1_threshold(p, y, n_gold, plateau=0.02)
        assert f2 == pytest.approx(f1_at[t2]) and f2 >= f1 - 0.02
