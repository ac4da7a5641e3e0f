"""Agreement coefficients equal krippendorff's, scikit-learn's and statsmodels'."""
import math
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as sm_fleiss

from shareval.metrics.agreement import (MISSING, cohen_kappa, fleiss_kappa,
                                        krippendorff_alpha_nominal, observed_agreement)


def same_or_both_undefined(ours, ref):
    if math.isnan(ref):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(ref, abs=1e-9)


@st.composite
def matrices(draw, missing=True):
    n_ann = draw(st.integers(2, 5))
    n_items = draw(st.integers(1, 30))
    values = st.integers(MISSING if missing else 0, 3)
    return np.array([[draw(values) for _ in range(n_items)] for _ in range(n_ann)])


@settings(max_examples=300, deadline=None)
@given(matrices())
def test_alpha_equals_krippendorff_package(m):
    ours = krippendorff_alpha_nominal(m)
    data = np.where(m == MISSING, np.nan, m.astype(float))
    pairable = np.sum((m != MISSING).sum(axis=0) >= 2)
    values = set(m[m != MISSING].tolist())
    assume(pairable >= 1 and len(values) >= 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                                 value_domain=sorted(values))
    same_or_both_undefined(ours, ref)


def test_alpha_undefined_cases_are_nan():
    assert math.isnan(krippendorff_alpha_nominal([[0, 0], [0, 0]]))       # one value only
    assert math.isnan(krippendorff_alpha_nominal([[0, MISSING], [MISSING, 1]]))  # nothing pairable


def test_alpha_worked_example_krippendorff_2011():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example: 0.743
    n = np.nan
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    m = np.where(np.isnan(data), MISSING, np.nan_to_num(data)).astype(int)
    assert krippendorff_alpha_nominal(m) == pytest.approx(0.743, abs=5e-4)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40))
def test_cohen_equals_sklearn(rows):
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = cohen_kappa_score(a, b)
    same_or_both_undefined(cohen_kappa(a, b), ref)


@settings(max_examples=300, deadline=None)
@given(matrices(missing=False))
def test_fleiss_equals_statsmodels(m):
    assume(m.shape[0] >= 2)
    table, _ = aggregate_raters(m.T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm_fleiss(table, method="fleiss")
    same_or_both_undefined(fleiss_kappa(m), ref)


def test_fleiss_worked_example():
    # Fleiss (1971) example as tabulated on Wikipedia: 10 items, 14 raters, 5 categories: 0.210
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
              [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
              [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    m = np.array([[c for c, n in enumerate(row) for _ in range(n)] for row in counts]).T
    assert fleiss_kappa(m) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_rejects_unequal_judgment_counts():
    with pytest.raises(ValueError):
        fleiss_kappa([[0, 1], [MISSING, 1]])


def test_observed_agreement():
    assert observed_agreement([[0, 1], [0, 0]]) == pytest.approx(0.5)
