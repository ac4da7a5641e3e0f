"""Agreement rules not reached by the reference comparisons in test_agreement.py:
pairwise kappas with missing judgments, observed agreement by enumeration, the
undefined cases (NaN, quietly) and the refusals."""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import cohen_kappa_score

from shareval.metrics.agreement import (MISSING, cohen_kappa, fleiss_kappa,
                                        krippendorff_alpha_nominal, observed_agreement,
                                        pairwise_cohen)


@st.composite
def matrices(draw):
    n_ann = draw(st.integers(2, 4))
    n_items = draw(st.integers(1, 12))
    return np.array([[draw(st.integers(MISSING, 2)) for _ in range(n_items)]
                     for _ in range(n_ann)])


@settings(max_examples=200, deadline=None)
@given(matrices())
def test_pairwise_cohen_is_sklearn_on_the_items_both_labelled(m):
    out = pairwise_cohen(m)
    assert sorted(out) == list(itertools.combinations(range(m.shape[0]), 2))
    for (i, j), value in out.items():
        both = (m[i] != MISSING) & (m[j] != MISSING)
        if not both.any():
            assert math.isnan(value)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = cohen_kappa_score(m[i][both], m[j][both])
        assert (math.isnan(value) and math.isnan(ref)) or value == pytest.approx(ref, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(matrices())
def test_observed_agreement_is_the_share_of_agreeing_ordered_pairs(m):
    agree = total = 0
    for item in m.T:
        labels = [x for x in item if x != MISSING]
        for a, b in itertools.permutations(labels, 2):
            total += 1
            agree += a == b
    got = observed_agreement(m)
    assert math.isnan(got) if total == 0 else got == pytest.approx(agree / total)


def test_undefined_agreement_is_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(cohen_kappa([0, 0, 0], [0, 0, 0]))          # chance agreement 1
        assert math.isnan(cohen_kappa([0, MISSING], [MISSING, 1]))    # nothing in common
        assert math.isnan(fleiss_kappa([[1, 1], [1, 1]]))              # one label only
        assert math.isnan(fleiss_kappa(np.zeros((3, 0), dtype=int)))   # no items
        assert math.isnan(krippendorff_alpha_nominal(np.zeros((2, 0), dtype=int)))
        assert math.isnan(observed_agreement([[0, MISSING], [MISSING, 1]]))
    assert cohen_kappa([0, 1, MISSING, 1], [0, 1, 0, MISSING]) == 1.0


def test_refusals_say_why():
    with pytest.raises(ValueError, match=r"^expected a 2-d matrix: annotators x items$"):
        krippendorff_alpha_nominal([0, 1, 1])
    rule = r"^Fleiss' kappa needs the same number \(>= 2\) of judgments per item$"
    with pytest.raises(ValueError, match=rule):
        fleiss_kappa([[0, 1, 1]])                      # one judgment per item
    with pytest.raises(ValueError, match=rule):
        fleiss_kappa([[0, 1, 1], [1, 1, MISSING], [0, 0, 0]])
